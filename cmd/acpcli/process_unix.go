//go:build unix

package main

import (
	"errors"
	"syscall"
)

// ownGroup puts the agent in a process group of its own.
func ownGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// groupAlive reports whether any process is left in process group pgid.
func groupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// killGroup sends SIGKILL to process group pgid.
func killGroup(pgid int) {
	if pgid <= 1 {
		return // kill(2) would address every process, or acpcli's own group
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}
