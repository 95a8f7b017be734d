package testbin

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
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

// Alive reports whether pid is a live process. A zombie is not alive: on
// machines whose init does not reap orphans, killed grandchildren linger as
// zombies.
func Alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := bytes.Fields(stat[bytes.LastIndexByte(stat, ')')+1:])
	return len(f) > 0 && f[0][0] != 'Z' && f[0][0] != 'X'
}
