// Package tty tells whether a file is a terminal, for the commands of this
// module (colour on a terminal, line editing): a terminal is what answers
// the terminal ioctl, not any character device (/dev/null is one); that is
// golang.org/x/term's IsTerminal. It also turns a terminal's echo off
// while a secret is typed, which x/term does not offer as such: its
// ReadPassword turns the echo off only once it reads, after the question
// is shown, so a key pasted as the question appears could be echoed;
// WithoutEcho turns it off before the question.
package tty

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"
)

// IsTerminal reports whether f is a terminal (a console on Windows).
func IsTerminal(f *os.File) bool {
	return term.IsTerminal(int(f.Fd()))
}

// WithoutEcho runs read with the echo of the terminal f turned off, so
// that what is typed (a password, an API key) is not shown, and turns it
// back on when read returns. An interrupt or termination signal meanwhile
// turns the echo back on before it takes effect: the process ends as the
// signal would have ended it. Not safe for concurrent use on one terminal.
func WithoutEcho(f *os.File, read func() error) error {
	restore, err := noEcho(f)
	if err != nil {
		return fmt.Errorf("turning the terminal's echo off: %w", err)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	handled := make(chan struct{})
	go func() {
		defer close(handled)
		select {
		case sig := <-sigs:
			_ = restore()
			signal.Reset(sig)
			reraise(sig)
		case <-done:
		}
	}()
	err = read()
	close(done)
	signal.Stop(sigs)
	<-handled
	if rerr := restore(); err == nil && rerr != nil {
		return fmt.Errorf("turning the terminal's echo back on: %w", rerr)
	}
	return err
}
