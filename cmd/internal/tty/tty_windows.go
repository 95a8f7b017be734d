package tty

import (
	"os"

	"golang.org/x/sys/windows"
)

// noEcho turns the console f's echo off and returns what turns it back
// on.
func noEcho(f *os.File) (func() error, error) {
	h := windows.Handle(f.Fd())
	var mode uint32
	if err := windows.GetConsoleMode(h, &mode); err != nil {
		return nil, err
	}
	if err := windows.SetConsoleMode(h, mode&^windows.ENABLE_ECHO_INPUT); err != nil {
		return nil, err
	}
	return func() error { return windows.SetConsoleMode(h, mode) }, nil
}

// reraise ends the process as an interrupt would (Windows cannot send a
// signal to itself).
func reraise(os.Signal) { os.Exit(130) }
