package jsonrpc_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpgate/acpgate/acp/jsonrpc"
)

// With MaxInFlight requests in flight, one more is refused at once with
// -32603; the requests in flight can still be cancelled, and the answer
// to a Call of a handler holding a slot is still read.
func TestRequestsInFlightBounded(t *testing.T) {
	t.Parallel()
	var c *jsonrpc.Conn
	c, p := pair(t, jsonrpc.Options{MaxInFlight: 2, CancelMethod: "$/cancel_request", Handler: func(ctx context.Context, r *jsonrpc.Request) (any, error) {
		switch r.Method {
		case "ask":
			var answer string
			err := c.Call(ctx, "question", nil, &answer)
			return answer, err
		case "hold":
			<-ctx.Done()
			return nil, &jsonrpc.Error{Code: -32800, Message: "cancelled"}
		}
		return "fast", nil
	}})
	p.send(t, `{"jsonrpc":"2.0","id":"a","method":"ask"}`)
	q := p.next(t)
	if q["method"] != "question" {
		t.Fatalf("the handler's call: %v", q)
	}
	p.send(t, `{"jsonrpc":"2.0","id":"h","method":"hold"}`, `{"jsonrpc":"2.0","id":"x","method":"fast"}`)
	if m := p.next(t); m["id"] != "x" || errCode(m) != jsonrpc.CodeInternalError || !strings.Contains(fmt.Sprint(m["error"]), "2 requests are in flight") {
		t.Fatalf("the request over the bound: %v, want -32603 naming the bound", m)
	}
	p.send(t, `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"h"}}`)
	if m := p.next(t); m["id"] != "h" || errCode(m) != -32800 {
		t.Fatalf("the request cancelled at the bound: %v", m)
	}
	p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":"yes"}`, q["id"]))
	if m := p.next(t); m["id"] != "a" || m["result"] != "yes" {
		t.Fatalf("the request whose handler's call was answered at the bound: %v", m)
	}
	p.send(t, `{"jsonrpc":"2.0","id":"y","method":"fast"}`)
	if m := p.next(t); m["id"] != "y" || m["result"] != "fast" {
		t.Fatalf("a request once the slots are free: %v", m)
	}
}

// signalHandler is a slog.Handler that closes seen at the first record
// whose message has prefix.
type signalHandler struct {
	prefix string
	once   sync.Once
	seen   chan struct{}
}

func (h *signalHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *signalHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *signalHandler) WithGroup(string) slog.Handler            { return h }
func (h *signalHandler) Handle(_ context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, h.prefix) {
		h.once.Do(func() { close(h.seen) })
	}
	return nil
}

// A peer that writes requests and reads nothing gets at most MaxInFlight
// of them handled: their answers cannot be written, so their slots stay
// taken; the next is refused, and the Conn, unable to write the refusal,
// stops reading. Once the peer reads, every request is answered, handled
// or refused.
func TestUnreadPeerStopsReading(t *testing.T) {
	t.Parallel()
	const bound, sent = 4, 500
	var calls atomic.Int64
	refused := &signalHandler{prefix: "peer requests refused", seen: make(chan struct{})}
	c, p := pair(t, jsonrpc.Options{MaxInFlight: bound, Logger: slog.New(refused), Handler: func(ctx context.Context, r *jsonrpc.Request) (any, error) {
		calls.Add(1)
		return "done", nil
	}})
	written := make(chan error, 1)
	go func() {
		// A line a write: the Conn's reader takes one write at a time,
		// so the peer's writing ends only when the Conn has read it all.
		for i := range sent {
			if _, err := fmt.Fprintf(p.w, `{"jsonrpc":"2.0","id":%d,"method":"work"}`+"\n", i); err != nil {
				written <- err
				return
			}
		}
		written <- nil
	}()
	select {
	case <-refused.seen:
	case err := <-written:
		t.Fatalf("all %d requests were read with none of the answers (err %v): reading does not stop", sent, err)
	}
	if n := calls.Load(); n > bound {
		t.Fatalf("%d requests handled while the peer read nothing, over the bound of %d", n, bound)
	}
	var handled, refusals int
	for range sent {
		switch m := p.next(t); {
		case m["result"] == "done":
			handled++
		case errCode(m) == jsonrpc.CodeInternalError:
			refusals++
		default:
			t.Fatalf("answered %v", m)
		}
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if refusals == 0 || int64(handled) != calls.Load() {
		t.Fatalf("%d handled (of %d handler calls), %d refused", handled, calls.Load(), refusals)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = p.w.Close()
	if err := c.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}
