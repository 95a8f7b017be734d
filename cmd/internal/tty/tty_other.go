//go:build !linux && !windows && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package tty

import (
	"errors"
	"os"
)

func noEcho(*os.File) (func() error, error) {
	return nil, errors.New("turning a terminal's echo off is not supported on this system")
}

func reraise(os.Signal) { os.Exit(130) }
