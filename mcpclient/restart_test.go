package mcpclient_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/mcpclient"
)

// A server that crashes on every call is restarted at most MaxRestarts
// times within the window, even though each restart succeeds; then it is
// failed with a reason wrapping ErrGaveUp.
func TestCrashEveryCallGivesUp(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	events := newEventLog()
	opts.OnEvent = events.add
	rec, lines := recordFile(t)
	spec := stdio("crashy", "-record", rec)
	spec.MaxRestarts = 3
	m := start(t, opts, spec)
	for i := 0; i <= spec.MaxRestarts; i++ {
		events.wait(t, "ready", func(e mcpclient.Event) bool {
			st, _ := m.Status("crashy")
			return st.State == mcpclient.StateReady || st.State == mcpclient.StateFailed
		})
		if st, _ := m.Status("crashy"); st.State == mcpclient.StateFailed {
			t.Fatalf("failed after %d crashes, want %d: %s", i, spec.MaxRestarts+1, st.Error)
		}
		if _, err := m.CallTool(context.Background(), "crashy", "crash", nil); !errors.Is(err, mcpclient.ErrServerExited) {
			t.Fatalf("crash call %d: %v", i, err)
		}
		events.wait(t, "not ready", func(e mcpclient.Event) bool {
			st, _ := m.Status("crashy")
			return st.State != mcpclient.StateReady
		})
	}
	e := events.wait(t, "failed", func(e mcpclient.Event) bool { return e.Status.State == mcpclient.StateFailed })
	if !errors.Is(e.Status.Err, mcpclient.ErrGaveUp) || !errors.Is(e.Status.Err, mcpclient.ErrServerExited) {
		t.Errorf("failed status: %+v", e.Status)
	}
	if got := len(recordedPIDs(t, lines(), "started")); got != spec.MaxRestarts+1 {
		t.Errorf("%d processes started, want %d", got, spec.MaxRestarts+1)
	}
}

// A call while a server waits to restart says so, typed.
func TestCallWhileRestarting(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	opts.Backoff = func(int) time.Duration { return time.Hour }
	events := newEventLog()
	opts.OnEvent = events.add
	m := start(t, opts, stdio("r"))
	if _, err := m.CallTool(context.Background(), "r", "crash", nil); !errors.Is(err, mcpclient.ErrServerExited) {
		t.Fatalf("crash call: %v", err)
	}
	events.wait(t, "waiting to restart", func(e mcpclient.Event) bool {
		return e.Status.State == mcpclient.StateRestarting
	})
	_, err := m.CallTool(context.Background(), "r", "echo", map[string]any{"text": "x"})
	if !errors.Is(err, mcpclient.ErrRestarting) || !errors.Is(err, mcpclient.ErrNotReady) {
		t.Fatalf("call while restarting: %v, want ErrRestarting", err)
	}
	if !strings.Contains(err.Error(), "attempt 1 of 5") {
		t.Errorf("error does not say which attempt: %v", err)
	}
}

// A call made right after its server died, before the Manager has moved
// the server on, is not sent down the dead connection: it waits for the
// server's next state and says it, typed.
func TestCallRightAfterCrash(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	opts.Backoff = func(int) time.Duration { return time.Hour }
	m := start(t, opts, stdio("r"))
	for i := range 20 {
		if _, err := m.CallTool(context.Background(), "r", "crash", nil); !errors.Is(err, mcpclient.ErrServerExited) {
			t.Fatalf("crash call: %v", err)
		}
		_, err := m.CallTool(context.Background(), "r", "echo", map[string]any{"text": "x"})
		if !errors.Is(err, mcpclient.ErrRestarting) {
			t.Fatalf("run %d: call right after the crash: %v, want ErrRestarting", i, err)
		}
		if err := m.Restart(context.Background(), "r"); err != nil {
			t.Fatal(err)
		}
		mustReady(t, m, "r")
	}
}
