package main

import (
	"os"
	"syscall"
)

// newSession: Windows has no sessions to start a process in; nil.
func newSession() *syscall.SysProcAttr { return nil }

// notifyUSR1: Windows has no SIGUSR1; c never receives.
func notifyUSR1(chan<- os.Signal) {}
