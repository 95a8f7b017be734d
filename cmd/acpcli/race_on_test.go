//go:build race

package main

// raceEnabled reports whether the tests run with the race detector; the
// integration test then builds acpcli with it too.
const raceEnabled = true
