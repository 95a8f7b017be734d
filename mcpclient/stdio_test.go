package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgate/acpgate/mcpclient/wire"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// scriptedPeer is the server end of a wire.StdioTransport over in-process pipes:
// the test reads what the transport wrote and writes what the server says.
type scriptedPeer struct {
	in  *bufio.Reader  // what the transport wrote
	out *io.PipeWriter // what the transport reads
}

// read returns the next message the transport wrote.
func (p *scriptedPeer) read(t *testing.T) map[string]any {
	t.Helper()
	line, err := p.in.ReadBytes('\n')
	if err != nil {
		t.Fatalf("peer read: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("peer read %q: %v", line, err)
	}
	return m
}

// say writes lines to the transport.
func (p *scriptedPeer) say(t *testing.T, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(p.out, l+"\n"); err != nil {
			t.Fatalf("peer write: %v", err)
		}
	}
}

// pipeTransport returns a started wire.StdioTransport whose server is the
// returned peer; max bounds one message.
func pipeTransport(t *testing.T, max int) (*wire.StdioTransport, *scriptedPeer) {
	t.Helper()
	sr, sw := io.Pipe() // server -> transport
	cr, cw := io.Pipe() // transport -> server
	gate := newLogGate(slog.New(slog.DiscardHandler), nil, Unlimited, 0, time.Now)
	ids := &wire.TooLargeIDs{}
	tr := wire.NewStdioTransport(wire.NewJSONLines(sr, max, gate, ids, nil), cw, ids)
	if err := tr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = tr.Close()
		_ = sw.Close()
		_ = cr.Close()
	})
	return tr, &scriptedPeer{in: bufio.NewReader(cr), out: sw}
}

func request(id int64, method string) transport.JSONRPCRequest {
	return transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id), Method: method}
}

// send runs SendRequest on a goroutine; the result arrives on the channel.
func send(tr *wire.StdioTransport, ctx context.Context, req transport.JSONRPCRequest) <-chan sent {
	ch := make(chan sent, 1)
	go func() {
		resp, err := tr.SendRequest(ctx, req)
		ch <- sent{resp, err}
	}()
	return ch
}

type sent struct {
	resp *transport.JSONRPCResponse
	err  error
}

func TestStdioTransportOutOfOrderWithNotifications(t *testing.T) {
	t.Parallel()
	tr, peer := pipeTransport(t, 1<<20)
	notes := make(chan mcp.JSONRPCNotification, 4)
	tr.SetNotificationHandler(func(n mcp.JSONRPCNotification) { notes <- n })

	first := send(tr, context.Background(), request(1, "a"))
	if got := peer.read(t); got["method"] != "a" {
		t.Fatalf("peer got %v", got)
	}
	second := send(tr, context.Background(), request(2, "b"))
	if got := peer.read(t); got["method"] != "b" {
		t.Fatalf("peer got %v", got)
	}
	peer.say(t,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"one"}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"which":"b"}}`,
		`not json at all`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"which":"a"}}`,
	)
	for i, ch := range []<-chan sent{first, second} {
		r := <-ch
		want := fmt.Sprintf(`{"which":%q}`, []string{"a", "b"}[i])
		if r.err != nil || string(r.resp.Result) != want {
			t.Fatalf("request %d: %v, %s; want %s", i+1, r.err, r.resp.Result, want)
		}
	}
	for _, want := range []string{"notifications/message", "notifications/progress"} {
		if n := <-notes; n.Method != want {
			t.Fatalf("notification %q, want %q", n.Method, want)
		}
	}
}

func TestStdioTransportAnswersServerRequests(t *testing.T) {
	t.Parallel()
	tr, peer := pipeTransport(t, 1<<20)
	// Without a handler: "method not found", as mcp-go answers.
	peer.say(t, `{"jsonrpc":"2.0","id":"s1","method":"roots/list"}`)
	got := peer.read(t)
	if e, _ := got["error"].(map[string]any); got["id"] != "s1" || e["code"] != float64(mcp.METHOD_NOT_FOUND) {
		t.Fatalf("answer without handler: %v", got)
	}
	// With one: its answer, or its error.
	tr.SetRequestHandler(func(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
		if req.Method == "fail" {
			return nil, errors.New("no such luck")
		}
		return transport.NewJSONRPCResultResponse(req.ID, json.RawMessage(`{"method":"`+req.Method+`"}`)), nil
	})
	peer.say(t, `{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	if got := peer.read(t); got["id"] != float64(7) || got["result"].(map[string]any)["method"] != "ping" {
		t.Fatalf("answer: %v", got)
	}
	peer.say(t, `{"jsonrpc":"2.0","id":8,"method":"fail"}`)
	got = peer.read(t)
	if e, _ := got["error"].(map[string]any); got["id"] != float64(8) || e["message"] != "no such luck" {
		t.Fatalf("error answer: %v", got)
	}
}

func TestStdioTransportEOFFailsPending(t *testing.T) {
	t.Parallel()
	tr, peer := pipeTransport(t, 1<<20)
	pending := send(tr, context.Background(), request(1, "slow"))
	peer.read(t)
	_ = peer.out.Close() // the server's stdout ends
	if r := <-pending; !errors.Is(r.err, transport.ErrTransportClosed) {
		t.Fatalf("pending request: %v, want ErrTransportClosed", r.err)
	}
	if _, err := tr.SendRequest(context.Background(), request(2, "late")); !errors.Is(err, transport.ErrTransportClosed) {
		t.Fatalf("request after EOF: %v", err)
	}
	if err := tr.SendNotification(context.Background(), mcp.JSONRPCNotification{}); !errors.Is(err, transport.ErrTransportClosed) {
		t.Fatalf("notification after EOF: %v", err)
	}
}

func TestStdioTransportCloseFailsPendingAndClosesStdin(t *testing.T) {
	t.Parallel()
	tr, peer := pipeTransport(t, 1<<20)
	pending := send(tr, context.Background(), request(1, "slow"))
	peer.read(t)
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if r := <-pending; !errors.Is(r.err, transport.ErrTransportClosed) {
		t.Fatalf("pending request: %v", r.err)
	}
	if _, err := peer.in.ReadBytes('\n'); !errors.Is(err, io.EOF) {
		t.Fatalf("server stdin after Close: %v, want EOF", err)
	}
	if err := tr.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestStdioTransportCancelledRequestForgotten(t *testing.T) {
	t.Parallel()
	tr, peer := pipeTransport(t, 1<<20)
	ctx, cancel := context.WithCancel(context.Background())
	pending := send(tr, ctx, request(1, "slow"))
	peer.read(t)
	cancel()
	if r := <-pending; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled request: %v", r.err)
	}
	// A late answer goes nowhere; the transport goes on working.
	peer.say(t, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	next := send(tr, context.Background(), request(2, "next"))
	peer.read(t)
	peer.say(t, `{"jsonrpc":"2.0","id":2,"result":{"ok":true}}`)
	if r := <-next; r.err != nil || string(r.resp.Result) != `{"ok":true}` {
		t.Fatalf("next request: %v %s", r.err, r.resp.Result)
	}
}

func TestStdioTransportTooLargeFailsAtOnce(t *testing.T) {
	t.Parallel()
	tr, peer := pipeTransport(t, 100)
	pending := send(tr, context.Background(), request(1, "big"))
	peer.read(t)
	peer.say(t, `{"jsonrpc":"2.0","id":1,"result":{"text":"`+strings.Repeat("x", 200)+`"}}`)
	if r := <-pending; !errors.Is(r.err, ErrResponseTooLarge) {
		t.Fatalf("over-long answer: %v, want ErrResponseTooLarge", r.err)
	}
}

func TestStdioTransportConcurrentCalls(t *testing.T) {
	t.Parallel()
	tr, peer := pipeTransport(t, 1<<20)
	const n = 64
	go func() { // echo each request's method as its result, answering in pairs reversed
		var held []map[string]any
		for i := 0; i < n; i++ {
			line, err := peer.in.ReadBytes('\n')
			if err != nil {
				return
			}
			var m map[string]any
			_ = json.Unmarshal(line, &m)
			held = append(held, m)
			if len(held) == 2 || i == n-1 {
				for j := len(held) - 1; j >= 0; j-- {
					id, _ := json.Marshal(held[j]["id"])
					_, _ = fmt.Fprintf(peer.out, `{"jsonrpc":"2.0","id":%s,"result":{"m":%q}}`+"\n", id, held[j]["method"])
				}
				held = held[:0]
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			method := fmt.Sprintf("m%d", i)
			resp, err := tr.SendRequest(context.Background(), request(int64(i+1), method))
			if err != nil {
				errs <- err
				return
			}
			if want := fmt.Sprintf(`{"m":%q}`, method); string(resp.Result) != want {
				errs <- fmt.Errorf("request %d got %s, want %s", i+1, resp.Result, want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestStdioTransportWithMCPClient runs mcp-go's client over the transport:
// initialize, notifications/initialized, a ping from the server answered by
// the client's own handler, and a tools/call.
func TestStdioTransportWithMCPClient(t *testing.T) {
	t.Parallel()
	tr, peer := pipeTransport(t, 1<<20)
	c := client.NewClient(tr, client.WithProtocolVersion(ProtocolVersion))
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	initDone := make(chan error, 1)
	go func() {
		req := mcp.InitializeRequest{}
		req.Params.ProtocolVersion = ProtocolVersion
		req.Params.ClientInfo = mcp.Implementation{Name: DefaultClientName, Version: DefaultClientVersion}
		_, err := c.Initialize(context.Background(), req)
		initDone <- err
	}()
	got := peer.read(t)
	if got["method"] != "initialize" {
		t.Fatalf("first message %v", got)
	}
	id, _ := json.Marshal(got["id"])
	peer.say(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"p","version":"1"}}}`, id, ProtocolVersion))
	if got := peer.read(t); got["method"] != "notifications/initialized" {
		t.Fatalf("after initialize: %v", got)
	}
	if err := <-initDone; err != nil {
		t.Fatal(err)
	}
	peer.say(t, `{"jsonrpc":"2.0","id":"ping-1","method":"ping"}`)
	if got := peer.read(t); got["id"] != "ping-1" || got["result"] == nil {
		t.Fatalf("ping answer: %v", got)
	}
}

// A line that starts like JSON but is not JSON is skipped with the warning
// of the other non-JSON lines (within the log budget), and the messages
// around it go on.
func TestStdioTransportWarnsOfBadJSON(t *testing.T) {
	t.Parallel()
	sr, sw := io.Pipe()
	cr, cw := io.Pipe()
	var logs bytes.Buffer // written on the reader goroutine before the answer is handed over
	gate := newLogGate(slog.New(slog.NewTextHandler(&logs, nil)), nil, Unlimited, 0, time.Now)
	ids := &wire.TooLargeIDs{}
	tr := wire.NewStdioTransport(wire.NewJSONLines(sr, 1<<20, gate, ids, nil), cw, ids)
	if err := tr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close(); _ = sw.Close(); _ = cr.Close() })
	peer := &scriptedPeer{in: bufio.NewReader(cr), out: sw}
	got := send(tr, context.Background(), request(1, "a"))
	peer.read(t)
	peer.say(t, `{"jsonrpc": not json at all`, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	if r := <-got; r.err != nil || r.resp.Error != nil {
		t.Fatalf("the answer after the bad line: %+v", r)
	}
	if !strings.Contains(logs.String(), "skipped non-JSON line on server stdout") || !strings.Contains(logs.String(), "not json at all") {
		t.Fatalf("no warning for the bad line:\n%s", logs.String())
	}
}
