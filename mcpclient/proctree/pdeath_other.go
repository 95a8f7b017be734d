//go:build unix && !linux && !darwin

package proctree

import "syscall"

// SetParentDeathSignal is a no-op on this system.
func SetParentDeathSignal(*syscall.SysProcAttr) {}
