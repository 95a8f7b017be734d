package session_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgate/acpgate/session"
)

func TestRoundTrip(t *testing.T) {
	s, dir := openStore(t)
	ss := mustCreate(t, s, "s1", "/work/p")
	created := ss.Meta()
	if created.ID != "s1" || created.Cwd != "/work/p" || created.Created.IsZero() || !created.Updated.Equal(created.Created) {
		t.Fatalf("Meta after Create = %+v", created)
	}
	if ss.ID() != "s1" || ss.Dropped() != nil {
		t.Fatalf("ID() = %q, Dropped() = %v", ss.ID(), ss.Dropped())
	}
	type msg struct {
		Role string `json:"role"`
		Text string `json:"text"`
	}
	appends := []struct {
		kind string
		v    any
	}{
		{"user", msg{"user", "hello <world> & \"quotes\"\nnewline"}},
		{"assistant", msg{"assistant", "hi"}},
		{"raw", json.RawMessage(`{ "a" : [1, 2, 3] }`)},
		{"null", nil},
		{"string", "ünïcode \u2028"},
		{"number", 42.5},
		{"map", map[string]any{"x": []any{true, nil}}},
	}
	for _, a := range appends {
		mustAppend(t, ss, a.kind, a.v)
	}
	if err := ss.Sync(); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	afterAppend := ss.Meta()
	if !afterAppend.Updated.After(created.Updated) {
		t.Errorf("Append did not bump Updated: %v -> %v", created.Updated, afterAppend.Updated)
	}
	mustClose(t, ss)
	checkLines(t, logPath(dir, "s1"), len(appends))

	ss, recs := mustResume(t, s, "s1")
	defer mustClose(t, ss)
	if ss.Dropped() != nil {
		t.Errorf("Dropped() = %+v, want nil", ss.Dropped())
	}
	if len(recs) != len(appends) {
		t.Fatalf("Resume returned %d records, want %d", len(recs), len(appends))
	}
	for i, a := range appends {
		r := recs[i]
		var want bytes.Buffer
		if err := json.Compact(&want, mustJSON(t, a.v)); err != nil {
			t.Fatal(err)
		}
		if r.Kind != a.kind || !bytes.Equal(r.Data, want.Bytes()) {
			t.Errorf("record %d = {%q %s}, want {%q %s}", i, r.Kind, r.Data, a.kind, want.Bytes())
		}
		if i > 0 && !r.Time.After(recs[i-1].Time) {
			t.Errorf("record %d time %v not after %v", i, r.Time, recs[i-1].Time)
		}
	}
	var got msg
	if err := json.Unmarshal(recs[0].Data, &got); err != nil || got != appends[0].v {
		t.Errorf("record 0 decodes to %+v, %v", got, err)
	}
	m := ss.Meta()
	if !m.Updated.Equal(recs[len(recs)-1].Time) || !m.Created.Equal(created.Created) || m.Cwd != "/work/p" {
		t.Errorf("Meta after Resume = %+v; want Updated %v, Created %v", m, recs[len(recs)-1].Time, created.Created)
	}
	gm, err := s.Get("s1")
	if err != nil || !gm.Updated.Equal(m.Updated) {
		t.Errorf("Get = %+v, %v", gm, err)
	}
}

func TestAppendErrors(t *testing.T) {
	s, dir := openStore(t)
	ss := mustCreate(t, s, "s", "/")
	defer mustClose(t, ss)
	if err := ss.Append("", 1); err == nil {
		t.Error("Append with empty kind succeeded")
	}
	if err := ss.Append("bad", make(chan int)); err == nil {
		t.Error("Append of a channel succeeded")
	}
	if err := ss.Append("bad", json.RawMessage(`{"unterminated`)); err == nil {
		t.Error("Append of invalid raw JSON succeeded")
	}
	mustAppend(t, ss, "ok", 1) // still usable
	if err := ss.Sync(); err != nil {
		t.Fatal(err)
	}
	checkLines(t, logPath(dir, "s"), 1)
}

func TestTornLastLine(t *testing.T) {
	tests := []struct {
		name   string
		tail   string
		reason string
	}{
		{"partial record", `{"k":"user","t":"2025-01-0`, "unterminated"},
		{"zero bytes", "\x00\x00\x00\x00\x00\x00\x00\x00", "unterminated"},
		{"complete record without newline", `{"k":"x","t":"2025-01-01T00:00:00Z","d":1}`, "unterminated"},
		{"terminated garbage", "garbage\n", "unparsable"},
		{"terminated non-record", "{}\n", "unparsable"},
		{"empty line", "\n", "unparsable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, dir := openStore(t)
			ss := mustCreate(t, s, "torn", "/")
			for i := range 3 {
				mustAppend(t, ss, "n", i)
			}
			mustClose(t, ss)
			path := logPath(dir, "torn")
			size := fileSize(t, path)
			appendRaw(t, path, []byte(tt.tail))

			ss, recs := mustResume(t, s, "torn")
			if len(recs) != 3 {
				t.Fatalf("Resume returned %d records, want 3", len(recs))
			}
			for i, r := range recs {
				if r.Kind != "n" || string(r.Data) != fmt.Sprint(i) {
					t.Errorf("record %d = {%q %s}", i, r.Kind, r.Data)
				}
			}
			d := ss.Dropped()
			if d == nil {
				t.Fatal("Dropped() = nil, want the torn line")
			}
			if d.Line != 4 || d.Offset != size || d.Size != int64(len(tt.tail)) || !strings.Contains(d.Reason, tt.reason) {
				t.Errorf("Dropped() = %+v, want line 4, offset %d, size %d, reason %q", d, size, len(tt.tail), tt.reason)
			}
			if got := fileSize(t, path); got != size {
				t.Errorf("log size after Resume = %d, want %d (truncated)", got, size)
			}
			mustAppend(t, ss, "after", "x")
			mustClose(t, ss)
			checkLines(t, path, 4)

			ss, recs = mustResume(t, s, "torn")
			defer mustClose(t, ss)
			if ss.Dropped() != nil {
				t.Errorf("second Resume: Dropped() = %+v", ss.Dropped())
			}
			if len(recs) != 4 || recs[3].Kind != "after" || string(recs[3].Data) != `"x"` {
				t.Errorf("second Resume returned %d records, last %+v", len(recs), recs[len(recs)-1])
			}
		})
	}
}

func TestCorruptMiddleLine(t *testing.T) {
	good := func(n int) string {
		return fmt.Sprintf(`{"k":"n","t":"2025-01-01T00:00:00Z","d":%d}`+"\n", n)
	}
	tests := []struct {
		name string
		log  string
		line int
	}{
		{"garbage line 2 of 3", good(0) + "garbage\n" + good(2), 2},
		{"garbage first line", "{oops\n" + good(1), 1},
		{"non-record line 3 of 4", good(0) + good(1) + `{"t":"2025-01-01T00:00:00Z"}` + "\n" + good(3), 3},
		{"bad line before a torn tail", good(0) + "garbage\n" + `{"k":`, 2},
		{"blank line in the middle", good(0) + "\n" + good(2), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, dir := openStore(t)
			mustClose(t, mustCreate(t, s, "c", "/"))
			path := logPath(dir, "c")
			if err := os.WriteFile(path, []byte(tt.log), 0o600); err != nil {
				t.Fatal(err)
			}
			for range 2 { // the failed Resume must not leave the session "in use"
				ss, recs, err := s.Resume("c")
				if err == nil {
					ss.Close()
					t.Fatalf("Resume succeeded with %d records, want an error", len(recs))
				}
				var ce *session.CorruptError
				if !errors.As(err, &ce) || ce.Line != tt.line || ce.Path != path {
					t.Fatalf("Resume error = %v, want a CorruptError at %s:%d", err, path, tt.line)
				}
				if want := fmt.Sprintf("%s:%d", path, tt.line); !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %s", err, want)
				}
			}
			if b, _ := os.ReadFile(path); string(b) != tt.log {
				t.Error("a failed Resume modified the log")
			}
		})
	}
}

func TestList(t *testing.T) {
	s, dir := openStore(t)
	// Explicit Updated times, before the fake clock's.
	base := newClock().t.AddDate(-1, 0, 0)
	sessions := []struct {
		id, cwd string
		hours   int
	}{
		{"a", "/p", 5}, {"b", "/q", 5}, {"c", "/p", 9}, {"d", "/p", 1},
		{"e", "/q", 7}, {"f", "/p", 5}, {"g", "/p", 3},
	}
	open := map[string]*session.Session{}
	for _, x := range sessions {
		ss := mustCreate(t, s, x.id, x.cwd)
		updated := base.Add(time.Duration(x.hours) * time.Hour)
		if err := ss.UpdateMeta(func(m *session.Meta) { m.Updated = updated }); err != nil {
			t.Fatal(err)
		}
		open[x.id] = ss
	}
	ids := func(ms []session.Meta) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	type page struct {
		ids  []string
		more bool
	}
	check := func(t *testing.T, cwd string, limit int, want []page) {
		t.Helper()
		cursor := ""
		for i, w := range want {
			ms, next, err := s.List(cwd, cursor, limit)
			if err != nil {
				t.Fatalf("List(%q, page %d): %v", cwd, i, err)
			}
			if got := ids(ms); !slices.Equal(got, w.ids) || (next != "") != w.more {
				t.Fatalf("List(%q, limit %d) page %d = %v, next %q; want %v, more %v", cwd, limit, i, got, next, w.ids, w.more)
			}
			cursor = next
		}
	}
	run := func(t *testing.T) {
		check(t, "", 3, []page{{[]string{"c", "e", "a"}, true}, {[]string{"b", "f", "g"}, true}, {[]string{"d"}, false}})
		check(t, "", 0, []page{{[]string{"c", "e", "a", "b", "f", "g", "d"}, false}})
		check(t, "", 7, []page{{[]string{"c", "e", "a", "b", "f", "g", "d"}, false}})
		check(t, "/p", 2, []page{{[]string{"c", "a"}, true}, {[]string{"f", "g"}, true}, {[]string{"d"}, false}})
		check(t, "/q", 5, []page{{[]string{"e", "b"}, false}})
		check(t, "/nowhere", 5, []page{{nil, false}})
	}
	t.Run("open", run)
	for _, ss := range open {
		mustClose(t, ss)
	}
	t.Run("closed", run)

	t.Run("open session's unsynced update", func(t *testing.T) {
		ss, _ := mustResume(t, s, "d")
		defer mustClose(t, ss)
		mustAppend(t, ss, "x", 1) // Updated = now, later than all others
		check(t, "", 2, []page{{[]string{"d", "c"}, true}})
		var onDisk session.Meta
		b, err := os.ReadFile(metaPath(dir, "d"))
		if err != nil || json.Unmarshal(b, &onDisk) != nil {
			t.Fatalf("read meta: %v", err)
		}
		if onDisk.Updated.Equal(ss.Meta().Updated) {
			t.Error("metadata written before Sync")
		}
	})

	t.Run("invalid cursor", func(t *testing.T) {
		enc := base64.RawURLEncoding.EncodeToString
		for _, c := range []string{
			"!!!",
			enc([]byte("not json")),
			enc([]byte(`{"u":"2025-01-01T00:00:00Z","i":"../x"}`)),
			enc([]byte(`{"u":"yesterday","i":"a"}`)),
		} {
			_, _, err := s.List("", c, 3)
			if !errors.Is(err, session.ErrInvalidCursor) || !strings.Contains(err.Error(), "invalid") {
				t.Errorf("List with cursor %q: error %v, want ErrInvalidCursor", c, err)
			}
		}
	})
}

func TestListSkipsJunk(t *testing.T) {
	s, dir := openStore(t)
	mustClose(t, mustCreate(t, s, "good", "/"))
	mustClose(t, mustCreate(t, s, "badmeta", "/"))
	if err := os.WriteFile(metaPath(dir, "badmeta"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, junk := range []string{".new-x-123", "not.an.id"} {
		if err := os.Mkdir(filepath.Join(dir, "sessions", junk), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ms, next, err := s.List("", "", 0)
	if err != nil || len(ms) != 1 || ms[0].ID != "good" || next != "" {
		t.Errorf("List = %+v, %q, %v; want only good", ms, next, err)
	}
	if _, err := s.Get("badmeta"); err == nil || errors.Is(err, session.ErrNotFound) {
		t.Errorf("Get of corrupt metadata: %v, want a corruption error", err)
	}
}

func TestUpdateMeta(t *testing.T) {
	s, dir := openStore(t)
	ss := mustCreate(t, s, "m", "/w")
	path := metaPath(dir, "m")

	// A reader checks that meta.json always parses while it is rewritten.
	done := make(chan struct{})
	readerErr := make(chan error, 1)
	var reads int
	go func() {
		defer close(readerErr)
		read := func() error {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			var m session.Meta
			if err := json.Unmarshal(b, &m); err != nil {
				return fmt.Errorf("meta.json does not parse: %w: %q", err, b)
			}
			if m.ID != "m" {
				return fmt.Errorf("meta.json has id %q", m.ID)
			}
			reads++
			return nil
		}
		for {
			select {
			case <-done:
				readerErr <- read()
				return
			default:
			}
			if err := read(); err != nil {
				readerErr <- err
				return
			}
		}
	}()
	want := map[string]string{}
	const n = 100
	for i := range n {
		tool := fmt.Sprintf("tool%d", i%7)
		decision := session.AlwaysAllow
		if i%3 == 0 {
			decision = session.AlwaysReject
		}
		want[tool] = decision
		if err := ss.UpdateMeta(func(m *session.Meta) {
			m.Title = fmt.Sprintf("title %d", i)
			m.Mode = "code"
			m.Always[tool] = decision
			m.Extra["n"] = float64(i)
		}); err != nil {
			t.Fatalf("UpdateMeta %d: %v", i, err)
		}
	}
	close(done)
	if err := <-readerErr; err != nil {
		t.Fatal(err)
	}
	if reads == 0 {
		t.Fatal("reader never read")
	}
	entries, err := os.ReadDir(sessionDir(dir, "m"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"log.jsonl", "meta.json"}) {
		t.Errorf("session dir holds %v, want only log.jsonl and meta.json", names)
	}

	before := ss.Meta()
	for name, fn := range map[string]func(*session.Meta){
		"bad decision": func(m *session.Meta) { m.Title = "nope"; m.Always["x"] = "maybe" },
		"id change":    func(m *session.Meta) { m.Title = "nope"; m.ID = "other" },
		"bad extra":    func(m *session.Meta) { m.Title = "nope"; m.Extra["c"] = make(chan int) },
	} {
		if err := ss.UpdateMeta(fn); err == nil {
			t.Errorf("UpdateMeta with %s succeeded", name)
		}
	}
	if got := ss.Meta(); got.Title != before.Title || !maps.Equal(got.Always, before.Always) {
		t.Errorf("failed UpdateMeta changed the metadata: %+v", got)
	}
	// Meta returns a copy.
	cp := ss.Meta()
	cp.Always["tool0"] = "changed"
	if ss.Meta().Always["tool0"] == "changed" {
		t.Error("Meta() shares its Always map")
	}
	mustClose(t, ss)

	got, err := s.Get("m")
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != fmt.Sprintf("title %d", n-1) || got.Mode != "code" || !maps.Equal(got.Always, want) || got.Extra["n"] != float64(n-1) {
		t.Errorf("Get after UpdateMeta = %+v, want Always %v", got, want)
	}
	ss, _ = mustResume(t, s, "m")
	defer mustClose(t, ss)
	if m := ss.Meta(); !maps.Equal(m.Always, want) || m.Title != got.Title {
		t.Errorf("Meta after Resume = %+v", m)
	}
	// Clearing the maps persists them as absent.
	if err := ss.UpdateMeta(func(m *session.Meta) { clear(m.Always); clear(m.Extra) }); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(`"always"`)) || bytes.Contains(b, []byte(`"extra"`)) {
		t.Errorf("cleared maps still written: %s", b)
	}
}

func TestConcurrentAppend(t *testing.T) {
	s, dir := openStore(t)
	ss := mustCreate(t, s, "conc", "/")
	const workers, each = 8, 150
	type item struct{ W, N int }
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for n := range each {
				if err := ss.Append("item", item{w, n}); err != nil {
					errs <- err
					return
				}
				if n%50 == 49 {
					if err := ss.Sync(); err != nil {
						errs <- err
						return
					}
				}
				_ = ss.Meta()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	mustClose(t, ss)
	checkLines(t, logPath(dir, "conc"), workers*each)

	ss, recs := mustResume(t, s, "conc")
	defer mustClose(t, ss)
	if len(recs) != workers*each {
		t.Fatalf("Resume returned %d records, want %d", len(recs), workers*each)
	}
	next := make([]int, workers)
	for i, r := range recs {
		var it item
		if err := json.Unmarshal(r.Data, &it); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if it.N != next[it.W] {
			t.Fatalf("record %d: worker %d item %d, want item %d", i, it.W, it.N, next[it.W])
		}
		next[it.W]++
	}
}

func TestIDs(t *testing.T) {
	s, dir := openStore(t)
	bad := []string{"", "../x", "a/b", ".", "..", "a b", "é", "x.y", "a\x00", "a\\b", strings.Repeat("a", session.MaxIDLen+1)}
	for _, id := range bad {
		if ss, err := s.Create(id, "/"); !errors.Is(err, session.ErrInvalidID) {
			if ss != nil {
				ss.Close()
			}
			t.Errorf("Create(%q): %v, want ErrInvalidID", id, err)
		}
		if _, _, err := s.Resume(id); !errors.Is(err, session.ErrInvalidID) {
			t.Errorf("Resume(%q): %v, want ErrInvalidID", id, err)
		}
		if _, err := s.Get(id); !errors.Is(err, session.ErrInvalidID) {
			t.Errorf("Get(%q): %v, want ErrInvalidID", id, err)
		}
	}
	if entries, err := os.ReadDir(filepath.Join(dir, "sessions")); err != nil || len(entries) != 0 {
		t.Errorf("sessions dir after bad ids: %v, %v", entries, err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "x")); err == nil {
		t.Error(`"../x" escaped the store`)
	}
	for _, id := range []string{strings.Repeat("a", session.MaxIDLen), "A-z_09", "-", "_"} {
		if !session.ValidID(id) {
			t.Errorf("ValidID(%q) = false", id)
		}
		mustClose(t, mustCreate(t, s, id, "/"))
	}
}

func TestNotFound(t *testing.T) {
	s, _ := openStore(t)
	if _, _, err := s.Resume("nope"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Resume: %v, want ErrNotFound", err)
	}
	if _, err := s.Get("nope"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Get: %v, want ErrNotFound", err)
	}
}

func TestOpenClosedInUse(t *testing.T) {
	s, _ := openStore(t)
	ss := mustCreate(t, s, "x", "/")
	if _, err := s.Create("x", "/"); !errors.Is(err, session.ErrExists) {
		t.Errorf("Create of an open session: %v, want ErrExists", err)
	}
	if _, _, err := s.Resume("x"); !errors.Is(err, session.ErrInUse) || !strings.Contains(err.Error(), "in use") {
		t.Errorf("Resume of an open session: %v, want ErrInUse", err)
	}
	mustAppend(t, ss, "k", 1)
	mustClose(t, ss)
	if err := ss.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	for name, call := range map[string]func() error{
		"Append":     func() error { return ss.Append("k", 2) },
		"Sync":       ss.Sync,
		"UpdateMeta": func() error { return ss.UpdateMeta(func(m *session.Meta) { m.Title = "t" }) },
	} {
		if err := call(); !errors.Is(err, session.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
	if _, err := s.Create("x", "/"); !errors.Is(err, session.ErrExists) {
		t.Errorf("Create of a closed session: %v, want ErrExists", err)
	}
	ss, recs := mustResume(t, s, "x")
	mustClose(t, ss)
	if len(recs) != 1 {
		t.Errorf("Resume after Close returned %d records, want 1", len(recs))
	}
}

// TestResumeAfterCrash resumes, through a second Store (as another process
// would after a crash), a session whose last appends were never synced.
func TestResumeAfterCrash(t *testing.T) {
	s, dir := openStore(t)
	ss := mustCreate(t, s, "crash", "/")
	t.Cleanup(func() { ss.Close() })
	mustAppend(t, ss, "k", 1)
	if err := ss.Sync(); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, ss, "k", 2)
	mustAppend(t, ss, "k", 3)
	other := mustCreate(t, s, "other", "/")
	mustAppend(t, other, "k", 1)
	if err := other.Sync(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })

	s2, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ss2, recs := mustResume(t, s2, "crash")
	defer mustClose(t, ss2)
	if len(recs) != 3 {
		t.Fatalf("Resume returned %d records, want 3", len(recs))
	}
	if m := ss2.Meta(); !m.Updated.Equal(recs[2].Time) {
		t.Errorf("Updated = %v, want the last record's time %v", m.Updated, recs[2].Time)
	}
	other2, recs := mustResume(t, s2, "other")
	defer mustClose(t, other2)
	if len(recs) != 1 {
		t.Errorf("other session: %d records, want 1", len(recs))
	}
}

func TestDefaultDir(t *testing.T) {
	home := t.TempDir()
	tests := []struct {
		name    string
		xdg     *string
		home    *string
		want    string
		wantErr bool
	}{
		{"XDG_STATE_HOME set", ptr("/x/state"), &home, "/x/state/acpgate", false},
		{"XDG_STATE_HOME unset", nil, &home, filepath.Join(home, ".local/state/acpgate"), false},
		{"XDG_STATE_HOME empty", ptr(""), &home, filepath.Join(home, ".local/state/acpgate"), false},
		{"XDG_STATE_HOME relative", ptr("rel/state"), &home, filepath.Join(home, ".local/state/acpgate"), false},
		{"XDG set, HOME unset", ptr("/x/state"), nil, "/x/state/acpgate", false},
		{"nothing set", nil, nil, "", true},
	}
	setenv := func(t *testing.T, k string, v *string) {
		t.Setenv(k, "") // restores the original value after the test
		if v == nil {
			os.Unsetenv(k)
		} else {
			os.Setenv(k, *v)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setenv(t, "XDG_STATE_HOME", tt.xdg)
			setenv(t, "HOME", tt.home)
			got, err := session.DefaultDir()
			if tt.wantErr {
				if err == nil {
					t.Errorf("DefaultDir() = %q, want an error", got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("DefaultDir() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
