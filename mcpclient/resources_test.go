package mcpclient_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/mcpclient"
)

// A subscribed resource's notifications/resources/updated reaches OnEvent
// as EventResourceUpdated; unsubscribe reaches the server.
func TestSubscribeResourceUpdated(t *testing.T) {
	t.Parallel()
	f := subscribedCounter(t)
	m, events, lines, ctx := f.m, f.events, f.lines, f.ctx
	if !hasLine(lines(), "subscribe test://counter") {
		t.Fatalf("server saw no subscribe: %q", lines())
	}
	call(t, m, "s", "bump_counter", nil)
	e := events.wait(t, "resource updated", func(e mcpclient.Event) bool { return e.Kind == mcpclient.EventResourceUpdated })
	if e.Server != "s" || e.URI != "test://counter" {
		t.Fatalf("event %+v, want server s, uri test://counter", e)
	}
	if err := m.Unsubscribe(ctx, "s", "test://counter"); err != nil {
		t.Fatalf("Unsubscribe: %v", err)
	}
	if !hasLine(lines(), "unsubscribe test://counter") {
		t.Fatalf("server saw no unsubscribe: %q", lines())
	}
}

// A server without resource subscriptions or completions gets no request:
// the error is ErrUnsupported.
func TestSubscribeUnsupported(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	m := start(t, opts, stdio("s"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.Subscribe(ctx, "s", "test://hello"); !errors.Is(err, mcpclient.ErrUnsupported) {
		t.Fatalf("Subscribe: %v, want ErrUnsupported", err)
	}
	if _, err := m.CompletePrompt(ctx, "s", "greet", "name", "", nil); !errors.Is(err, mcpclient.ErrUnsupported) {
		t.Fatalf("CompletePrompt: %v, want ErrUnsupported", err)
	}
	if _, err := m.CompletePrompt(ctx, "nope", "greet", "name", "", nil); !errors.Is(err, mcpclient.ErrUnknownServer) {
		t.Fatalf("CompletePrompt of an unknown server: %v, want ErrUnknownServer", err)
	}
}

func TestCompletePrompt(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	m := start(t, opts, stdio("s", "-live"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got, err := m.CompletePrompt(ctx, "s", "greet", "name", "", nil)
	if err != nil || !slices.Equal(got, []string{"Alice", "Bob"}) {
		t.Fatalf("CompletePrompt greet.name \"\": %q, %v", got, err)
	}
	got, err = m.CompletePrompt(ctx, "s", "greet", "name", "b", nil)
	if err != nil || !slices.Equal(got, []string{"Bob"}) {
		t.Fatalf("CompletePrompt greet.name \"b\": %q, %v", got, err)
	}
}

// ResourceServer finds the server of a listed resource and of a URI a
// template matches, and no server for anything else.
func TestResourceServer(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	m := start(t, opts, stdio("a", "-live"), stdio("b"))
	for uri, want := range map[string]string{"test://counter": "a", "test://hello": "a", "test://items/42": "a"} {
		if got, ok := m.ResourceServer(uri); !ok || got != want {
			t.Errorf("ResourceServer(%q) = %q, %v; want %q", uri, got, ok, want)
		}
	}
	for _, uri := range []string{"test://nothing", "file:///etc/passwd", ""} {
		if got, ok := m.ResourceServer(uri); ok {
			t.Errorf("ResourceServer(%q) = %q, want none", uri, got)
		}
	}
}

// logging/setLevel follows the Manager's logger: the lowest level it
// records.
func TestSetLevelFollowsLogger(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		level slog.Level
		want  string
	}{{slog.LevelDebug, "setLevel debug"}, {slog.LevelWarn, "setLevel warning"}} {
		opts, _ := fastOpts(t)
		opts.Logger = slog.New(slog.NewTextHandler(&testbin.SyncBuffer{}, &slog.HandlerOptions{Level: tc.level}))
		rec, lines := recordFile(t)
		start(t, opts, stdio("s", "-live", "-record", rec))
		if !hasLine(lines(), tc.want) {
			t.Errorf("logger at %v: server record %q, want a line %q", tc.level, lines(), tc.want)
		}
	}
}

// A subscription outlives a restart of its server: the new process is
// subscribed again, its updates arrive, and after Unsubscribe the next
// restart makes none.
func TestSubscriptionRenewedAfterRestart(t *testing.T) {
	t.Parallel()
	f := subscribedCounter(t)
	m, events, lines, ctx := f.m, f.events, f.lines, f.ctx
	restart := func() {
		t.Helper()
		from := len(events.snapshot())
		if _, err := m.CallTool(ctx, "s", "crash", nil); !errors.Is(err, mcpclient.ErrServerExited) {
			t.Fatalf("crash call: %v", err)
		}
		events.waitFrom(t, from, "ready again", func(e mcpclient.Event) bool {
			return e.Server == "s" && e.Status.State == mcpclient.StateReady
		})
	}
	restart()
	testbin.WaitFor(t, "the restarted server subscribed again", func() bool {
		return testbin.Count(lines(), "subscribe test://counter") == 2
	})
	call(t, m, "s", "bump_counter", nil)
	events.wait(t, "resource updated after the restart", func(e mcpclient.Event) bool {
		return e.Kind == mcpclient.EventResourceUpdated && e.URI == "test://counter"
	})
	if err := m.Unsubscribe(ctx, "s", "test://counter"); err != nil {
		t.Fatalf("Unsubscribe: %v", err)
	}
	restart()
	if n := testbin.Count(lines(), "subscribe test://counter"); n != 2 {
		t.Fatalf("after Unsubscribe and a restart the server saw %d subscribes, want still 2", n)
	}
}

// A server replaced by Reconfigure (its spec changed) is subscribed again
// to what the old one was: the subscriptions belong to the name.
func TestSubscriptionKeptAcrossReconfigure(t *testing.T) {
	t.Parallel()
	f := subscribedCounter(t)
	m, events, rec, lines, ctx := f.m, f.events, f.rec, f.lines, f.ctx
	changed := stdio("s", "-live", "-record", rec)
	changed.Env = map[string]string{"WHO": "changed"}
	restarted, err := m.Reconfigure(ctx, []mcpclient.ServerSpec{changed})
	if err != nil || len(restarted) != 1 {
		t.Fatalf("Reconfigure: %v %v", restarted, err)
	}
	if n := testbin.Count(lines(), "subscribe test://counter"); n != 2 {
		t.Fatalf("the new server saw %d subscribes in all, want 2:\n%s", n, strings.Join(lines(), "\n"))
	}
	from := len(events.snapshot())
	call(t, m, "s", "bump_counter", nil)
	events.waitFrom(t, from, "resource updated from the new server", func(e mcpclient.Event) bool {
		return e.Kind == mcpclient.EventResourceUpdated && e.URI == "test://counter"
	})
}

// counterFixture is a -live test server "s" (recording to rec) whose
// test://counter the Manager m is subscribed to, its events in events;
// ctx bounds the test's requests.
type counterFixture struct {
	m      *mcpclient.Manager
	events *eventLog
	rec    string
	lines  func() []string
	ctx    context.Context
}

func subscribedCounter(t *testing.T) counterFixture {
	t.Helper()
	opts, _ := fastOpts(t)
	f := counterFixture{events: newEventLog()}
	opts.OnEvent = f.events.add
	f.rec, f.lines = recordFile(t)
	f.m = start(t, opts, stdio("s", "-live", "-record", f.rec))
	mustReady(t, f.m, "s")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	f.ctx = ctx
	if err := f.m.Subscribe(ctx, "s", "test://counter"); err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	return f
}
