package acp_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawReplies picks out of the agent's output the answers to the requests
// a test writes itself (harness.call), for methods acp-go-sdk's client
// side does not have or sends in older shapes; the SDK ignores answers to
// ids it did not send. Safe for concurrent use.
type rawReplies struct {
	mu      sync.Mutex
	n       int
	partial []byte
	got     map[string]rpcReply
	changed chan struct{} // closed at the next answer
}

// rawPrefix starts the ids of raw requests.
const rawPrefix = "raw-"

// Write takes the agent's output, line by line.
func (r *rawReplies) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.partial = append(r.partial, p...)
	for {
		i := bytes.IndexByte(r.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := strings.TrimSpace(string(r.partial[:i]))
		r.partial = append(r.partial[:0], r.partial[i+1:]...)
		var m struct {
			Method *string `json:"method"`
			rpcReply
		}
		var id string
		if json.Unmarshal([]byte(line), &m) != nil || m.Method != nil || json.Unmarshal(m.ID, &id) != nil || !strings.HasPrefix(id, rawPrefix) {
			continue
		}
		m.raw = line
		if r.got == nil {
			r.got = map[string]rpcReply{}
		}
		r.got[id] = m.rpcReply
		if r.changed != nil {
			close(r.changed)
			r.changed = nil
		}
	}
}

// nextID returns a fresh raw request id.
func (r *rawReplies) nextID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	return fmt.Sprintf("%s%d", rawPrefix, r.n)
}

// wait returns the answer to id once it has arrived.
func (r *rawReplies) wait(t *testing.T, id string) rpcReply {
	t.Helper()
	guard := time.NewTimer(hangGuard)
	defer guard.Stop()
	for {
		r.mu.Lock()
		reply, ok := r.got[id]
		if !ok && r.changed == nil {
			r.changed = make(chan struct{})
		}
		ch := r.changed
		r.mu.Unlock()
		if ok {
			return reply
		}
		select {
		case <-ch:
		case <-guard.C:
			t.Fatalf("no answer to %s", id)
		}
	}
}

// call sends a request as raw JSON (params marshalled) next to the SDK's
// traffic and returns its answer.
func (h *harness) call(method string, params any) rpcReply {
	h.t.Helper()
	id := h.raw.nextID()
	line := mustJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := io.WriteString(h.in, line+"\n"); err != nil {
		h.t.Fatal(err)
	}
	return h.raw.wait(h.t, id)
}
