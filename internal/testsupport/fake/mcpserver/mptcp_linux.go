package main

import (
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// dialMPTCP connects a Multipath TCP socket to addr (an IPv4 host:port)
// with the system calls themselves: net.Dialer's MPTCP falls back to
// plain TCP on any error, which would hide a refused socket.
func dialMPTCP(addr string) error {
	ap, err := net.ResolveTCPAddr("tcp4", addr)
	if err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, unix.IPPROTO_MPTCP)
	if err != nil {
		return os.NewSyscallError("socket", err)
	}
	defer unix.Close(fd)
	sa := &unix.SockaddrInet4{Port: ap.Port}
	copy(sa.Addr[:], ap.IP.To4())
	return os.NewSyscallError("connect", unix.Connect(fd, sa))
}
