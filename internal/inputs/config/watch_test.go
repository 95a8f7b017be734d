package config_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/inputs/config"
)

// watchEvent is one callback of a watcher, or a poll.
type watchEvent struct {
	kind string // "change", "error" or "poll"
	cfg  *config.Config
	err  error
}

// startWatch runs a watcher on path and returns its events, after its
// baseline is taken.
func startWatch(t *testing.T, path string) <-chan watchEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	events := make(chan watchEvent, 1024)
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		config.WatchPolled(ctx, path, time.Millisecond,
			func(c *config.Config, _ []config.Warning) { events <- watchEvent{kind: "change", cfg: c} },
			func(err error) { events <- watchEvent{kind: "error", err: err} },
			func() {
				select {
				case events <- watchEvent{kind: "poll"}:
				default: // the test is not counting polls now
				}
			})
	}()
	next(t, events, "poll") // the baseline
	return events
}

// next returns the next event other than a poll (or the next poll when
// kind is "poll"), failing unless it is of kind.
func next(t *testing.T, events <-chan watchEvent, kind string) watchEvent {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e := <-events:
			if e.kind == "poll" && kind != "poll" {
				continue
			}
			if e.kind != kind {
				t.Fatalf("got %s event (%v), want %s", e.kind, e.err, kind)
			}
			return e
		case <-timeout:
			t.Fatalf("no %s event", kind)
		}
	}
}

// quiet consumes n polls and fails on any other event.
func quiet(t *testing.T, events <-chan watchEvent, n int) {
	t.Helper()
	for range n {
		next(t, events, "poll")
	}
}

// writeFile replaces the file at path atomically, as careful editors do.
func writeFile(t *testing.T, path, body string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func TestWatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	writeFile(t, path, `{"mcpServers": {"a": {"command": "one"}}}`)
	events := startWatch(t, path)
	quiet(t, events, 3) // the baseline is not reported

	steps := []struct {
		name    string
		edit    func()
		kind    string
		command string // of server a, for a change
		errText string // in the error
	}{
		{"good change", func() { writeFile(t, path, `{"mcpServers": {"a": {"command": "two"}}}`) }, "change", "two", ""},
		{"same size", func() { writeFile(t, path, `{"mcpServers": {"a": {"command": "owt"}}}`) }, "change", "owt", ""},
		{"broken edit", func() { writeFile(t, path, `{"mcpServers": {`) }, "error", "", path + ":1:17: unexpected end of JSON input"},
		{"invalid edit", func() { writeFile(t, path, `{"mcpServers": {"a": {}}}`) }, "error", "", `mcpServers.a: transport "stdio" requires "command"`},
		{"fix", func() { writeFile(t, path, `{"mcpServers": {"a": {"command": "three"}}}`) }, "change", "three", ""},
		{"removal", func() {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}, "error", "", "removed"},
		{"recreated", func() { writeFile(t, path, `{"mcpServers": {"a": {"command": "four"}}}`) }, "change", "four", ""},
	}
	for _, st := range steps {
		st.edit()
		e := next(t, events, st.kind)
		switch st.kind {
		case "change":
			if got := e.cfg.MCPServers["a"].Command; got != st.command {
				t.Errorf("%s: command %q, want %q", st.name, got, st.command)
			}
		case "error":
			if !strings.Contains(e.err.Error(), st.errText) {
				t.Errorf("%s: error %v, want %q", st.name, e.err, st.errText)
			}
			if st.name == "removal" && !errors.Is(e.err, fs.ErrNotExist) {
				t.Errorf("removal error %v does not wrap ErrNotExist", e.err)
			}
		}
		// Nothing more is reported: no change after an error, no second
		// error for one removal, one change per edit.
		quiet(t, events, 3)
	}

	// Rewriting the same contents (a new mtime) is no change.
	writeFile(t, path, `{"mcpServers": {"a": {"command": "four"}}}`)
	quiet(t, events, 5)
}

func TestWatchMissingAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	events := startWatch(t, path)
	quiet(t, events, 3) // a missing file is not an error
	writeFile(t, path, `{"agents": {"list": [{"id": "work"}]}}`)
	if e := next(t, events, "change"); len(e.cfg.Profiles()) != 1 {
		t.Errorf("profiles %v", e.cfg.Profiles())
	}
}
