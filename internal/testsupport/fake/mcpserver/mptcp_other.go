//go:build !linux

package main

import "errors"

// dialMPTCP: Multipath TCP is tested on Linux only.
func dialMPTCP(string) error { return errors.New("mptcp: Linux only") }
