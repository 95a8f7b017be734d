package mcpclient_test

import "syscall"

func syscallGetpgid(pid int) (int, error) { return syscall.Getpgid(pid) }
