package session_test

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/acpgate/acpgate/session"
)

// kinds returns the kinds of recs, in order.
func kinds(recs []session.Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.Kind)
	}
	return out
}

// TestFork: a fork of a closed session has its records and metadata (with
// its own id, times and the edit applied), on disk as a session of its
// own; the source is unchanged; a fork of an open session has what was
// appended before the fork and nothing after; a torn last line is left
// out; bad ids, an unknown source, an existing id and a bad edit fail
// with their errors and leave nothing behind.
func TestFork(t *testing.T) {
	s, dir := openStore(t)
	src := mustCreate(t, s, "src", "/w")
	mustAppend(t, src, "a", 1)
	mustAppend(t, src, "b", 2)
	if err := src.UpdateMeta(func(m *session.Meta) {
		m.Title, m.Mode = "the title", "auto"
		m.Always["tool"] = session.AlwaysAllow
		m.Extra["model"] = "m2"
	}); err != nil {
		t.Fatal(err)
	}
	mustClose(t, src)
	before, err := os.ReadFile(logPath(dir, "src"))
	if err != nil {
		t.Fatal(err)
	}
	srcMeta, err := s.Get("src")
	if err != nil {
		t.Fatal(err)
	}

	fork, recs, err := s.Fork("src", "copy", func(m *session.Meta) { m.Cwd = "/other"; m.Title += " (fork)" })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(kinds(recs), []string{"a", "b"}) {
		t.Errorf("fork records %v", kinds(recs))
	}
	m := fork.Meta()
	if m.ID != "copy" || m.Cwd != "/other" || m.Title != "the title (fork)" || m.Mode != "auto" ||
		!maps.Equal(m.Always, map[string]string{"tool": session.AlwaysAllow}) || m.Extra["model"] != "m2" || !m.Created.After(srcMeta.Updated) {
		t.Errorf("fork metadata %+v", m)
	}
	mustAppend(t, fork, "c", 3)
	mustClose(t, fork)
	checkLines(t, logPath(dir, "copy"), 3)
	if after, _ := os.ReadFile(logPath(dir, "src")); string(after) != string(before) {
		t.Error("forking changed the source's log")
	}
	if got, _ := s.Get("src"); got.Title != "the title" || got.Cwd != "/w" {
		t.Errorf("source metadata after the fork %+v", got)
	}
	_, recs = mustResume(t, s, "copy")
	if !slices.Equal(kinds(recs), []string{"a", "b", "c"}) {
		t.Errorf("fork resumed: %v", kinds(recs))
	}

	// An open source, being written to: the snapshot's records only.
	live, _ := mustResume(t, s, "src")
	mustAppend(t, live, "d", 4)
	fork2, recs, err := s.Fork("src", "copy2", nil)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, live, "e", 5)
	if !slices.Equal(kinds(recs), []string{"a", "b", "d"}) || fork2.Meta().Title != "the title" {
		t.Errorf("fork of an open session: %v %+v", kinds(recs), fork2.Meta())
	}
	mustClose(t, fork2)
	mustClose(t, live)
	checkLines(t, logPath(dir, "copy2"), 3)

	// A torn last line is not copied.
	appendRaw(t, logPath(dir, "src"), []byte(`{"k":"torn"`))
	fork3, recs, err := s.Fork("src", "copy3", nil)
	if err != nil {
		t.Fatal(err)
	}
	mustClose(t, fork3)
	if len(recs) != 4 {
		t.Errorf("fork of a log with a torn line: %v", kinds(recs))
	}
	checkLines(t, logPath(dir, "copy3"), 4)

	for name, tc := range map[string]struct {
		src, id string
		edit    func(*session.Meta)
		want    error
	}{
		"unknown source": {"nope", "n1", nil, session.ErrNotFound},
		"bad source id":  {"../x", "n2", nil, session.ErrInvalidID},
		"bad id":         {"src", "a/b", nil, session.ErrInvalidID},
		"existing id":    {"src", "copy", nil, session.ErrExists},
		"bad edit":       {"src", "n3", func(m *session.Meta) { m.Always["x"] = "maybe" }, nil},
	} {
		_, _, err := s.Fork(tc.src, tc.id, tc.edit)
		if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "sessions"))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"copy", "copy2", "copy3", "src"}) {
		t.Errorf("sessions dir holds %v", names)
	}
}

// TestDelete: a deleted session is gone from the disk, List, Get, Resume
// and Fork, and its id can be created again; an open session is refused
// until closed; an unknown or bad id fails with its error; a session open
// in another Store on the same directory (another process) that goes on
// writing leaves nothing behind; leftovers of an interrupted delete are
// removed by the next Open.
func TestDelete(t *testing.T) {
	s, dir := openStore(t)
	ss := mustCreate(t, s, "d", "/w")
	mustAppend(t, ss, "k", 1)
	mustCreate(t, s, "keep", "/w").Close()
	if err := s.Delete("d"); !errors.Is(err, session.ErrInUse) {
		t.Errorf("Delete of an open session: %v, want ErrInUse", err)
	}
	mustClose(t, ss)
	if err := s.Delete("d"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(sessionDir(dir, "d")); !os.IsNotExist(err) {
		t.Errorf("session directory still there: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "sessions"))
	if len(entries) != 1 || entries[0].Name() != "keep" {
		t.Errorf("sessions dir after Delete: %v", entries)
	}
	metas, _, err := s.List("", "", 0)
	if err != nil || len(metas) != 1 || metas[0].ID != "keep" {
		t.Errorf("List after Delete: %+v %v", metas, err)
	}
	if _, err := s.Get("d"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Get: %v", err)
	}
	if _, _, err := s.Resume("d"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Resume: %v", err)
	}
	if _, _, err := s.Fork("d", "f", nil); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Fork: %v", err)
	}
	for id, want := range map[string]error{"d": session.ErrNotFound, "never": session.ErrNotFound, "../keep": session.ErrInvalidID} {
		if err := s.Delete(id); !errors.Is(err, want) {
			t.Errorf("Delete(%q): %v, want %v", id, err, want)
		}
	}
	mustClose(t, mustCreate(t, s, "d", "/w"))

	// Another process has the session open and goes on writing.
	other, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	elsewhere, _ := mustResume(t, other, "d")
	if err := s.Delete("d"); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, elsewhere, "k", 2)
	if err := elsewhere.UpdateMeta(func(m *session.Meta) { m.Title = "late" }); err == nil {
		t.Error("a metadata write of a deleted session succeeded")
	}
	_ = elsewhere.Close()
	if entries, _ := os.ReadDir(filepath.Join(dir, "sessions")); len(entries) != 1 {
		t.Errorf("left behind by the writer: %v", entries)
	}

	// An interrupted delete: the renamed directory is removed at Open.
	left := filepath.Join(dir, "sessions", ".del-x-0123")
	if err := os.MkdirAll(filepath.Join(left, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(left, "log.jsonl"), json.RawMessage(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := session.Open(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(left); !os.IsNotExist(err) {
		t.Errorf("leftover of a delete not removed at Open: %v", err)
	}
}

// TestDeleteOnlySessions: Delete removes a session's directory and nothing
// else under the sessions directory: a directory without a session's
// metadata (a user's notes) and a link to a directory outside are no
// session, and survive with what they hold.
func TestDeleteOnlySessions(t *testing.T) {
	s, dir := openStore(t)
	sessions := filepath.Join(dir, "sessions")
	mustClose(t, mustCreate(t, s, "real", "/w"))
	notes := filepath.Join(sessions, "notes")
	if err := os.MkdirAll(notes, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notes, "todo.txt"), []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "data"), []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(sessions, "link")); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"notes", "link"} {
		if err := s.Delete(id); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("Delete(%q) = %v, want ErrNotFound", id, err)
		}
	}
	for _, p := range []string{filepath.Join(notes, "todo.txt"), filepath.Join(outside, "data"), filepath.Join(sessions, "link")} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s is gone: %v", p, err)
		}
	}
	if err := s.Delete("real"); err != nil {
		t.Errorf("Delete of a session: %v", err)
	}
}
