package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpgate/acpgate/mcpclient/wire"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// This file is MCP over ACP as mcpclient sees it: an acp server
// (TransportACP) lives in the ACP client, and a Tunnel, which the agent
// provides, opens connections to it and carries its MCP messages both
// ways. mcpclient speaks no ACP: here a connection becomes an mcp-go
// transport (tunnelTransport) and a link (tunnelLink), and from then on an
// acp server has the lifecycle, status, restart rules, limits and
// teardown of every other server.

// Tunnel opens connections to the servers that live in the ACP client (a
// connection may be one on the wire, or, request-scoped as ACP has it now,
// only the server's id that every request names). Implementations are
// safe for concurrent use.
type Tunnel interface {
	// Open opens a new connection to the server the client declared as
	// serverID and returns it; what the server sends on it goes to h from
	// the moment Open has registered it (the server speaks only after our
	// initialize, in practice). ctx bounds the opening only. The error
	// says why no connection was opened: the client's error answer is a
	// *RequestError.
	Open(ctx context.Context, serverID string, h TunnelHandler) (TunnelConn, error)
}

// TunnelConn is one open connection through a Tunnel. Safe for concurrent
// use.
type TunnelConn interface {
	// Request sends the MCP request method with params (nil: none) and
	// waits for its answer: the result, or a *RequestError carrying the
	// server's error answer, or another error when no answer came (ctx
	// ended, the connection ended). The result is the caller's: in a
	// buffer that the TunnelConn neither reads nor writes once Request
	// has returned, which the caller may change (a large text is
	// unescaped where it lies).
	Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// Notify sends the MCP notification method with params (nil: none).
	Notify(ctx context.Context, method string, params json.RawMessage) error
	// Done is closed when the connection ends on its own: the ACP
	// connection closed.
	Done() <-chan struct{}
	// Close ends the connection: from its call on, nothing the server
	// sends reaches the handler, and the client is told within ctx. It
	// is idempotent; the error says the client could not be told.
	Close(ctx context.Context) error
}

// TunnelHandler receives what a server sends on a TunnelConn.
type TunnelHandler interface {
	// HandleRequest answers the server's request (elicitation/create,
	// sampling/createMessage, roots/list, ping, ...) with its result, or
	// with an error: a *RequestError is the error answer to send, any
	// other error is answered as an internal error. It is called
	// concurrently and may take until ctx ends.
	HandleRequest(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// HandleNotification handles the server's notification. It is called
	// in the order the notifications came and must not block.
	HandleNotification(method string, params json.RawMessage)
}

// tunnelTransport is the mcp-go transport of an acp server's connection:
// requests and notifications go through the TunnelConn, and what the
// server sends comes in through HandleRequest and HandleNotification (it
// is the connection's TunnelHandler). Like the stdio transport, a
// response's result larger than Options.MaxMessageSize fails its request
// with ErrResponseTooLarge, and Close fails every request waiting. Safe for
// concurrent use; conn is set once, before Start.
type tunnelTransport struct {
	conn TunnelConn
	max  int
	life context.Context // ends at Close
	stop context.CancelFunc
	seq  atomic.Int64 // ids of the server's requests, as our handlers see them
	wire.HandlerSlots

	mu       sync.Mutex
	serveCtx context.Context // Start's: the server's requests are handled in it
}

var (
	_ transport.BidirectionalInterface = (*tunnelTransport)(nil)
	_ TunnelHandler                    = (*tunnelTransport)(nil)
)

func newTunnelTransport(maxMessage int) *tunnelTransport {
	life, stop := context.WithCancel(context.Background())
	return &tunnelTransport{max: maxMessage, life: life, stop: stop, serveCtx: context.Background()}
}

// Start implements transport.Interface; ctx is the context the server's
// requests are handled in.
func (t *tunnelTransport) Start(ctx context.Context) error {
	t.mu.Lock()
	t.serveCtx = ctx
	t.mu.Unlock()
	return nil
}

// Close fails every request waiting and drops what the server sends from
// now on. Idempotent; the connection itself is the link's business.
func (t *tunnelTransport) Close() error {
	t.stop()
	return nil
}

// GetSessionId implements transport.Interface: a tunnel has no session id.
func (t *tunnelTransport) GetSessionId() string { return "" }

// SendRequest sends req and waits for its answer, ctx's end or the
// transport's.
func (t *tunnelTransport) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	if t.life.Err() != nil {
		return nil, transport.ErrTransportClosed
	}
	params, err := rawParams(req.Params)
	if err != nil {
		return nil, fmt.Errorf("marshal request: %w", err)
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(t.life, cancel)()
	res, err := t.conn.Request(rctx, req.Method, params)
	var re *RequestError
	switch {
	case errors.As(err, &re):
		details := &mcp.JSONRPCErrorDetails{Code: re.Code, Message: re.Message}
		if len(re.Data) > 0 {
			details.Data = re.Data
		}
		return &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: req.ID, Error: details}, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil && (t.life.Err() != nil || isDone(t.conn.Done())):
		return nil, fmt.Errorf("%w: %w", transport.ErrTransportClosed, err)
	case err != nil:
		return nil, err
	case len(res) > t.max:
		return nil, fmt.Errorf("%w: %d bytes (the limit is %d)", ErrResponseTooLarge, len(res), t.max)
	}
	return &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: req.ID, Result: res}, nil
}

// SendNotification implements transport.Interface.
func (t *tunnelTransport) SendNotification(ctx context.Context, n mcp.JSONRPCNotification) error {
	if t.life.Err() != nil {
		return transport.ErrTransportClosed
	}
	params, err := rawParams(n.Params)
	if err != nil {
		return fmt.Errorf("marshal notification: %w", err)
	}
	return t.conn.Notify(ctx, n.Method, params)
}

// HandleRequest implements TunnelHandler: the server's request goes to
// the request handler mcp-go's client set (acpgate's serve chain first),
// as a request on the wire of a stdio server would.
func (t *tunnelTransport) HandleRequest(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	_, h := t.Handlers()
	t.mu.Lock()
	serveCtx := t.serveCtx
	t.mu.Unlock()
	switch {
	case t.life.Err() != nil:
		return nil, &RequestError{Code: mcp.INTERNAL_ERROR, Message: "the connection is closed"}
	case h == nil:
		return nil, &RequestError{Code: mcp.METHOD_NOT_FOUND, Message: "No request handler configured"}
	case len(params) > t.max:
		return nil, &RequestError{Code: mcp.INVALID_REQUEST, Message: fmt.Sprintf("request too large: %d bytes (the limit is %d)", len(params), t.max)}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(serveCtx, cancel)()
	defer context.AfterFunc(t.life, cancel)()
	req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(t.seq.Add(1)), Method: method}
	if len(params) > 0 {
		req.Params = params
	}
	resp, err := h(ctx, req)
	switch {
	case err != nil:
		return nil, &RequestError{Code: mcp.INTERNAL_ERROR, Message: err.Error()}
	case resp == nil:
		return nil, &RequestError{Code: mcp.INTERNAL_ERROR, Message: "no answer"}
	case resp.Error != nil:
		re := &RequestError{Code: resp.Error.Code, Message: resp.Error.Message}
		if resp.Error.Data != nil {
			re.Data, _ = json.Marshal(resp.Error.Data)
		}
		return nil, re
	case len(resp.Result) == 0:
		return json.RawMessage("{}"), nil
	}
	return resp.Result, nil
}

// HandleNotification implements TunnelHandler; a notification that does
// not decode, or is over the size limit, is dropped, as the stdio
// transport drops a line it cannot read.
func (t *tunnelTransport) HandleNotification(method string, params json.RawMessage) {
	h, _ := t.Handlers()
	if h == nil || t.life.Err() != nil || len(params) > t.max {
		return
	}
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION}
	n.Method = method
	if len(params) > 0 && json.Unmarshal(params, &n.Params) != nil {
		return
	}
	h(n)
}

// rawParams encodes the params of a message; nil and null are none.
func rawParams(p any) (json.RawMessage, error) {
	if p == nil {
		return nil, nil
	}
	b, err := json.Marshal(p)
	if err != nil || string(b) == "null" {
		return nil, err
	}
	return b, nil
}

// isDone reports whether ch is closed.
func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// tunnelLink is the link of an acp server: the connection dies with the
// ACP connection, and closing it is the Tunnel's (the agent's shape of MCP
// over ACP may tell the client, or have nothing to tell). A client that
// cannot be told changes nothing on our side: that is logged, not
// returned.
type tunnelLink struct {
	conn   TunnelConn
	logger *slog.Logger
}

func (l tunnelLink) done() <-chan struct{} { return l.conn.Done() }
func (l tunnelLink) reason() error {
	return fmt.Errorf("%w: the ACP connection it was reached through closed", ErrConnLost)
}
func (l tunnelLink) stderrTail() string { return "" }

// close ends the connection, within total, sooner when hurry closes.
func (l tunnelLink) close(_, total time.Duration, hurry <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), total)
	defer cancel()
	go func() {
		select {
		case <-hurry:
			cancel()
		case <-ctx.Done():
		}
	}()
	if err := l.conn.Close(ctx); err != nil {
		l.logger.Warn("the ACP client was not told the connection closed", "err", err)
	}
	return nil
}

// dialTunnel opens a connection to an acp server through Options.Tunnel
// and completes the initialize handshake over it. A connection the client
// refuses fails with the client's error.
func (dl *dialer) dialTunnel(life, ctx context.Context, spec *ServerSpec) (*conn, error) {
	t := newTunnelTransport(dl.env.opts.MaxMessageSize)
	tc, err := dl.env.opts.Tunnel.Open(ctx, spec.ServerID, t)
	if err != nil {
		_ = t.Close()
		if ctx.Err() != nil && life.Err() == nil {
			return nil, fmt.Errorf("connect: no answer within %s", spec.ConnectTimeout)
		}
		return nil, err
	}
	t.conn = tc
	l := tunnelLink{conn: tc, logger: dl.env.logger}
	schemas, notes, tasks := &toolListing{}, wire.NewNotices(life), newClientTasks(life, dl.env.logger)
	c := &conn{
		client:    dl.newClient(t, schemas, notes, tasks),
		tasks:     tasks,
		notes:     notes,
		link:      l,
		transport: TransportACP,
		schemas:   schemas,
	}
	if err := dl.handshake(life, ctx, c); err != nil {
		_ = c.client.Close()
		_ = l.close(0, dl.env.opts.CloseTimeout, dl.env.hurry)
		return nil, err
	}
	return c, nil
}
