//go:build !linux && !windows && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package tty

import (
	"errors"
	"os"
)

// IsTerminal reports false: this system's terminals are not recognised.
func IsTerminal(*os.File) bool { return false }

func noEcho(*os.File) (func() error, error) {
	return nil, errors.New("turning a terminal's echo off is not supported on this system")
}

func reraise(os.Signal) { os.Exit(130) }
