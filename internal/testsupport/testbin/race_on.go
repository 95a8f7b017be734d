//go:build race

package testbin

// raceEnabled is whether this test binary runs with the race detector:
// the binaries it builds then get it too.
const raceEnabled = true
