package session_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/session"
)

func TestOpenNotADirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{file, filepath.Join(file, "sub"), ""} {
		if s, err := session.Open(dir); err == nil {
			t.Errorf("Open(%q) = %v, want an error", dir, s.Dir())
		}
	}
}

func TestResumeLogsAndCleans(t *testing.T) {
	var logs bytes.Buffer
	dir := t.TempDir()
	s, err := session.OpenWith(dir, &session.Options{
		Now:    newClock().Now,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.Dir() != dir {
		t.Errorf("Dir() = %q, want %q", s.Dir(), dir)
	}
	ss := mustCreate(t, s, "s", "/")
	mustAppend(t, ss, "k", 1)
	mustClose(t, ss)
	appendRaw(t, logPath(dir, "s"), []byte(`{"k":`))
	stale := filepath.Join(sessionDir(dir, "s"), ".meta.json.tmp-123")
	if err := os.WriteFile(stale, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	ss, recs := mustResume(t, s, "s")
	defer mustClose(t, ss)
	if len(recs) != 1 || ss.Dropped() == nil {
		t.Fatalf("Resume: %d records, dropped %v", len(recs), ss.Dropped())
	}
	if !strings.Contains(logs.String(), "torn") || !strings.Contains(logs.String(), "line=2") {
		t.Errorf("no warning about the torn line logged: %q", logs.String())
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary metadata file not removed: %v", err)
	}
}

func TestMetaDeepCopy(t *testing.T) {
	s, _ := openStore(t)
	ss := mustCreate(t, s, "s", "/")
	defer mustClose(t, ss)
	if err := ss.UpdateMeta(func(m *session.Meta) {
		m.Extra["nested"] = map[string]any{"list": []any{"a"}}
	}); err != nil {
		t.Fatal(err)
	}
	m := ss.Meta()
	m.Extra["nested"].(map[string]any)["list"].([]any)[0] = "changed"
	m.Extra["nested"].(map[string]any)["new"] = true
	got := ss.Meta().Extra["nested"].(map[string]any)
	if got["list"].([]any)[0] != "a" || got["new"] != nil {
		t.Errorf("Meta() shares nested Extra values: %v", got)
	}
	g, err := s.Get("s")
	if err != nil {
		t.Fatal(err)
	}
	g.Extra["nested"].(map[string]any)["new"] = true
	if ss.Meta().Extra["nested"].(map[string]any)["new"] != nil {
		t.Error("Get shares nested Extra values of an open session")
	}
}

// TestRecordLine checks that a record's line is the one encoding/json's
// Encoder (HTML left unescaped) writes for it, byte for byte, whatever
// the data holds.
func TestRecordLine(t *testing.T) {
	now := time.Date(2026, 12, 2, 1, 2, 3, 456789, time.FixedZone("x", 3600))
	for _, v := range []any{
		json.RawMessage(`{ "a" : [1, 2] , "b":"<&>\u2028" }`),
		map[string]any{"text": "<b>é\u2029</b>", "n": 1.5},
		"plain", nil, []int{},
	} {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(session.Record{Kind: "update", Time: now, Data: data}); err != nil {
			t.Fatal(err)
		}
		got, err := session.RecordLine("update", now, data)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%v:\n got %s\nwant %s", v, got, want.Bytes())
		}
	}
}
