//go:build !unix

package proctree

// Reap does nothing: only Unix has zombies to reap.
func Reap(int) {}
