//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"
)

// newSession is the SysProcAttr starting a process in a new session
// (setsid).
func newSession() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// notifyUSR1 relays SIGUSR1 to c.
func notifyUSR1(c chan<- os.Signal) { signal.Notify(c, syscall.SIGUSR1) }
