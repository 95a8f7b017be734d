package session_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/acpgate/acpgate/session"
)

// clock is a fake clock: each call is one second after the previous one.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock {
	return &clock{t: time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// openStore opens a store with a fake clock in a new directory.
func openStore(t *testing.T) (*session.Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	s, err := session.OpenWith(dir, &session.Options{Now: newClock().Now})
	if err != nil {
		t.Fatalf("OpenWith: %v", err)
	}
	return s, dir
}

func sessionDir(dir, id string) string { return filepath.Join(dir, "sessions", id) }
func logPath(dir, id string) string    { return filepath.Join(sessionDir(dir, id), "log.jsonl") }
func metaPath(dir, id string) string   { return filepath.Join(sessionDir(dir, id), "meta.json") }

func mustCreate(t *testing.T, s *session.Store, id, cwd string) *session.Session {
	t.Helper()
	ss, err := s.Create(id, cwd)
	if err != nil {
		t.Fatalf("Create(%q): %v", id, err)
	}
	return ss
}

func mustAppend(t *testing.T, ss *session.Session, kind string, v any) {
	t.Helper()
	if err := ss.Append(kind, v); err != nil {
		t.Fatalf("Append(%q): %v", kind, err)
	}
}

func mustClose(t *testing.T, ss *session.Session) {
	t.Helper()
	if err := ss.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func mustResume(t *testing.T, s *session.Store, id string) (*session.Session, []session.Record) {
	t.Helper()
	ss, recs, err := s.Resume(id)
	if err != nil {
		t.Fatalf("Resume(%q): %v", id, err)
	}
	return ss, recs
}

// appendRaw appends b to the file at path, bypassing the store.
func appendRaw(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// checkLines fails unless the file at path is n newline-terminated lines of
// valid JSON.
func checkLines(t *testing.T, path string, n int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Errorf("%s does not end with a newline", path)
	}
	lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	if len(b) == 0 {
		lines = nil
	}
	if len(lines) != n {
		t.Errorf("%s has %d lines, want %d", path, len(lines), n)
	}
	for i, l := range lines {
		if !json.Valid(l) {
			t.Errorf("%s:%d is not valid JSON: %q", path, i+1, l)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
