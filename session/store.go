// Package session is the embedded persistent store of an agent's sessions.
//
// It stores opaque records whose content the caller decides, plus each
// session's metadata. Under the directory given to Open the layout is:
//
//	sessions/<id>/log.jsonl  append-only, one Record per line
//	sessions/<id>/meta.json  the session's Meta, replaced atomically
//
// Directories are created 0700 and files 0600, whatever the umask.
//
// Durability: Session.Append writes one line to the log with one write(2)
// and no buffering in the process, so once it returns the record survives
// a crash of the process. Session.SyncSoon fdatasyncs the log in the
// background within a short delay (group commit: appends made meanwhile
// share one fdatasync); Session.Sync does it before returning, then writes
// the metadata if it changed; Close and Store.Resume sync too. A crash of
// the machine loses at most what was appended since the last sync. Metadata is written
// to a temporary file in the same directory, fsynced, renamed over the old
// file, and the directory is fsynced, so meta.json always holds either the
// old or the new metadata. A session is created in a temporary directory
// that is renamed into place once complete, so a crash never leaves a
// half-created session behind under its id.
//
// Loading (Store.Resume) tolerates a torn last line, the trace of a crash
// during an append: the line is dropped, the log is truncated to its last
// complete line and the loss is reported by Session.Dropped. Any other
// unreadable line is an error (*CorruptError) naming the file and line.
//
// Store.Fork copies a session, open or not, into a new one; Store.Delete
// removes one for good (see their docs for what a crash leaves).
//
// Within one Store a session is open for writing at most once. Nothing is
// locked across processes.
package session

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Limits and defaults.
const (
	// MaxIDLen is the maximum length of a session id.
	MaxIDLen = 128
	// DefaultListLimit is the page size of Store.List when its limit is <= 0.
	DefaultListLimit = 50
	// DefaultSyncDelay is the default Options.SyncDelay.
	DefaultSyncDelay = 50 * time.Millisecond
)

// The values of Meta.Always.
const (
	AlwaysAllow  = "allow"
	AlwaysReject = "reject"
)

// Errors reported by the store; test for them with errors.Is.
var (
	// ErrNotFound means no session has the given id.
	ErrNotFound = errors.New("session: not found")
	// ErrClosed means the Session was closed.
	ErrClosed = errors.New("session: closed")
	// ErrExists means Create was given the id of an existing session.
	ErrExists = errors.New("session: already exists")
	// ErrInUse means the session is already open in this Store.
	ErrInUse = errors.New("session: in use")
	// ErrInvalidID means an id is not 1..MaxIDLen characters of [A-Za-z0-9_-].
	ErrInvalidID = errors.New("session: invalid id")
	// ErrInvalidCursor means a List cursor was not one List returned.
	ErrInvalidCursor = errors.New("session: invalid list cursor")
)

// File and directory names.
const (
	sessionsDir = "sessions"
	logName     = "log.jsonl"
	metaName    = "meta.json"
	newPrefix   = ".new-"
	dirMode     = 0o700
	fileMode    = 0o600
)

// Meta is a session's metadata. It is plain data with no synchronization;
// the Store and Session hand out deep copies, so each caller owns its own.
type Meta struct {
	ID      string    `json:"id"`
	Cwd     string    `json:"cwd"`
	Title   string    `json:"title,omitempty"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	Mode    string    `json:"mode,omitempty"`
	// Always holds the user's "always" permission decisions: tool name ->
	// AlwaysAllow or AlwaysReject.
	Always map[string]string `json:"always,omitempty"`
	// Extra is free for the caller; values must be JSON-encodable.
	Extra map[string]any `json:"extra,omitempty"`
}

// clone returns a copy of m that shares no maps or slices with it.
func (m Meta) clone() Meta {
	if m.Always != nil {
		a := make(map[string]string, len(m.Always))
		for k, v := range m.Always {
			a[k] = v
		}
		m.Always = a
	}
	if m.Extra != nil {
		m.Extra = cloneValue(m.Extra).(map[string]any)
	}
	return m
}

// cloneValue deep-copies the maps and slices of a JSON-like value.
func cloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(v))
		for k, x := range v {
			c[k] = cloneValue(x)
		}
		return c
	case []any:
		c := make([]any, len(v))
		for i, x := range v {
			c[i] = cloneValue(x)
		}
		return c
	default:
		return v
	}
}

// Record is one line of a session's log. Kind and Data are the caller's;
// Time is when it was appended (UTC). It is plain data with no
// synchronization; Resume returns records the caller owns.
type Record struct {
	Kind string          `json:"k"`
	Time time.Time       `json:"t"`
	Data json.RawMessage `json:"d"`
}

// CorruptError reports an unreadable line of a session log that is not its
// last line. It is immutable once returned and safe for concurrent use.
type CorruptError struct {
	Path string // the log file
	Line int    // 1-based line number
	Err  error  // why the line could not be read
}

// Error returns "session: PATH:LINE: corrupt record: ERR".
func (e *CorruptError) Error() string {
	return fmt.Sprintf("session: %s:%d: corrupt record: %v", e.Path, e.Line, e.Err)
}

// Unwrap returns e.Err.
func (e *CorruptError) Unwrap() error { return e.Err }

// ValidID reports whether id can name a session: 1..MaxIDLen characters,
// each an ASCII letter, digit, '_' or '-'. It is safe for concurrent use.
func ValidID(id string) bool {
	if len(id) == 0 || len(id) > MaxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

func checkID(id string) error {
	if !ValidID(id) {
		return fmt.Errorf("%w %q", ErrInvalidID, id)
	}
	return nil
}

// DefaultDir returns the default state directory: $XDG_STATE_HOME/acpgate
// if XDG_STATE_HOME is set to an absolute path (relative values are ignored,
// as the XDG spec requires), else ~/.local/state/acpgate. It does not create
// the directory. It reads the environment and is safe for concurrent use.
func DefaultDir() (string, error) {
	if x := os.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "acpgate"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("session: default state dir: %w", err)
	}
	return filepath.Join(home, ".local", "state", "acpgate"), nil
}

// Options configures a Store. A nil *Options means all defaults. OpenWith
// copies what it needs; Now and Logger must be safe for concurrent use.
type Options struct {
	// Now returns the current time (default time.Now). Times are stored
	// in UTC.
	Now func() time.Time
	// Logger receives warnings: torn lines dropped by Resume, sessions List
	// cannot read, failed background syncs. Default: discard.
	Logger *slog.Logger
	// SyncDelay is how long after Session.SyncSoon the background
	// fdatasync runs; calls within it share one. Default (<= 0):
	// DefaultSyncDelay.
	SyncDelay time.Duration
}

// Store is a directory of sessions. It is safe for concurrent use.
type Store struct {
	dir      string
	sessions string
	clock    func() time.Time
	logger   *slog.Logger
	// syncDelay is Options.SyncDelay; datasync flushes a log to stable
	// storage (a variable so that tests can observe and fail it).
	syncDelay time.Duration
	datasync  func(*os.File) error

	mu   sync.Mutex
	open map[string]*Session // nil value: being created or resumed
}

// Open opens the store in dir with default options; see OpenWith.
func Open(dir string) (*Store, error) { return OpenWith(dir, nil) }

// OpenWith opens the store in dir, creating dir and dir/sessions (0700) if
// needed. Directories that already exist keep their permissions.
func OpenWith(dir string, opts *Options) (*Store, error) {
	if dir == "" {
		return nil, errors.New("session: open: empty directory name")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("session: open %s: %w", dir, err)
	}
	s := &Store{
		dir:       abs,
		sessions:  filepath.Join(abs, sessionsDir),
		clock:     time.Now,
		logger:    slog.New(slog.DiscardHandler),
		open:      make(map[string]*Session),
		syncDelay: DefaultSyncDelay,
		datasync:  datasync,
	}
	if opts != nil {
		if opts.SyncDelay > 0 {
			s.syncDelay = opts.SyncDelay
		}
		if opts.Now != nil {
			s.clock = opts.Now
		}
		if opts.Logger != nil {
			s.logger = opts.Logger
		}
	}
	if err := mkdirPrivate(s.sessions); err != nil {
		return nil, fmt.Errorf("session: open %s: %w", abs, err)
	}
	s.removeDeleted()
	return s, nil
}

// Dir returns the store's directory (absolute). It is safe for concurrent
// use.
func (s *Store) Dir() string { return s.dir }

// now returns the current time in UTC, without a monotonic reading.
func (s *Store) now() time.Time { return s.clock().UTC() }

func (s *Store) sessionDir(id string) string { return filepath.Join(s.sessions, id) }

// reserve marks id as being opened in this store, or fails with busy if it
// already is.
func (s *Store) reserve(id string, busy error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.open[id]; ok {
		return fmt.Errorf("%w: %q is open in this store", busy, id)
	}
	s.open[id] = nil
	return nil
}

// settle ends a reservation: id is now open as ss, or (ss == nil) not open.
func (s *Store) settle(id string, ss *Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss == nil {
		delete(s.open, id)
	} else {
		s.open[id] = ss
	}
}

// release forgets ss when it is closed.
func (s *Store) release(ss *Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[ss.id] == ss {
		delete(s.open, ss.id)
	}
}

// Create creates the session id with working directory cwd and opens it for
// appending. Created and Updated are set to now and the metadata is on disk
// when Create returns. It fails with ErrInvalidID for an unsafe id and with
// ErrExists if the session exists (or is being created in this Store).
func (s *Store) Create(id, cwd string) (*Session, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	if err := s.reserve(id, ErrExists); err != nil {
		return nil, err
	}
	now := s.now()
	ss, err := s.create(Meta{ID: id, Cwd: cwd, Created: now, Updated: now}, nil)
	s.settle(id, ss)
	return ss, err
}

// create writes session meta.ID, with metadata meta and a log written by
// fill (nil: empty), in a temporary directory renamed into place once
// complete, and opens it for appending. The caller has reserved the id.
func (s *Store) create(meta Meta, fill func(*os.File) (int64, error)) (_ *Session, err error) {
	id := meta.ID
	final := s.sessionDir(id)
	exists := func() error {
		_, err := os.Lstat(final)
		if err == nil {
			return fmt.Errorf("%w: %q", ErrExists, id)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("session: create %q: %w", id, err)
		}
		return nil
	}
	if err := exists(); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(s.sessions, newPrefix+id+"-*")
	if err != nil {
		return nil, fmt.Errorf("session: create %q: %w", id, err)
	}
	var f *os.File
	defer func() {
		if err != nil {
			if f != nil {
				f.Close()
			}
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, dirMode); err != nil {
		return nil, fmt.Errorf("session: create %q: %w", id, err)
	}
	f, err = os.OpenFile(filepath.Join(tmp, logName), os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, fileMode)
	if err != nil {
		return nil, fmt.Errorf("session: create %q: %w", id, err)
	}
	if err := f.Chmod(fileMode); err != nil {
		return nil, fmt.Errorf("session: create %q: %w", id, err)
	}
	var size int64
	if fill != nil {
		if size, err = fill(f); err != nil {
			return nil, fmt.Errorf("session: create %q: %w", id, err)
		}
		if err := s.datasync(f); err != nil {
			return nil, fmt.Errorf("session: create %q: sync log: %w", id, err)
		}
	}
	// writeMeta fsyncs tmp, which also makes the log's entry durable.
	if err := writeMeta(tmp, meta); err != nil {
		return nil, fmt.Errorf("session: create %q: %w", id, err)
	}
	if err := exists(); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, final); err != nil {
		return nil, fmt.Errorf("session: create %q: %w", id, err)
	}
	if err := syncDir(s.sessions); err != nil {
		// The session is in place; only its durability is in doubt.
		f.Close()
		f = nil
		return nil, fmt.Errorf("session: create %q: %w", id, err)
	}
	return newSession(s, id, final, f, size, meta), nil
}

// Resume opens the existing session id for appending and returns its
// records, oldest first, durable: the log is fdatasynced first, since a
// process that crashed may have left them in the page cache only. A torn last line is dropped, the log truncated to
// its last complete line and the loss reported by the Session's Dropped
// method; any other unreadable line fails with a *CorruptError. Resume
// fails with ErrNotFound if there is no such session and with ErrInUse if
// it is already open in this Store. If the log holds records newer than the
// metadata's Updated time (a crash between the two writes of Sync), Updated
// is advanced to the last record's time in memory.
func (s *Store) Resume(id string) (*Session, []Record, error) {
	if err := checkID(id); err != nil {
		return nil, nil, err
	}
	if err := s.reserve(id, ErrInUse); err != nil {
		return nil, nil, err
	}
	ss, recs, err := s.resume(id)
	s.settle(id, ss)
	return ss, recs, err
}

func (s *Store) resume(id string) (_ *Session, _ []Record, err error) {
	meta, err := s.readMeta(id)
	if err != nil {
		return nil, nil, err
	}
	dir := s.sessionDir(id)
	removeStaleTemps(dir)
	path := filepath.Join(dir, logName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("session: resume %q: %w", id, err)
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	recs, dropped, end, err := readLog(f, path)
	if err != nil {
		return nil, nil, err
	}
	if dropped != nil {
		if err := f.Truncate(end); err != nil {
			return nil, nil, fmt.Errorf("session: resume %q: drop torn line %d: %w", id, dropped.Line, err)
		}
	}
	// What a crashed process wrote may still be only in the page cache:
	// make the records durable before the caller shows them.
	if err := s.datasync(f); err != nil {
		return nil, nil, fmt.Errorf("session: resume %q: sync log: %w", id, err)
	}
	if dropped != nil {
		s.logger.Warn("session: dropped torn last line of log", "id", id, "path", path,
			"line", dropped.Line, "bytes", dropped.Size, "reason", dropped.Reason)
	}
	ss := newSession(s, id, dir, f, end, meta)
	ss.dropped = dropped
	if n := len(recs); n > 0 && recs[n-1].Time.After(meta.Updated) {
		ss.meta.Updated = recs[n-1].Time
		ss.dirty = true
	}
	return ss, recs, nil
}

// Get returns the metadata of session id. For a session open in this Store
// it is the in-memory metadata, which may be newer than what is on disk.
// It fails with ErrNotFound if there is no such session.
func (s *Store) Get(id string) (Meta, error) {
	if err := checkID(id); err != nil {
		return Meta{}, err
	}
	s.mu.Lock()
	ss := s.open[id]
	s.mu.Unlock()
	if ss != nil {
		return ss.Meta(), nil
	}
	return s.readMeta(id)
}

// readMeta reads the metadata of session id from disk.
func (s *Store) readMeta(id string) (Meta, error) {
	dir := s.sessionDir(id)
	path := filepath.Join(dir, metaName)
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if _, derr := os.Lstat(dir); errors.Is(derr, fs.ErrNotExist) {
				return Meta{}, fmt.Errorf("%w: %q", ErrNotFound, id)
			}
		}
		return Meta{}, fmt.Errorf("session: read metadata: %w", err)
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return Meta{}, fmt.Errorf("session: %s: corrupt metadata: %w", path, err)
	}
	if m.ID != id {
		return Meta{}, fmt.Errorf("session: %s: metadata is for session %q", path, m.ID)
	}
	// Appends synced after the metadata was last written (the session is
	// open in another process, or one crashed before Close) are newer.
	if t, ok := lastRecordTime(filepath.Join(dir, logName)); ok && t.After(m.Updated) {
		m.Updated = t
	}
	return m, nil
}

// List returns the metadata of the sessions whose Cwd is cwd (all sessions
// if cwd is ""), most recently updated first, ties by ID, at most limit of
// them (DefaultListLimit if limit <= 0), starting after cursor ("" for the
// first page). next is the cursor of the following page, "" when there is
// none. A cursor not returned by List fails with ErrInvalidCursor. Sessions
// open in this Store are listed with their in-memory metadata; sessions
// whose metadata cannot be read are skipped (and logged).
func (s *Store) List(cwd, cursor string, limit int) (metas []Meta, next string, err error) {
	if limit <= 0 {
		limit = DefaultListLimit
	}
	var after *listKey
	if cursor != "" {
		k, err := decodeCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		after = &k
	}
	entries, err := os.ReadDir(s.sessions)
	if err != nil {
		return nil, "", fmt.Errorf("session: list: %w", err)
	}
	live := make(map[string]*Session)
	s.mu.Lock()
	for id, ss := range s.open {
		if ss != nil {
			live[id] = ss
		}
	}
	s.mu.Unlock()
	for _, e := range entries {
		id := e.Name()
		if !e.IsDir() || !ValidID(id) {
			continue
		}
		var m Meta
		if ss := live[id]; ss != nil {
			m = ss.Meta()
		} else if m, err = s.readMeta(id); err != nil {
			if !errors.Is(err, ErrNotFound) { // else removed meanwhile
				s.logger.Warn("session: list: skipping unreadable session", "id", id, "err", err)
			}
			continue
		}
		if cwd != "" && m.Cwd != cwd {
			continue
		}
		if after != nil && after.compare(keyOf(m)) >= 0 {
			continue
		}
		metas = append(metas, m)
	}
	slices.SortFunc(metas, func(a, b Meta) int { return keyOf(a).compare(keyOf(b)) })
	if len(metas) > limit {
		metas = metas[:limit:limit]
		next = encodeCursor(keyOf(metas[limit-1]))
	}
	return metas, next, nil
}

// listKey is a position in List's order; it is what a cursor encodes.
type listKey struct {
	Updated time.Time `json:"u"`
	ID      string    `json:"i"`
}

func keyOf(m Meta) listKey { return listKey{Updated: m.Updated, ID: m.ID} }

// compare orders keys as List does: Updated descending, then ID ascending.
func (k listKey) compare(o listKey) int {
	if c := o.Updated.Compare(k.Updated); c != 0 {
		return c
	}
	return strings.Compare(k.ID, o.ID)
}

func encodeCursor(k listKey) string {
	b, _ := json.Marshal(k) // cannot fail: a time and a string
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(c string) (listKey, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return listKey{}, fmt.Errorf("%w %q: %w", ErrInvalidCursor, c, err)
	}
	var k listKey
	if err := json.Unmarshal(b, &k); err != nil {
		return listKey{}, fmt.Errorf("%w %q: %w", ErrInvalidCursor, c, err)
	}
	if !ValidID(k.ID) {
		return listKey{}, fmt.Errorf("%w %q", ErrInvalidCursor, c)
	}
	return k, nil
}

// lastRecordTime reads the time of the last complete record of a log from
// its tail.
func lastRecordTime(path string) (time.Time, bool) {
	f, err := os.Open(path)
	if err != nil {
		return time.Time{}, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return time.Time{}, false
	}
	const tail = 64 << 10
	off := max(fi.Size()-tail, 0)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil {
		return time.Time{}, false
	}
	end := bytes.LastIndexByte(buf, '\n')
	if end < 0 {
		return time.Time{}, false
	}
	start := bytes.LastIndexByte(buf[:end], '\n') + 1
	if start == 0 && off > 0 {
		return time.Time{}, false // the last line is longer than the tail read
	}
	var r struct {
		Time time.Time `json:"t"`
	}
	if json.Unmarshal(buf[start:end], &r) != nil {
		return time.Time{}, false
	}
	return r.Time, true
}
