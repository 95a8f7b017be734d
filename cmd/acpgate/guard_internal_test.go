package main

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/acpgate/acpgate/mcpclient/watchdog"
)

// TestGuardStartsWatchdogOnFirstRecord: nothing is started until a server
// is recorded; the first record starts the watchdog once, and a guard
// whose watchdog cannot start drops records without blocking; after close
// no watchdog is started.
func TestGuardStartsWatchdogOnFirstRecord(t *testing.T) {
	t.Parallel()
	starts := 0
	g := &guard{start: func() (*watchdog.Watchdog, error) {
		starts++
		return nil, errors.New("no watchdog here")
	}}
	if starts != 0 {
		t.Fatal("the watchdog started before any record")
	}
	g.Watch(10, "a")
	g.Unwatch(10)
	g.Watch(11, "b")
	if starts != 1 {
		t.Fatalf("watchdog started %d times, want once", starts)
	}

	idle := &guard{start: func() (*watchdog.Watchdog, error) {
		t.Error("close started a watchdog")
		return nil, nil
	}}
	idle.close(slog.New(slog.DiscardHandler))
	idle.Watch(1, "x")
}
