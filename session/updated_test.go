package session_test

import (
	"testing"
	"time"

	"github.com/acpgate/acpgate/session"
)

// TestUpdatedSurvivesCrash: appends move Updated without rewriting the
// metadata file at every Sync; a Store that did not see Close (a crash)
// still reports when the session was last written, from its log.
func TestUpdatedSurvivesCrash(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	st, err := session.OpenWith(dir, &session.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	ss, err := st.Create("crashy", "/work")
	if err != nil {
		t.Fatal(err)
	}
	created := ss.Meta().Updated
	now = now.Add(time.Hour)
	if err := ss.Append("update", map[string]string{"x": "y"}); err != nil {
		t.Fatal(err)
	}
	if err := ss.Sync(); err != nil {
		t.Fatal(err)
	}
	// No Close: another Store (a new process) reads the session.
	other, err := session.OpenWith(dir, &session.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	m, err := other.Get("crashy")
	if err != nil {
		t.Fatal(err)
	}
	if !m.Updated.Equal(now) || m.Updated.Equal(created) {
		t.Errorf("Updated %v, want the last append's time %v", m.Updated, now)
	}
	list, _, err := other.List("", "", 0)
	if err != nil || len(list) != 1 || !list[0].Updated.Equal(now) {
		t.Errorf("List: %+v %v", list, err)
	}
	_ = ss.Close()
}
