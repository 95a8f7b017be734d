package main

import (
	"fmt"
	"slices"
	"testing"
)

// recorder is a stand-in watchdog that logs the records it is handed.
type recorder struct{ log []string }

func (r *recorder) Watch(pgid int, token string) {
	r.log = append(r.log, fmt.Sprintf("watch %d %s", pgid, token))
}
func (r *recorder) Unwatch(pgid int) { r.log = append(r.log, fmt.Sprintf("unwatch %d", pgid)) }

// TestGuardQueuesUntilUp: records that arrive before the watchdog is up
// reach it, in order, once it is; later ones go straight to it; with no
// watchdog they are dropped and nothing blocks.
func TestGuardQueuesUntilUp(t *testing.T) {
	g := newGuard()
	g.Watch(10, "a")
	g.Watch(11, "b")
	g.Unwatch(10)
	rec := &recorder{}
	g.ready(nil, rec)
	g.Watch(12, "c")
	want := []string{"watch 10 a", "watch 11 b", "unwatch 10", "watch 12 c"}
	if !slices.Equal(rec.log, want) {
		t.Errorf("records %q, want %q", rec.log, want)
	}

	none := newGuard()
	none.Watch(1, "x")
	none.ready(nil, nil)
	none.Unwatch(1)
	select {
	case <-none.up:
	default:
		t.Error("a guard without a watchdog is not ready")
	}
}
