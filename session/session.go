package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// Session is a session open for appending, from Store.Create or
// Store.Resume. It is safe for concurrent use; appends are written in the
// order their calls take the session's lock.
type Session struct {
	store *Store
	id    string
	dir   string

	mu      sync.Mutex
	idle    sync.Cond   // on mu: broadcast when a datasync ends
	f       *os.File    // nil once closed
	size    int64       // length of the log: where the next line starts
	synced  int64       // length of the log known to be on stable storage
	syncing bool        // a datasync runs, without mu held
	soon    *time.Timer // the background sync SyncSoon scheduled; nil if none
	meta    Meta
	dirty   bool // meta changed since it was last written
	touched bool // Updated moved by Append since the metadata was written
	closed  bool
	broken  error // sticky: the log can no longer be trusted
	dropped *Dropped
}

// newSession returns the open session id whose log f is size bytes long,
// all of them on stable storage.
func newSession(s *Store, id, dir string, f *os.File, size int64, meta Meta) *Session {
	ss := &Session{store: s, id: id, dir: dir, f: f, size: size, synced: size, meta: meta}
	ss.idle.L = &ss.mu
	return ss
}

// Dropped describes the torn last line of a log that Store.Resume
// discarded. It is plain data; Session.Dropped returns a fresh copy.
type Dropped struct {
	Line   int    // 1-based line number of the torn line
	Offset int64  // byte offset where it began; the log was truncated there
	Size   int64  // number of bytes discarded
	Reason string // "unterminated line" or "unparsable line: ..."
}

// ID returns the session's id. It is safe for concurrent use.
func (ss *Session) ID() string { return ss.id }

// Meta returns a copy of the session's metadata, including changes not yet
// written (Updated bumped by Append). It is safe for concurrent use.
func (ss *Session) Meta() Meta {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.meta.clone()
}

// Dropped returns what Store.Resume discarded from the end of the log, or
// nil if nothing was (always nil for a session from Store.Create). It is
// safe for concurrent use.
func (ss *Session) Dropped() *Dropped {
	if ss.dropped == nil {
		return nil
	}
	d := *ss.dropped
	return &d
}

// usable reports why the session cannot be written to, if it cannot.
// ss.mu must be held.
func (ss *Session) usable() error {
	if ss.closed {
		return ErrClosed
	}
	return ss.broken
}

// Append marshals v with encoding/json into the Data of a new Record of the
// given kind (non-empty), stamped with the current time, and writes it to
// the log as one line with a single write(2): once Append returns, the
// record survives a crash of the process (not of the machine) and a
// reader of the file sees it. It does not fsync (see Sync and SyncSoon),
// so it is quick; it never waits for a datasync. It bumps the in-memory
// Updated time. If the write fails part-way the partial line is cut off
// again; if that fails too, every later Append, Sync and Close fails. It is
// safe for concurrent use. After Close it returns ErrClosed.
func (ss *Session) Append(kind string, v any) error {
	if kind == "" {
		return fmt.Errorf("session: %s: append: empty record kind", ss.id)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("session: %s: append %q: %w", ss.id, kind, err)
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if err := ss.usable(); err != nil {
		return err
	}
	now := ss.store.now()
	line, err := recordLine(kind, now, data)
	if err != nil {
		return fmt.Errorf("session: %s: append %q: %w", ss.id, kind, err)
	}
	n, err := ss.f.Write(line)
	if err != nil {
		if n > 0 {
			if terr := ss.f.Truncate(ss.size); terr != nil {
				ss.broken = fmt.Errorf("session: %s: log ends with a partial line after a failed append (%v): %w", ss.id, err, terr)
			}
		}
		return fmt.Errorf("session: %s: append %q: %w", ss.id, kind, err)
	}
	ss.size += int64(n)
	// Only in memory: the log's own times (and its mtime, for List) say
	// when it was last written, so a Sync need not rewrite the metadata
	// file for this; Close does.
	ss.meta.Updated = now
	ss.touched = true
	return nil
}

// recordLine is the log line of a Record (its JSON and '\n'), data
// being json.Marshal's output: valid and compact, so it is copied into the
// line as it is rather than compacted again as encoding/json does with a
// json.RawMessage member.
func recordLine(kind string, t time.Time, data []byte) ([]byte, error) {
	k, err := json.Marshal(kind)
	if err != nil {
		return nil, err
	}
	ts, err := t.MarshalJSON()
	if err != nil {
		return nil, err
	}
	line := make([]byte, 0, len(k)+len(ts)+len(data)+len(`{"k":,"t":,"d":}`)+1)
	line = append(append(append(line, `{"k":`...), k...), `,"t":`...)
	line = append(append(append(line, ts...), `,"d":`...), data...)
	return append(line, '}', '\n'), nil
}

// Sync makes the log durable (fdatasync), then writes the metadata
// (atomically) if it changed since it was last written, other than by
// appends moving Updated (that is written by Close, and recovered from the
// log after a crash). If a datasync is under way (a background one from
// SyncSoon, or another caller's) Sync waits for it and runs another only if
// that one did not cover every record appended before Sync was called:
// concurrent callers share syncs (group commit). Appends go on while a
// datasync runs. A failed datasync makes the session unusable: every later
// Append, Sync and Close fails, since the kernel may have dropped the
// unwritten data. It is safe for concurrent use. After Close it returns
// ErrClosed.
func (ss *Session) Sync() error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.closed {
		return ErrClosed
	}
	if err := ss.flushLocked(); err != nil {
		return err
	}
	if ss.dirty && !ss.closed { // Close, while flushLocked waited, wrote it
		if err := writeMeta(ss.dir, ss.meta); err != nil {
			return fmt.Errorf("session: %s: %w", ss.id, err)
		}
		ss.dirty, ss.touched = false, false
	}
	return nil
}

// SyncSoon schedules a datasync of the log in the background, at most the
// Store's sync delay (Options.SyncDelay) from now, and returns at once: call
// it at each completed tool call and at the end of a turn. Calls made
// before the scheduled sync starts share it. Metadata is left to Sync and
// Close. A failed background datasync is logged by the Store's Logger and
// makes the session unusable, as for Sync, so the next Append, Sync or
// Close returns the error. It is safe for concurrent use; after Close it
// does nothing.
func (ss *Session) SyncSoon() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.closed || ss.soon != nil || ss.synced >= ss.size {
		return
	}
	ss.soon = time.AfterFunc(ss.store.syncDelay, ss.syncInBackground)
}

// syncInBackground is the scheduled sync of SyncSoon.
func (ss *Session) syncInBackground() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.soon = nil
	if ss.closed || ss.broken != nil {
		return
	}
	if err := ss.flushLocked(); err != nil && !errors.Is(err, ErrClosed) {
		ss.store.logger.Error("session: background sync of the log failed", "id", ss.id, "err", err)
	}
}

// flushLocked makes the log durable up to its length at the call. A
// datasync under way is waited for; another runs only if that one did not
// cover the call's length. The datasync runs with ss.mu released, so
// appends go on meanwhile. ss.mu must be held; it is held again on return.
func (ss *Session) flushLocked() error {
	target := ss.size
	for {
		switch {
		case ss.broken != nil:
			return ss.broken
		case ss.synced >= target:
			return nil
		case ss.f == nil:
			return ErrClosed
		case !ss.syncing:
			ss.syncing = true
			end, f := ss.size, ss.f
			ss.mu.Unlock()
			err := ss.store.datasync(f)
			ss.mu.Lock()
			ss.syncing = false
			ss.idle.Broadcast()
			if err != nil {
				ss.broken = fmt.Errorf("session: %s: sync log: %w", ss.id, err)
				return ss.broken
			}
			ss.synced = max(ss.synced, end)
		default:
			ss.idle.Wait()
		}
	}
}

// UpdateMeta applies fn to a copy of the metadata, with Updated already set
// to the current time and Always and Extra non-nil, and writes the result
// atomically before returning. fn may change any field but ID; Always
// values must be AlwaysAllow or AlwaysReject, and Extra must be
// JSON-encodable. If fn breaks these rules or the write fails, an error is
// returned and the metadata, on disk and in memory, is unchanged. fn runs
// with the session locked and must not call the Session's methods. It is
// safe for concurrent use. After Close it returns ErrClosed.
func (ss *Session) UpdateMeta(fn func(*Meta)) error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if err := ss.usable(); err != nil {
		return err
	}
	m := ss.meta.clone()
	m.Updated = ss.store.now()
	if err := m.edit(fn); err != nil {
		return fmt.Errorf("session: %s: update metadata: %w", ss.id, err)
	}
	if err := writeMeta(ss.dir, m); err != nil {
		return fmt.Errorf("session: %s: update metadata: %w", ss.id, err)
	}
	ss.meta = m
	ss.dirty, ss.touched = false, false
	return nil
}

// edit applies fn to m as UpdateMeta documents: Always and Extra non-nil
// for fn and nil again when left empty, the ID unchanged, every Always
// value AlwaysAllow or AlwaysReject. m is unchanged when it fails.
func (m *Meta) edit(fn func(*Meta)) error {
	e := m.clone()
	if e.Always == nil {
		e.Always = make(map[string]string)
	}
	if e.Extra == nil {
		e.Extra = make(map[string]any)
	}
	fn(&e)
	if len(e.Always) == 0 {
		e.Always = nil
	}
	if len(e.Extra) == 0 {
		e.Extra = nil
	}
	if e.ID != m.ID {
		return fmt.Errorf("the ID cannot change (to %q)", e.ID)
	}
	for tool, d := range e.Always {
		if d != AlwaysAllow && d != AlwaysReject {
			return fmt.Errorf("always[%q] = %q, want %q or %q", tool, d, AlwaysAllow, AlwaysReject)
		}
	}
	*m = e
	return nil
}

// Close stops appends, makes the log durable (waiting for a datasync under
// way, see Sync), writes the metadata if it changed (Updated included),
// closes the log and makes the id available to Store.Resume again. The log
// is closed even if the sync fails; the sync's error is returned. Close is
// idempotent: later calls return nil. It is safe for concurrent use.
func (ss *Session) Close() error {
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return nil
	}
	ss.closed = true
	if ss.soon != nil {
		ss.soon.Stop() // if it already fired, it finds the session closed
		ss.soon = nil
	}
	if ss.touched {
		ss.dirty = true
	}
	err := ss.flushLocked()
	for ss.syncing { // after a failure: another caller's datasync
		ss.idle.Wait()
	}
	if err == nil && ss.dirty {
		if err = writeMeta(ss.dir, ss.meta); err != nil {
			err = fmt.Errorf("session: %s: %w", ss.id, err)
		} else {
			ss.dirty, ss.touched = false, false
		}
	}
	// No datasync is under way, and none starts now the session is closed.
	if cerr := ss.f.Close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("session: %s: close log: %w", ss.id, cerr))
	}
	ss.f = nil
	ss.idle.Broadcast()
	ss.mu.Unlock()
	ss.store.release(ss)
	return err
}
