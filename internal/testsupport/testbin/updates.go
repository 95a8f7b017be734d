package testbin

import (
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/testsupport/acpschema"
)

// Updates records the session/update notifications an ACP agent writes,
// as it wrote them, in order: for the update kinds acp-go-sdk's client
// side does not decode (notice, compaction_update, …) and for the order
// of updates of every kind. Feed it the agent's output line by line
// (Writer, e.g. through an io.TeeReader). Safe for concurrent use; make
// it with NewUpdates.
type Updates struct {
	w *acpschema.LineWriter

	mu      sync.Mutex
	all     []Update
	changed chan struct{} // closed at the next update
}

// Update is one session/update: its session, its sessionUpdate and the
// update as written.
type Update struct {
	SessionID string
	Kind      string
	Raw       json.RawMessage
}

// Decode decodes the update into v, failing the test if it cannot.
func (u Update) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(u.Raw, v); err != nil {
		t.Fatalf("decoding a %s update: %v", u.Kind, err)
	}
}

// NewUpdates returns an empty record.
func NewUpdates() *Updates {
	u := &Updates{}
	u.w = acpschema.Lines(u.take)
	return u
}

// Write takes the agent's output.
func (u *Updates) Write(p []byte) (int, error) { return u.w.Write(p) }

// take records line if it is a session/update.
func (u *Updates) take(line []byte) {
	var m struct {
		Method string `json:"method"`
		Params struct {
			SessionID string          `json:"sessionId"`
			Update    json.RawMessage `json:"update"`
		} `json:"params"`
	}
	var kind struct {
		SessionUpdate string `json:"sessionUpdate"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method != "session/update" || json.Unmarshal(m.Params.Update, &kind) != nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.all = append(u.all, Update{SessionID: m.Params.SessionID, Kind: kind.SessionUpdate, Raw: m.Params.Update})
	if u.changed != nil {
		close(u.changed)
		u.changed = nil
	}
}

// Len is how many updates have been recorded.
func (u *Updates) Len() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.all)
}

// Since returns the updates of session sid from index from on, of the
// given kinds (none: every kind).
func (u *Updates) Since(from int, sid string, kinds ...string) []Update {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []Update
	for _, up := range u.all[from:] {
		if up.SessionID == sid && (len(kinds) == 0 || slices.Contains(kinds, up.Kind)) {
			out = append(out, up)
		}
	}
	return out
}

// WaitFor waits until match holds for an update of session sid at index
// from or later and returns it, failing the test (naming what) if none
// does within 30 s.
func (u *Updates) WaitFor(t testing.TB, from int, sid, what string, match func(Update) bool) Update {
	t.Helper()
	guard := time.NewTimer(30 * time.Second)
	defer guard.Stop()
	for {
		u.mu.Lock()
		for _, up := range u.all[from:] {
			if up.SessionID == sid && match(up) {
				u.mu.Unlock()
				return up
			}
		}
		if u.changed == nil {
			u.changed = make(chan struct{})
		}
		ch := u.changed
		u.mu.Unlock()
		select {
		case <-ch:
		case <-guard.C:
			t.Fatalf("no %s among the session/update notifications", what)
		}
	}
}
