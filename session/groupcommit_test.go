package session_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpgate/acpgate/session"
)

// heldSync is a datasync that the test holds: each call is announced on
// started and returns what the test sends on release.
type heldSync struct {
	started  chan *os.File
	release  chan error
	calls    atomic.Int32
	inflight atomic.Int32
	overlap  atomic.Bool // two datasyncs ran at once
}

func newHeldSync() *heldSync {
	return &heldSync{started: make(chan *os.File), release: make(chan error)}
}

func (h *heldSync) datasync(f *os.File) error {
	h.calls.Add(1)
	if h.inflight.Add(1) > 1 {
		h.overlap.Store(true)
	}
	defer h.inflight.Add(-1)
	h.started <- f
	return <-h.release
}

// recorder is a slog handler keeping the records it gets.
type recorder struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec)
	return nil
}
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }

func (r *recorder) errors() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, rec := range r.recs {
		if rec.Level >= slog.LevelError {
			n++
		}
	}
	return n
}

// openHeld opens a store whose datasyncs h holds.
func openHeld(t *testing.T, h *heldSync, logs *recorder) *session.Store {
	t.Helper()
	s, err := session.OpenWith(filepath.Join(t.TempDir(), "state"), &session.Options{
		Now: newClock().Now, SyncDelay: time.Millisecond, Logger: slog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	session.SetDatasync(s, h.datasync)
	return s
}

// result runs fn in a goroutine and returns a channel of its error.
func result(fn func() error) chan error {
	c := make(chan error, 1)
	go func() { c <- fn() }()
	return c
}

// notYet fails if c already holds a result.
func notYet(t *testing.T, what string, c chan error) {
	t.Helper()
	select {
	case err := <-c:
		t.Fatalf("%s returned (%v) while the datasync it must wait for was held", what, err)
	default:
	}
}

// TestGroupCommit: SyncSoon syncs in the background and its calls
// coalesce; appends go on during a datasync; Sync callers share one
// datasync and wait for the one under way; no two datasyncs overlap.
func TestGroupCommit(t *testing.T) {
	h := newHeldSync()
	s := openHeld(t, h, &recorder{})
	ss := mustCreate(t, s, "g", "/")
	mustAppend(t, ss, "k", 1)
	ss.SyncSoon()
	ss.SyncSoon() // shares the scheduled sync
	<-h.started   // the background datasync, held

	// Appends do not wait for it.
	mustAppend(t, ss, "k", 2)
	mustAppend(t, ss, "k", 3)
	// Three Syncs need records the held datasync may not cover: they
	// wait for it, then share one more.
	var syncs []chan error
	for range 3 {
		syncs = append(syncs, result(ss.Sync))
	}
	for _, c := range syncs {
		notYet(t, "Sync", c)
	}
	h.release <- nil
	<-h.started // the one datasync of the three Syncs
	for _, c := range syncs {
		notYet(t, "Sync", c)
	}
	h.release <- nil
	for _, c := range syncs {
		if err := <-c; err != nil {
			t.Fatalf("Sync: %v", err)
		}
	}
	// Nothing new: neither Sync nor SyncSoon syncs again.
	if err := ss.Sync(); err != nil {
		t.Fatal(err)
	}
	ss.SyncSoon()
	if n := h.calls.Load(); n != 2 {
		t.Errorf("%d datasyncs, want 2 (1 background + 1 shared by 3 Syncs)", n)
	}

	// A Sync whose records the held datasync covers waits for it and
	// adds none; so does Close.
	mustAppend(t, ss, "k", 4)
	ss.SyncSoon()
	<-h.started
	sync1, closed := result(ss.Sync), result(ss.Close)
	notYet(t, "Sync", sync1)
	notYet(t, "Close", closed)
	h.release <- nil
	if err := <-sync1; err != nil && !errors.Is(err, session.ErrClosed) {
		t.Fatalf("Sync: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if n := h.calls.Load(); n != 3 {
		t.Errorf("%d datasyncs, want 3", n)
	}
	if h.overlap.Load() {
		t.Error("two datasyncs of one log ran at once")
	}
	ss.SyncSoon() // after Close: nothing
	// Resume syncs what it returns (the previous process may have
	// crashed before its sync).
	resumed := result(func() error {
		ss, recs, err := s.Resume("g")
		if err == nil && len(recs) != 4 {
			err = errors.New("records lost")
		}
		if err == nil {
			err = ss.Close()
		}
		return err
	})
	<-h.started
	notYet(t, "Resume", resumed)
	h.release <- nil
	if err := <-resumed; err != nil {
		t.Fatal(err)
	}
}

// TestSyncError: a failed datasync, in Sync or in the background, is
// returned by the next Append, Sync and Close, and a background failure is
// logged.
func TestSyncError(t *testing.T) {
	errDisk := errors.New("injected EIO")
	for _, background := range []bool{false, true} {
		h := newHeldSync()
		logs := &recorder{}
		s := openHeld(t, h, logs)
		ss := mustCreate(t, s, "e", "/")
		mustAppend(t, ss, "k", 1)
		var synced chan error
		if background {
			ss.SyncSoon()
		} else {
			synced = result(ss.Sync)
		}
		<-h.started
		h.release <- errDisk
		if synced == nil {
			// This Sync needs the record: it waits for the failed
			// background datasync and gets its error.
			synced = result(ss.Sync)
		}
		if err := <-synced; !errors.Is(err, errDisk) {
			t.Errorf("background=%v: Sync = %v, want %v", background, err, errDisk)
		}
		if err := ss.Append("k", 2); !errors.Is(err, errDisk) {
			t.Errorf("background=%v: Append after a failed sync = %v", background, err)
		}
		if err := ss.Close(); !errors.Is(err, errDisk) {
			t.Errorf("background=%v: Close after a failed sync = %v", background, err)
		}
		if got, want := logs.errors(), map[bool]int{false: 0, true: 1}[background]; got != want {
			t.Errorf("background=%v: %d errors logged, want %d", background, got, want)
		}
		if h.calls.Load() != 1 {
			t.Errorf("background=%v: %d datasyncs, want 1", background, h.calls.Load())
		}
	}
}
