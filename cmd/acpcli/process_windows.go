//go:build windows

package main

import (
	"os"
	"syscall"
)

// ownGroup starts the agent in a new process group, so that Ctrl-C at the
// console reaches acpcli only.
func ownGroup() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// groupAlive reports false: on Windows the agent's own job objects stop
// what it started.
func groupAlive(int) bool { return false }

// killGroup kills the agent process.
func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
