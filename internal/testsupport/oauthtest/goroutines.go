package oauthtest

import (
	"runtime"
	"strings"
	"testing"
)

// FlightGoroutines counts the goroutines of this process that run an
// oauth.Client's token flight or wait for one, by their stacks matched
// against frames (oauth.FlightFrames(); a parameter, since package
// oauth's own tests use this package): 0 once every flight has ended and
// no request waits for a token. A leak check with it first asserts
// MustSeeFlight while a flight is under way, so that it cannot pass by
// matching nothing.
func FlightGoroutines(frames []string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		for _, f := range frames {
			if strings.Contains(g, f) {
				count++
				break
			}
		}
	}
	return count
}

// MustSeeFlight fails t unless FlightGoroutines finds a flight's
// goroutine: call it while the token endpoint hangs, before waiting for
// FlightGoroutines to reach 0.
func MustSeeFlight(t testing.TB, frames []string) {
	t.Helper()
	if FlightGoroutines(frames) == 0 {
		t.Fatalf("no goroutine of a token flight while the token endpoint hangs (matching %q): the leak check would match nothing", frames)
	}
}
