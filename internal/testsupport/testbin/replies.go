package testbin

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

// Replies lets a test send an ACP agent JSON-RPC requests of its own
// (Call) next to a client's traffic, for methods acp-go-sdk's client side
// does not have or sends in older shapes: it reads the agent's output
// (written to it line by line, e.g. through an io.TeeReader) and keeps
// the answers to those requests, whose ids are strings starting with
// "raw-" (the SDK ignores answers to ids it did not send). The zero value
// is ready; it is safe for concurrent use.
type Replies struct {
	mu      sync.Mutex
	n       int
	partial []byte
	got     map[string]Reply
	changed chan struct{} // closed at the next answer
}

// Reply is a JSON-RPC response as the agent wrote it (Raw).
type Reply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    struct {
			Path string `json:"path"`
		} `json:"data"`
	} `json:"error"`
	Raw string `json:"-"`
}

// replyPrefix starts the ids of the requests Call sends.
const replyPrefix = "raw-"

// Write takes the agent's output. Only lines that may answer a request
// of Call's are decoded, so a flood of output costs little.
func (r *Replies) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if bytes.IndexByte(p, '\n') < 0 { // the line goes on
		r.partial = append(r.partial, p...)
		return len(p), nil
	}
	r.partial = append(r.partial, p...)
	rest := r.partial
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		line := rest[:i]
		rest = rest[i+1:]
		if bytes.Contains(line, []byte(`"`+replyPrefix)) {
			r.take(line)
		}
	}
	r.partial = append(r.partial[:0], rest...)
	return len(p), nil
}

// take keeps line if it answers a request of Call's.
func (r *Replies) take(line []byte) {
	var m struct {
		Method *string `json:"method"`
		Reply
	}
	var id string
	if json.Unmarshal(line, &m) != nil || m.Method != nil || json.Unmarshal(m.ID, &id) != nil || !strings.HasPrefix(id, replyPrefix) {
		return
	}
	m.Raw = strings.TrimSpace(string(line))
	if r.got == nil {
		r.got = map[string]Reply{}
	}
	r.got[id] = m.Reply
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

// Call writes a request for method with params (marshalled) to the
// agent's input w, as one write of one line, and returns its answer,
// failing the test if none comes within 30 s.
func (r *Replies) Call(t testing.TB, w io.Writer, method string, params any) Reply {
	t.Helper()
	r.mu.Lock()
	r.n++
	id := fmt.Sprintf("%s%d", replyPrefix, r.n)
	r.mu.Unlock()
	line := JSON(t, map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := io.WriteString(w, line+"\n"); err != nil {
		t.Fatal(err)
	}
	guard := time.NewTimer(30 * time.Second)
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
			t.Fatalf("no answer to %s %s", method, id)
		}
	}
}
