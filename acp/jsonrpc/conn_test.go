package jsonrpc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpgate/acpgate/acp/jsonrpc"
)

// peer is the other end of a Conn: it writes lines to the Conn and reads
// the Conn's lines.
type peer struct {
	w *io.PipeWriter
	r *bufio.Reader
}

// pair starts a Conn with opts over pipes and returns it and its peer.
func pair(t *testing.T, opts jsonrpc.Options) (*jsonrpc.Conn, *peer) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := jsonrpc.New(inR, outW, opts)
	c.Start()
	t.Cleanup(func() { _ = inW.Close(); _ = outR.Close() })
	return c, &peer{w: inW, r: bufio.NewReaderSize(outR, 1<<20)}
}

func (p *peer) send(t *testing.T, lines ...string) {
	t.Helper()
	if _, err := io.WriteString(p.w, strings.Join(lines, "\n")+"\n"); err != nil {
		t.Fatal(err)
	}
}

// next reads the Conn's next message.
func (p *peer) next(t *testing.T) map[string]any {
	t.Helper()
	line, err := p.r.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	return m
}

func errCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// A request is answered when its handler returns, whatever the order:
// the second request's answer comes first.
func TestRepliesOutOfOrder(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	_, p := pair(t, jsonrpc.Options{Handler: func(ctx context.Context, r *jsonrpc.Request) (any, error) {
		if r.Method == "slow" {
			<-release
		}
		return r.Method, nil
	}})
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"slow"}`, `{"jsonrpc":"2.0","id":"b","method":"fast"}`)
	if m := p.next(t); m["id"] != "b" || m["result"] != "fast" {
		t.Fatalf("first answer %v, want fast's", m)
	}
	close(release)
	if m := p.next(t); m["id"] != float64(1) || m["result"] != "slow" {
		t.Fatalf("second answer %v, want slow's", m)
	}
}

// Bad lines get the JSON-RPC error that names them, and the connection
// goes on.
func TestBadInput(t *testing.T) {
	t.Parallel()
	_, p := pair(t, jsonrpc.Options{MaxLine: 100, Handler: func(ctx context.Context, r *jsonrpc.Request) (any, error) {
		if r.Method == "known" {
			return map[string]int{"n": 1}, nil
		}
		return nil, fmt.Errorf("%w: %s", jsonrpc.ErrMethodNotFound, r.Method)
	}})
	for _, tc := range []struct {
		line string
		code float64
		id   any
	}{
		{`not json`, jsonrpc.CodeParseError, nil},
		{`{"jsonrpc":"2.0","id":7}`, jsonrpc.CodeInvalidRequest, float64(7)},
		{`{"jsonrpc":"2.0","id":8,"method":"unknown"}`, jsonrpc.CodeMethodNotFound, float64(8)},
		{`{"jsonrpc":"2.0","id":9,"method":"known","params":{"pad":"` + strings.Repeat("x", 200) + `"}}`, jsonrpc.CodeInvalidRequest, float64(9)},
	} {
		p.send(t, tc.line)
		if m := p.next(t); errCode(m) != tc.code || m["id"] != tc.id {
			t.Errorf("%.40s: answered %v, want code %v id %v", tc.line, m, tc.code, tc.id)
		}
	}
	p.send(t, `{"jsonrpc":"2.0","id":10,"method":"known"}`)
	if m := p.next(t); m["id"] != float64(10) || m["error"] != nil {
		t.Fatalf("after the bad lines: %v", m)
	}
}

// A burst of notifications more than the queue holds never ends the
// connection: what fits is handled in order, the rest is dropped and
// counted, a cancellation preempts the queue, and a request after the
// burst is answered.
func TestNotificationBurst(t *testing.T) {
	t.Parallel()
	const burst = 100_000
	block := make(chan struct{})
	var handled, preempted atomic.Int64
	var last atomic.Int64
	inOrder := atomic.Bool{}
	inOrder.Store(true)
	c, p := pair(t, jsonrpc.Options{
		Queue: 16,
		Preempt: func(r *jsonrpc.Request) bool {
			if r.Method == "cancel" {
				preempted.Add(1)
				return true
			}
			return false
		},
		Handler: func(ctx context.Context, r *jsonrpc.Request) (any, error) {
			if r.IsCall() {
				return "ok", nil
			}
			<-block
			var n int64
			_ = json.Unmarshal(r.Params, &n)
			if n <= last.Load() {
				inOrder.Store(false)
			}
			last.Store(n)
			handled.Add(1)
			return nil, nil
		},
	})
	var b strings.Builder
	for i := range burst {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"note","params":%d}`+"\n", i+1)
	}
	b.WriteString(`{"jsonrpc":"2.0","method":"cancel"}` + "\n")
	b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"ask"}` + "\n")
	done := make(chan struct{})
	go func() { defer close(done); _, _ = io.WriteString(p.w, b.String()) }()
	if m := p.next(t); m["id"] != float64(1) || m["result"] != "ok" {
		t.Fatalf("the request after the burst: %v", m)
	}
	<-done
	if preempted.Load() != 1 {
		t.Fatal("the cancellation waited behind the queue")
	}
	select {
	case <-c.Done():
		t.Fatal("the connection ended")
	default:
	}
	close(block)
	_ = p.w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if n := handled.Load(); n == 0 || n >= burst || !inOrder.Load() {
		t.Fatalf("%d of %d notifications handled (in order: %v): want some, in order, the rest dropped", n, burst, inOrder.Load())
	}
}

// Call matches answers by id, returns an error response as an *Error, and
// when its context ends, sends the cancellation notification and returns.
func TestCall(t *testing.T) {
	t.Parallel()
	c, p := pair(t, jsonrpc.Options{CancelMethod: "$/cancel_request", Handler: func(ctx context.Context, r *jsonrpc.Request) (any, error) { return nil, nil }})
	type result struct {
		V   string
		err error
	}
	ask := func(ctx context.Context) <-chan result {
		ch := make(chan result, 1)
		go func() {
			var v string
			err := c.Call(ctx, "ask", map[string]int{"x": 1}, &v)
			ch <- result{v, err}
		}()
		return ch
	}
	first, second := ask(context.Background()), ask(context.Background())
	m1, m2 := p.next(t), p.next(t)
	if m1["method"] != "ask" || m2["method"] != "ask" || m1["id"] == m2["id"] {
		t.Fatalf("requests %v %v", m1, m2)
	}
	id1, _ := json.Marshal(m1["id"])
	id2, _ := json.Marshal(m2["id"])
	p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"no"}}`, id2), fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":"yes"}`, id1))
	results := []result{<-first, <-second}
	var e *jsonrpc.Error
	okCount, errCount := 0, 0
	for _, r := range results {
		switch {
		case r.err == nil && r.V == "yes":
			okCount++
		case errors.As(r.err, &e) && e.Code == -32000:
			errCount++
		}
	}
	if okCount != 1 || errCount != 1 {
		t.Fatalf("results %+v", results)
	}
	ctx, cancel := context.WithCancel(context.Background())
	third := ask(ctx)
	m3 := p.next(t)
	cancel()
	if r := <-third; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("a cancelled call: %v", r.err)
	}
	n := p.next(t)
	params, _ := n["params"].(map[string]any)
	if n["method"] != "$/cancel_request" || params["requestId"] != m3["id"] {
		t.Fatalf("cancellation %v for %v", n, m3["id"])
	}
}

// Errors keep the id a message starts with: a line over MaxLine and one
// nested deeper than the decoder goes are answered with it; with the id
// after the part at fault, or an id that is not a string or a number, the
// answer's id is null. Members are matched exactly: "Method" is not
// "method".
func TestErrorsKeepTheLeadingID(t *testing.T) {
	t.Parallel()
	_, p := pair(t, jsonrpc.Options{MaxLine: 1 << 20, Handler: func(context.Context, *jsonrpc.Request) (any, error) { return "ok", nil }})
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	for _, tc := range []struct {
		line string
		code float64
		id   any
	}{
		{`{"jsonrpc":"2.0","id":"big-1","method":"m","params":{"text":"` + strings.Repeat("x", 1<<20) + `"}}`, jsonrpc.CodeInvalidRequest, "big-1"},
		{`{"jsonrpc":"2.0","id":42,"method":"m","params":` + deep + `}`, jsonrpc.CodeParseError, float64(42)},
		{`{"jsonrpc":"2.0","method":"m","params":` + deep + `,"id":43}`, jsonrpc.CodeParseError, nil},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"m","params":` + deep + `}`, jsonrpc.CodeParseError, nil},
		{`{"jsonrpc":"2.0","id":5,"Method":"m"}`, jsonrpc.CodeInvalidRequest, float64(5)},
		{`{"jsonrpc":"1.0","id":6,"method":"m"}`, jsonrpc.CodeInvalidRequest, float64(6)},
		{`[{"jsonrpc":"2.0","id":7,"method":"m"}]`, jsonrpc.CodeInvalidRequest, nil},
	} {
		p.send(t, tc.line)
		if m := p.next(t); errCode(m) != tc.code || m["id"] != tc.id {
			t.Errorf("%.60s: answered %.200v, want code %v id %v", tc.line, m, tc.code, tc.id)
		}
	}
}

// A response whose error member is malformed, or that is over MaxLine,
// fails the call it answers with an internal error instead of leaving it
// waiting; a well-formed error reaches the caller as it was.
func TestBadAnswersFailTheCall(t *testing.T) {
	t.Parallel()
	c, p := pair(t, jsonrpc.Options{MaxLine: 1 << 16, Handler: func(context.Context, *jsonrpc.Request) (any, error) { return nil, nil }})
	for _, answer := range []string{
		`{"jsonrpc":"2.0","id":%s,"error":"denied"}`,
		`{"jsonrpc":"2.0","id":%s,"error":{"code":1.5,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":%s,"result":{"text":"` + strings.Repeat("x", 1<<16) + `"}}`,
		`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"nope","data":{"a":1}}}`,
	} {
		done := make(chan error, 1)
		go func() { done <- c.Call(context.Background(), "ask", nil, nil) }()
		m := p.next(t)
		id, _ := json.Marshal(m["id"])
		p.send(t, fmt.Sprintf(answer, id))
		err := <-done
		var e *jsonrpc.Error
		want := jsonrpc.CodeInternalError
		if strings.Contains(answer, "-32601") {
			want = jsonrpc.CodeMethodNotFound
		}
		if !errors.As(err, &e) || e.Code != want {
			t.Errorf("%.60s: the call returned %v, want code %d", answer, err, want)
		}
		if want == jsonrpc.CodeMethodNotFound && string(e.Data) != `{"a":1}` {
			t.Errorf("the error's data: %s", e.Data)
		}
	}
}

// $/cancel_request ends the context of the handler of the request it
// names; a request's answer may carry a function run after it is written
// (Then).
func TestCancelRequestAndThen(t *testing.T) {
	t.Parallel()
	after := make(chan struct{})
	_, p := pair(t, jsonrpc.Options{CancelMethod: "$/cancel_request", Handler: func(ctx context.Context, r *jsonrpc.Request) (any, error) {
		switch r.Method {
		case "wait":
			<-ctx.Done()
			return nil, &jsonrpc.Error{Code: -32800, Message: "cancelled"}
		case "then":
			return jsonrpc.Then{Result: "made", After: func() { close(after) }}, nil
		}
		return nil, jsonrpc.ErrMethodNotFound
	}})
	p.send(t, `{"jsonrpc":"2.0","id":"w","method":"wait"}`, `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"w"}}`)
	if m := p.next(t); m["id"] != "w" || errCode(m) != -32800 {
		t.Fatalf("the cancelled request: %v", m)
	}
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"then"}`)
	if m := p.next(t); m["result"] != "made" {
		t.Fatalf("then: %v", m)
	}
	<-after
}

// A Call returns only once the notifications the peer sent before its
// answer have been handled.
func TestCallWaitsForEarlierNotifications(t *testing.T) {
	t.Parallel()
	release, marked := make(chan struct{}), make(chan struct{})
	var seen atomic.Bool
	c, p := pair(t, jsonrpc.Options{
		// "marker", sent after the answer, is read (on the reading
		// goroutine) only once the answer has been handed to the call.
		Preempt: func(r *jsonrpc.Request) bool {
			if r.Method == "marker" {
				close(marked)
				return true
			}
			return false
		},
		Handler: func(ctx context.Context, r *jsonrpc.Request) (any, error) {
			<-release
			seen.Store(true)
			return nil, nil
		},
	})
	done := make(chan error, 1)
	go func() { done <- c.Call(context.Background(), "ask", nil, nil) }()
	m := p.next(t)
	id, _ := json.Marshal(m["id"])
	p.send(t, `{"jsonrpc":"2.0","method":"progress"}`, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":null}`, id), `{"jsonrpc":"2.0","method":"marker"}`)
	<-marked
	select {
	case err := <-done:
		t.Fatalf("the call returned (%v) before the notification sent before its answer was handled", err)
	default:
	}
	close(release)
	if err := <-done; err != nil || !seen.Load() {
		t.Fatalf("call: %v, notification handled: %v", err, seen.Load())
	}
}

// After the peer closed its end, a Call still writes its request (the
// peer may read on) and returns ErrClosed at once.
func TestCallAfterTheEndIsWritten(t *testing.T) {
	t.Parallel()
	c, p := pair(t, jsonrpc.Options{Handler: func(context.Context, *jsonrpc.Request) (any, error) { return nil, nil }})
	_ = p.w.Close()
	<-c.Done()
	done := make(chan error, 1)
	go func() { done <- c.Call(context.Background(), "bye", nil, nil) }()
	if m := p.next(t); m["method"] != "bye" {
		t.Fatalf("wrote %v", m)
	}
	if err := <-done; !errors.Is(err, jsonrpc.ErrClosed) {
		t.Fatalf("call: %v", err)
	}
}
