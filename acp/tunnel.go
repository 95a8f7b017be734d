package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp/jsonrpc"
	"github.com/acpgate/acpgate/mcpclient"
)

// This file is MCP over ACP (unstable in ACP), request-scoped as the
// schema has it since #2223: the client declares a server
// {"type":"acp","name","serverId"}; each MCP request acpgate makes of it
// is one ACP request mcp/message {serverId, requestId, method, params},
// answered with exactly one of {"result": …} or {"error": McpError} (an
// MCP error is a successful ACP answer; an ACP error is a binding failure:
// -33001 unknown server, -33000 resource limit, -33002 backend failed,
// -32602, -32800). What the server sends while a request runs (progress,
// a subscriptions/listen stream's notifications) comes back as mcp/message
// notifications naming that request; a request is cancelled with
// $/cancel_request. There is no connection and no handshake: the
// requests carry the stateless 2026-07-28 revision (server/discover
// first). mcpclient gives such a server the lifecycle, limits and
// teardown of any other (its tunnel.go).

// mcpCapabilities are the MCP transports the agent takes besides stdio,
// as initialize advertises them: http, sse and acp (MCP over ACP).
// session/new and the rest take acp servers once initialize has
// advertised them.
func mcpCapabilities() acpsdk.McpCapabilities {
	return acpsdk.McpCapabilities{Http: true, Sse: true, Acp: true}
}

// codeMCPUnknownServer is the schema's ACP error for an mcp/message that
// names a server the receiver does not provide.
const codeMCPUnknownServer = -33001

// errTunnel: the client could not carry an MCP request (an ACP error
// answer to mcp/message: the server is unknown to it, a limit, its
// backend failed). The MCP request has no answer; the server fails.
var errTunnel = errors.New("MCP over ACP: the client did not carry the request")

// tunnel is the agent's side of MCP over ACP, one per ACP connection; it
// implements mcpclient.Tunnel, which makes an acp server one more
// transport of the sessions' MCP clients. Safe for concurrent use.
type tunnel struct {
	peer   *peer
	logger *slog.Logger
	seq    atomic.Uint64 // numbers the requestIds

	mu     sync.Mutex
	active map[requestKey]*tunnelConn // requests in flight
}

// requestKey names one MCP request in flight: the server, the requestId.
type requestKey struct{ server, request string }

var _ mcpclient.Tunnel = (*tunnel)(nil)

func newTunnel(pe *peer, logger *slog.Logger) *tunnel {
	return &tunnel{peer: pe, logger: logger, active: map[requestKey]*tunnelConn{}}
}

// messageParams are the params of mcp/message, either way.
type messageParams struct {
	ServerID  string          `json:"serverId"`
	RequestID string          `json:"requestId"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params,omitempty"`
	Meta      map[string]any  `json:"_meta,omitempty"`
}

// Open implements mcpclient.Tunnel. Nothing is sent: the requests name the
// server themselves.
func (t *tunnel) Open(_ context.Context, serverID string, h mcpclient.TunnelHandler) (mcpclient.TunnelConn, error) {
	return &tunnelConn{t: t, server: serverID, handler: h, closed: make(chan struct{})}, nil
}

// message serves an mcp/message from the client. A notification carries
// what a server says during one of our requests: it goes to the handler of
// the connection that request is on (one naming no request in flight is
// dropped: the request has ended). A request asks acpgate for an MCP
// server of its own, and acpgate provides none to the client: it is
// -33001 (after -32602 for params that are not the schema's).
func (t *tunnel) message(_ context.Context, params json.RawMessage, request bool) (any, error) {
	var p messageParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, badParam("", "%v", err)
	}
	for _, m := range []struct{ name, value string }{{"serverId", p.ServerID}, {"requestId", p.RequestID}, {"method", p.Method}} {
		if m.value == "" {
			return nil, badParam(m.name, "missing")
		}
	}
	if request {
		data, _ := json.Marshal(map[string]string{"serverId": p.ServerID})
		return nil, &jsonrpc.Error{Code: codeMCPUnknownServer, Message: fmt.Sprintf("unknown MCP server %q: acpgate provides no MCP servers to the client", p.ServerID), Data: data}
	}
	if string(p.Params) == "null" {
		p.Params = nil
	}
	t.mu.Lock()
	c := t.active[requestKey{p.ServerID, p.RequestID}]
	t.mu.Unlock()
	if c == nil {
		t.logger.Debug("mcp/message for no request in flight; dropped", "server", p.ServerID, "request", p.RequestID, "method", p.Method)
		return nil, nil
	}
	c.handler.HandleNotification(p.Method, p.Params)
	return nil, nil
}

// tunnelConn is a server's requests as mcpclient sees them: a
// connection with no state on the wire. Safe for concurrent use.
type tunnelConn struct {
	t       *tunnel
	server  string // the client's serverId
	handler mcpclient.TunnelHandler

	closeOnce sync.Once
	closed    chan struct{} // closed by Close: no request goes out after
}

var _ mcpclient.TunnelConn = (*tunnelConn)(nil)

// messageAnswer is mcp/message's result: exactly one of result (any JSON,
// null included) or error. Its result is a view of the line the answer
// came in (jsonrpc.View): the server's answer is not copied before
// mcp-go decodes it.
type messageAnswer struct {
	result json.RawMessage
	err    *mcpclient.RequestError
}

func (a *messageAnswer) UnmarshalJSON(b []byte) error {
	var m map[string]jsonrpc.View
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	// As the schema says, a receiver prefers result when both are there.
	if r, ok := m["result"]; ok {
		a.result = json.RawMessage(r)
		return nil
	}
	var e struct {
		Code    *int            `json:"code"`
		Message *string         `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if raw, ok := m["error"]; !ok || json.Unmarshal(raw, &e) != nil || e.Code == nil || e.Message == nil {
		return errors.New("the answer holds neither a result nor an MCP error (an object with a code and a message)")
	}
	a.err = &mcpclient.RequestError{Code: *e.Code, Message: *e.Message, Data: e.Data}
	return nil
}

// Request implements mcpclient.TunnelConn: one mcp/message, under a fresh
// requestId; the server's notifications naming it reach the handler while
// it runs. ctx's end cancels it ($/cancel_request). The result is a view
// of the answer's line, which is the caller's (jsonrpc.Conn.Call).
func (c *tunnelConn) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	select {
	case <-c.closed:
		return nil, fmt.Errorf("%w: the server was stopped", mcpclient.ErrConnLost)
	default:
	}
	key := requestKey{c.server, fmt.Sprintf("acpgate-%d", c.t.seq.Add(1))}
	c.t.mu.Lock()
	c.t.active[key] = c
	c.t.mu.Unlock()
	defer func() {
		c.t.mu.Lock()
		delete(c.t.active, key)
		c.t.mu.Unlock()
	}()
	var a messageAnswer
	err := c.t.peer.conn.call(ctx, acpsdk.ClientMethodMcpMessage, messageParams{ServerID: c.server, RequestID: key.request, Method: method, Params: params}, &a)
	var re *acpsdk.RequestError
	switch {
	case err == nil && a.err != nil:
		return nil, a.err
	case err == nil:
		return a.result, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case isClosed(c.t.peer.conn.Done()):
		return nil, errClientGone
	case errors.As(err, &re):
		return nil, fmt.Errorf("%w: %s (ACP error %d)", errTunnel, re.Message, re.Code)
	}
	return nil, fmt.Errorf("mcp/message: %w", err)
}

// Notify implements mcpclient.TunnelConn. The request-scoped shape has no
// notification from the agent to a server: cancellation is the request's
// $/cancel_request, and the stateless revision has no
// notifications/initialized. What mcp-go sends is dropped.
func (c *tunnelConn) Notify(_ context.Context, method string, _ json.RawMessage) error {
	c.t.logger.Debug("MCP notification to an acp server dropped (the request-scoped shape has none)", "server", c.server, "method", method)
	return nil
}

// Done implements mcpclient.TunnelConn: the server is reachable as long as
// the ACP connection is.
func (c *tunnelConn) Done() <-chan struct{} { return c.t.peer.conn.Done() }

// Close implements mcpclient.TunnelConn: no request goes out from now on
// (those in flight end with their contexts, each cancelled at the client
// by $/cancel_request). Nothing is sent: there is no connection to close.
// Idempotent.
func (c *tunnelConn) Close(context.Context) error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// errClientGone: the ACP client closed the connection; nothing more can
// be asked of it.
var errClientGone = errors.New("the ACP client closed the connection")

// isClosed reports whether ch is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
