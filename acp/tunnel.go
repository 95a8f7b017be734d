package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp/jsonrpc"
	"github.com/acpgate/acpgate/mcpclient"
)

// This file is MCP over ACP (unstable in ACP): the client's servers of
// type "acp" are reached through the ACP connection. The schema's names
// and fields are followed (serverId, connectionId), not acp-go-sdk
// v0.13.0's older ones (id, acpId).

// mcpCapabilities are the MCP transports the agent takes besides stdio,
// as initialize advertises them: http, sse and acp (MCP over ACP). The
// input filter accepts acp servers once initialize has advertised them.
func mcpCapabilities() acpsdk.McpCapabilities {
	return acpsdk.McpCapabilities{Http: true, Sse: true, Acp: true}
}

// errClientGone: the ACP client closed its end; nothing more can be asked
// of it.
var errClientGone = errors.New("the ACP client closed the connection")

// tunnel is the agent's side of MCP over ACP, one per ACP connection; it
// implements mcpclient.Tunnel, which makes an acp server one more
// transport of the sessions' MCP clients. Open sends mcp/connect
// {serverId} and the client answers {connectionId}; the connection then
// carries MCP messages as mcp/message {connectionId, method, params} both
// ways (an ACP request when the MCP message is a request, whose answer
// carries the MCP result or error; a notification otherwise), and ends
// with mcp/disconnect {connectionId}. Safe for concurrent use.
type tunnel struct {
	peer   *peer
	logger *slog.Logger

	mu    sync.Mutex
	conns map[string]*tunnelConn // open connections by connectionId
}

var _ mcpclient.Tunnel = (*tunnel)(nil)

func newTunnel(pe *peer, logger *slog.Logger) *tunnel {
	return &tunnel{peer: pe, logger: logger, conns: map[string]*tunnelConn{}}
}

// messageParams are the params of mcp/message, either way.
type messageParams struct {
	ConnectionID string          `json:"connectionId"`
	Method       string          `json:"method"`
	Params       json.RawMessage `json:"params,omitempty"`
}

// Open implements mcpclient.Tunnel: mcp/connect. A client's error answer
// is returned as an *mcpclient.RequestError.
func (t *tunnel) Open(ctx context.Context, serverID string, h mcpclient.TunnelHandler) (mcpclient.TunnelConn, error) {
	var raw json.RawMessage
	if err := t.peer.conn.call(ctx, acpsdk.ClientMethodMcpConnect, map[string]string{"serverId": serverID}, &raw); err != nil {
		return nil, fmt.Errorf("mcp/connect: %w", t.clientError(ctx, err))
	}
	var resp struct {
		ConnectionID string `json:"connectionId"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil || resp.ConnectionID == "" {
		return nil, fmt.Errorf("mcp/connect: the client's answer has no connectionId: %s", jsonrpc.Clip(raw))
	}
	c := &tunnelConn{t: t, id: resp.ConnectionID, handler: h}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, dup := t.conns[c.id]; dup {
		return nil, fmt.Errorf("mcp/connect: the client answered with connectionId %q, which is already open", c.id)
	}
	t.conns[c.id] = c
	return c, nil
}

// clientError is what a request to the client that failed with err says:
// ctx's error when it ended, errClientGone when the client did, the
// client's error answer as an *mcpclient.RequestError, or err.
func (t *tunnel) clientError(ctx context.Context, err error) error {
	var re *acpsdk.RequestError
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case isClosed(t.peer.conn.Done()):
		return errClientGone
	case errors.As(err, &re):
		out := &mcpclient.RequestError{Code: re.Code, Message: re.Message}
		if re.Data != nil {
			out.Data, _ = json.Marshal(re.Data)
		}
		return out
	}
	return err
}

// message serves an mcp/message from the client, a request or a
// notification, on one of the connections open: the server's own request
// or notification goes to the connection's handler.
func (t *tunnel) message(ctx context.Context, params json.RawMessage, request bool) (any, error) {
	var p messageParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams("mcp/message: %v", err)
	}
	switch {
	case p.ConnectionID == "":
		return nil, invalidParams("mcp/message: connectionId: missing")
	case p.Method == "":
		return nil, invalidParams("mcp/message: method: missing")
	}
	if string(p.Params) == "null" {
		p.Params = nil
	}
	t.mu.Lock()
	c := t.conns[p.ConnectionID]
	t.mu.Unlock()
	if c == nil {
		return nil, invalidParams("mcp/message: unknown connectionId %q (no open connection of mcp/connect has it)", p.ConnectionID)
	}
	if !request {
		c.handler.HandleNotification(p.Method, p.Params)
		return nil, nil
	}
	res, err := c.handler.HandleRequest(ctx, p.Method, p.Params)
	var re *mcpclient.RequestError
	switch {
	case errors.As(err, &re):
		out := &acpsdk.RequestError{Code: re.Code, Message: re.Message}
		if len(re.Data) > 0 {
			out.Data = re.Data
		}
		return nil, out
	case err != nil:
		return nil, internalError("%v", err)
	}
	return res, nil
}

// tunnelConn is one open connection to an acp server. Safe for concurrent
// use.
type tunnelConn struct {
	t       *tunnel
	id      string // the client's connectionId
	handler mcpclient.TunnelHandler

	closeOnce sync.Once
	closeErr  error
}

var _ mcpclient.TunnelConn = (*tunnelConn)(nil)

// Request implements mcpclient.TunnelConn.
func (c *tunnelConn) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := c.t.peer.conn.call(ctx, acpsdk.ClientMethodMcpMessage, messageParams{ConnectionID: c.id, Method: method, Params: params}, &raw); err != nil {
		return nil, c.t.clientError(ctx, err)
	}
	return raw, nil
}

// Notify implements mcpclient.TunnelConn.
func (c *tunnelConn) Notify(ctx context.Context, method string, params json.RawMessage) error {
	return c.t.peer.conn.notify(ctx, acpsdk.ClientMethodMcpMessage, messageParams{ConnectionID: c.id, Method: method, Params: params})
}

// Done implements mcpclient.TunnelConn: a connection ends on its own only
// with the ACP connection.
func (c *tunnelConn) Done() <-chan struct{} { return c.t.peer.conn.Done() }

// Close implements mcpclient.TunnelConn: the connection is forgotten, and
// mcp/disconnect tells the client. A client that closed its end still
// gets the message (it may be reading), but cannot answer: that is no
// error.
func (c *tunnelConn) Close(ctx context.Context) error {
	c.closeOnce.Do(func() {
		c.t.mu.Lock()
		delete(c.t.conns, c.id)
		c.t.mu.Unlock()
		err := c.t.peer.conn.call(ctx, acpsdk.ClientMethodMcpDisconnect, map[string]string{"connectionId": c.id}, nil)
		if err != nil && !isClosed(c.Done()) {
			c.closeErr = fmt.Errorf("mcp/disconnect: %w", c.t.clientError(ctx, err))
		}
	})
	return c.closeErr
}

// isClosed reports whether ch is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
