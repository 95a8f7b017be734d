//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package tty

import (
	"os"

	"golang.org/x/sys/unix"
)

// noEcho turns the terminal f's echo off (the newline too) and returns
// what turns it back on.
func noEcho(f *os.File) (func() error, error) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, err
	}
	t := *old
	t.Lflag &^= unix.ECHO | unix.ECHONL
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &t); err != nil {
		return nil, err
	}
	return func() error { return unix.IoctlSetTermios(fd, ioctlSetTermios, old) }, nil
}

// reraise delivers sig to this process again, its handling reset to the
// default (which ends the process for SIGINT and SIGTERM).
func reraise(sig os.Signal) {
	if s, ok := sig.(unix.Signal); ok {
		_ = unix.Kill(unix.Getpid(), s)
	}
}
