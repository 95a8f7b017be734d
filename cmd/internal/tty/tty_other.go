//go:build !linux && !windows && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package tty

import "os"

// IsTerminal reports false: this system's terminals are not recognised.
func IsTerminal(*os.File) bool { return false }
