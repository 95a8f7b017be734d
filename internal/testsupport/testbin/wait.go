package testbin

import (
	"testing"
	"time"
)

// WaitFor polls cond, a cheap check of state outside the test's control
// (a file another process writes, a process table), until it holds, and
// fails the test if that takes longer than 30 s. Where a signal exists
// (an event, a channel), wait on that instead.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
