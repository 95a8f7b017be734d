package config

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// racyWindow is how recent a file's modification time may be for an
// unchanged size and time not to prove unchanged contents: file systems
// with coarse timestamps give two quick writes the same time.
const racyWindow = 2 * time.Second

// Watch polls the configuration file at path every interval (a second when
// interval <= 0) until ctx ends, and reports each change of its contents:
// onChange with the new configuration and its warnings when it parses and
// validates, onError with the reason when it does not (the caller keeps its
// last good configuration). The file's removal is reported to onError once;
// its reappearance counts as a change. Read errors are reported once until
// they change. What the file holds when Watch starts is the baseline and is
// not reported (the caller loaded it). A change is a different content hash,
// reported once two consecutive polls have read it (so a poll that falls
// between an editor's truncating and writing the file reports nothing);
// size and modification time let an unchanged file go unread.
//
// Watch runs in the caller's goroutine and returns when ctx ends: run it
// with `go config.Watch(...)`. The callbacks are called from that goroutine,
// one at a time; nil callbacks are skipped.
func Watch(ctx context.Context, path string, interval time.Duration, onChange func(*Config, []Warning), onError func(error)) {
	watch(ctx, path, interval, onChange, onError, nil)
}

// watch is Watch with a hook called after the baseline and after every poll
// (for tests).
func watch(ctx context.Context, path string, interval time.Duration, onChange func(*Config, []Warning), onError func(error), polled func()) {
	if interval <= 0 {
		interval = time.Second
	}
	w := &watcher{path: path, onChange: onChange, onError: onError}
	w.poll(false)
	if polled != nil {
		polled()
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.poll(true)
			if polled != nil {
				polled()
			}
		}
	}
}

// watcher is the state of one Watch; only its goroutine uses it.
type watcher struct {
	path     string
	onChange func(*Config, []Warning)
	onError  func(error)

	exists bool // the file existed at the last poll
	hashed bool // sum holds the hash of the contents last reported (or the baseline)
	sum    [sha256.Size]byte
	// pending holds the hash of new contents seen once, reported when the
	// next poll sees them again.
	pending    [sha256.Size]byte
	hasPending bool
	// size and mtime are the file's at the last read, at readAt.
	size    int64
	mtime   time.Time
	readAt  time.Time
	lastErr string // the read error last reported, "" after a success
}

// poll looks at the file once. With report unset (the baseline) it only
// records the contents.
func (w *watcher) poll(report bool) {
	fi, err := os.Stat(w.path)
	if errors.Is(err, fs.ErrNotExist) {
		if w.exists && report {
			w.fail(fmt.Errorf("configuration file removed: %w", err))
		}
		w.exists, w.hashed, w.hasPending, w.lastErr = false, false, false, ""
		return
	}
	if err != nil {
		w.readError(err, report)
		return
	}
	w.exists = true
	if w.hashed && !w.hasPending && w.lastErr == "" && fi.Size() == w.size && fi.ModTime().Equal(w.mtime) && w.readAt.Sub(fi.ModTime()) > racyWindow {
		return // unchanged since a read that came well after the last write
	}
	readAt := time.Now()
	data, err := ReadFile(w.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return // removed since the Stat: the next poll reports it
		}
		w.readError(err, report)
		return
	}
	w.lastErr = ""
	w.size, w.mtime, w.readAt = fi.Size(), fi.ModTime(), readAt
	sum := sha256.Sum256(data)
	switch {
	case w.hashed && sum == w.sum:
		w.hasPending = false
		return
	case report && (!w.hasPending || sum != w.pending):
		// New contents: wait for them to settle, so that a poll between an
		// editor's truncating the file and writing it is not reported.
		w.pending, w.hasPending = sum, true
		return
	}
	w.sum, w.hashed, w.hasPending = sum, true, false
	if !report {
		return
	}
	cfg, warnings, err := Parse(data, w.path)
	if err != nil {
		w.fail(err)
		return
	}
	if w.onChange != nil {
		w.onChange(cfg, warnings)
	}
}

// readError reports err unless it was the last one reported.
func (w *watcher) readError(err error, report bool) {
	if msg := err.Error(); msg != w.lastErr {
		w.lastErr = msg
		if report {
			w.fail(fmt.Errorf("reading the configuration: %w", err))
		}
	}
}

func (w *watcher) fail(err error) {
	if w.onError != nil {
		w.onError(err)
	}
}
