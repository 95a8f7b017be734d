package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// StdioTransport is the MCP transport of a stdio server: JSON-RPC messages,
// one a line, read from the server's stdout through JSONLines and written
// to its stdin. It implements transport.BidirectionalInterface the way
// mcp-go's own stdio transport does (responses go to the request waiting
// for them by id; notifications to the notification handler, on the reader
// goroutine; server requests such as ping and roots/list to the request
// handler, each on a goroutine of its own; when stdout ends, every request
// waiting fails with transport.ErrTransportClosed), but reads each message
// once into a buffer of its own and decodes it once, handing a response's
// result on as a slice of that buffer: a large result costs its size once
// here instead of five times. Its made-up "response too large" answers
// (see TooLargeIDs) fail their request with ErrResponseTooLarge. Safe for
// concurrent use; Start once.
type StdioTransport struct {
	lines    *JSONLines
	stdin    io.WriteCloser
	tooLarge *TooLargeIDs

	// Peek, if set (before Start), is called on the reader goroutine
	// with each response and the context of the request it answers,
	// before that request sees it and before the next message is read:
	// what it records is known before anything the server sent after the
	// response is handled (mcpclient adopts a created task there, so the
	// task's progress that follows is reported as the task's). It must be
	// quick and must not block.
	Peek func(ctx context.Context, resp *transport.JSONRPCResponse)

	writeMu sync.Mutex // one frame at a time on stdin
	HandlerSlots

	mu      sync.Mutex
	pending map[string]waiter
	ctx     context.Context // for server requests: the Start context
	started bool

	done      chan struct{} // closed when stdout ends or on Close
	closeOnce sync.Once
}

// waiter is a request waiting for its response.
type waiter struct {
	ch  chan *transport.JSONRPCResponse
	ctx context.Context
}

// NewStdioTransport returns the transport of a stdio server reading its
// stdout through lines and writing its stdin; tooLarge is the one lines
// records its made-up answers in.
func NewStdioTransport(lines *JSONLines, stdin io.WriteCloser, tooLarge *TooLargeIDs) *StdioTransport {
	return &StdioTransport{
		lines:    lines,
		stdin:    stdin,
		tooLarge: tooLarge,
		pending:  map[string]waiter{},
		ctx:      context.Background(),
		done:     make(chan struct{}),
	}
}

// Start starts reading stdout; ctx is the context server requests are
// handled in. Starting again is a no-op.
func (t *StdioTransport) Start(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.started {
		return nil
	}
	t.started, t.ctx = true, ctx
	go t.readLoop()
	return nil
}

// Close fails every waiting request and closes the server's stdin. It is
// idempotent; the process itself is the link's business.
func (t *StdioTransport) Close() error {
	t.finish()
	var err error
	t.closeOnce.Do(func() { err = t.stdin.Close() })
	if err != nil {
		return fmt.Errorf("close stdin: %w", err)
	}
	return nil
}

// finish marks the transport done (once).
func (t *StdioTransport) finish() {
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-t.done:
	default:
		close(t.done)
	}
}

// Done is closed when the server's stdout ends or on Close.
func (t *StdioTransport) Done() <-chan struct{} { return t.done }

// GetSessionId implements transport.Interface: stdio has no session id.
func (t *StdioTransport) GetSessionId() string { return "" }

// SendRequest writes req and waits for its response, ctx's end or the
// transport's.
func (t *StdioTransport) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	select {
	case <-t.done:
		return nil, transport.ErrTransportClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	default:
	}
	frame, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("marshal request: %w", err)
	}
	key := req.ID.String()
	ch := make(chan *transport.JSONRPCResponse, 1)
	t.mu.Lock()
	t.pending[key] = waiter{ch: ch, ctx: ctx}
	t.mu.Unlock()
	forget := func() {
		t.mu.Lock()
		delete(t.pending, key)
		t.mu.Unlock()
	}
	if err := t.write(frame); err != nil {
		forget()
		return nil, fmt.Errorf("write request: %w", err)
	}
	select {
	case resp := <-ch:
		return t.checkSize(resp)
	case <-ctx.Done():
		forget()
		return nil, ctx.Err()
	case <-t.done:
		select { // an answer that came just before the end
		case resp := <-ch:
			return t.checkSize(resp)
		default:
		}
		forget()
		return nil, transport.ErrTransportClosed
	}
}

// checkSize turns a made-up "response too large" answer into its error.
func (t *StdioTransport) checkSize(resp *transport.JSONRPCResponse) (*transport.JSONRPCResponse, error) {
	if t.tooLarge.Take(resp) {
		return nil, fmt.Errorf("%w: %s", ErrResponseTooLarge, resp.Error.Message)
	}
	return resp, nil
}

// SendNotification implements transport.Interface.
func (t *StdioTransport) SendNotification(ctx context.Context, n mcp.JSONRPCNotification) error {
	select {
	case <-t.done:
		return transport.ErrTransportClosed
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	frame, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("marshal notification: %w", err)
	}
	if err := t.write(frame); err != nil {
		return fmt.Errorf("write notification: %w", err)
	}
	return nil
}

// write sends one frame (a newline is added).
func (t *StdioTransport) write(frame []byte) error {
	frame = append(frame, '\n')
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	_, err := t.stdin.Write(frame)
	return err
}

// HandlerSlots keeps the handlers mcp-go's client gives a transport for
// what the server sends: its notifications and its requests. The zero
// value is ready. Safe for concurrent use; embedded by the transports
// (StdioTransport, mcpclient's tunnel).
type HandlerSlots struct {
	hmu       sync.Mutex
	onNotify  func(mcp.JSONRPCNotification)
	onRequest transport.RequestHandler
}

// SetNotificationHandler implements transport.Interface.
func (s *HandlerSlots) SetNotificationHandler(h func(mcp.JSONRPCNotification)) {
	s.hmu.Lock()
	s.onNotify = h
	s.hmu.Unlock()
}

// SetRequestHandler implements transport.BidirectionalInterface.
func (s *HandlerSlots) SetRequestHandler(h transport.RequestHandler) {
	s.hmu.Lock()
	s.onRequest = h
	s.hmu.Unlock()
}

// Handlers returns the handlers set so far (nil: none).
func (s *HandlerSlots) Handlers() (func(mcp.JSONRPCNotification), transport.RequestHandler) {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	return s.onNotify, s.onRequest
}

// RawRef is a JSON value kept as a slice of the text it was decoded from,
// uncopied. Only for texts in buffers nobody writes to again (see
// JSONLines.Next).
type RawRef []byte

// UnmarshalJSON implements json.Unmarshaler.
func (r *RawRef) UnmarshalJSON(b []byte) error {
	*r = b
	return nil
}

// envelope is what one decoding of a message tells: its kind, and for a
// response its id, error and result (a slice of the message).
type envelope struct {
	ID     *mcp.RequestId           `json:"id"`
	Method string                   `json:"method"`
	Result RawRef                   `json:"result"`
	Error  *mcp.JSONRPCErrorDetails `json:"error"`
}

// readLoop reads and dispatches messages until stdout ends, then ends the
// transport.
func (t *StdioTransport) readLoop() {
	defer t.finish()
	for {
		line, err := t.lines.Next()
		if err != nil {
			return
		}
		t.dispatch(line)
	}
}

// dispatch hands one message on; a line that is not a JSON-RPC message is
// skipped, as mcp-go does, and one that is not JSON at all with the
// warning of the other non-JSON lines.
func (t *StdioTransport) dispatch(line []byte) {
	var env envelope
	if json.Unmarshal(line, &env) != nil {
		t.lines.notJSON(line)
		return
	}
	switch {
	case env.Method != "" && env.ID == nil:
		var n mcp.JSONRPCNotification
		if json.Unmarshal(line, &n) != nil {
			return
		}
		if h, _ := t.Handlers(); h != nil {
			h(n)
		}
	case env.Method != "":
		var req transport.JSONRPCRequest
		if json.Unmarshal(line, &req) == nil {
			t.serve(req)
		}
	case env.ID != nil:
		resp := &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: *env.ID,
			Result: json.RawMessage(env.Result), Error: env.Error}
		key := env.ID.String()
		t.mu.Lock()
		w, ok := t.pending[key]
		delete(t.pending, key)
		t.mu.Unlock()
		if ok {
			if t.Peek != nil {
				t.Peek(w.ctx, resp)
			}
			w.ch <- resp
		}
	}
}

// serve answers a request from the server with the request handler, on a
// goroutine of its own (a handler may send requests itself); without a
// handler it answers "method not found".
func (t *StdioTransport) serve(req transport.JSONRPCRequest) {
	_, h := t.Handlers()
	t.mu.Lock()
	ctx := t.ctx
	t.mu.Unlock()
	if h == nil {
		t.respond(transport.NewJSONRPCErrorResponse(req.ID, mcp.METHOD_NOT_FOUND, "No request handler configured", nil))
		return
	}
	go func() {
		if err := ctx.Err(); err != nil {
			t.respond(transport.NewJSONRPCErrorResponse(req.ID, mcp.INTERNAL_ERROR, err.Error(), nil))
			return
		}
		resp, err := h(ctx, req)
		switch {
		case err != nil:
			t.respond(transport.NewJSONRPCErrorResponse(req.ID, mcp.INTERNAL_ERROR, err.Error(), nil))
		case resp != nil:
			t.respond(resp)
		}
	}()
}

// respond writes resp; a failure means the server is gone, which the link
// reports.
func (t *StdioTransport) respond(resp *transport.JSONRPCResponse) {
	if frame, err := json.Marshal(resp); err == nil {
		_ = t.write(frame)
	}
}
