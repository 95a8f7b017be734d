// Package mcptunnel is the client's side of MCP over ACP, for tests, in
// the request-scoped shape of the ACP schema (unstable): the client
// declares a server {"type":"acp","name","serverId"}; each MCP request of
// the agent is one ACP request mcp/message {serverId, requestId, method,
// params}, answered with {"result": …} or {"error": McpError}; what the
// server sends while a request runs (progress, a subscriptions/listen
// stream's acknowledgement and notifications) goes back as mcp/message
// notifications naming that request; the agent cancels a request with
// $/cancel_request. There is no connection and no handshake: the servers
// speak the stateless 2026-07-28 revision (server/discover first). A
// Client is an ACP client's end of the connection to the agent, placed
// around acp-go-sdk's client connection (which routes none of this).
package mcptunnel

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Error is a JSON-RPC error answer, on either side of a connection.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error implements error.
func (e *Error) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// The ACP error codes of MCP over ACP's binding failures.
const (
	CodeResourceLimit = -33000
	CodeUnknownServer = -33001
	CodeBackendFailed = -33002
)

// serveRequest has srv answer one MCP request in a session of its own,
// id (unique per server), that lives as long as the request: what the server sends meanwhile goes
// to notify, in order. versions, when set, are the protocol versions the
// server's server/discover lists.
func serveRequest(ctx context.Context, srv *server.MCPServer, id string, versions []string, method string, params json.RawMessage, notify func(method string, params json.RawMessage)) (json.RawMessage, *Error) {
	sess := &session{id: id, notes: make(chan mcp.JSONRPCNotification, 64)}
	sess.initialized.Store(true)
	if err := srv.RegisterSession(ctx, sess); err != nil {
		return nil, &Error{Code: CodeBackendFailed, Message: err.Error()}
	}
	forwarded := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		defer close(forwarded)
		for {
			select {
			case n := <-sess.notes:
				p, _ := json.Marshal(n.Params)
				notify(n.Method, p)
			case <-stop:
				return
			}
		}
	}()
	defer func() {
		srv.UnregisterSession(context.Background(), sess.id)
		close(stop)
		<-forwarded
	}()
	hctx := srv.WithContext(ctx, sess)
	if versions != nil {
		hctx = server.WithSupportedProtocolVersions(hctx, versions)
	}
	return handle(hctx, srv, 1, method, params)
}

// handle has srv answer the request method with params under JSON-RPC id
// in ctx (the server's context for the session): its result, or its error
// answer.
func handle(ctx context.Context, srv *server.MCPServer, id int64, method string, params json.RawMessage) (json.RawMessage, *Error) {
	msg := map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": id, "method": method}
	if len(params) > 0 {
		msg["params"] = params
	}
	raw, _ := json.Marshal(msg)
	out, err := json.Marshal(srv.HandleMessage(ctx, raw))
	if err != nil {
		return nil, &Error{Code: mcp.INTERNAL_ERROR, Message: err.Error()}
	}
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  *Error          `json:"error"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, &Error{Code: mcp.INTERNAL_ERROR, Message: err.Error()}
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	return resp.Result, nil
}

// session is one request as mcp-go's server sees it: its notification
// channel, and the notifications a subscriptions/listen asked for.
type session struct {
	id          string
	notes       chan mcp.JSONRPCNotification
	initialized atomic.Bool

	mu        sync.Mutex
	filter    mcp.SubscriptionFilter
	listening bool
}

var _ server.SessionWithSubscriptionFilter = (*session)(nil)

func (s *session) SetSubscriptionFilter(f mcp.SubscriptionFilter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.filter, s.listening = f, true
}

func (s *session) SubscriptionFilter() (mcp.SubscriptionFilter, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.filter, s.listening
}

func (s *session) Initialize()                                         { s.initialized.Store(true) }
func (s *session) Initialized() bool                                   { return s.initialized.Load() }
func (s *session) NotificationChannel() chan<- mcp.JSONRPCNotification { return s.notes }
func (s *session) SessionID() string                                   { return s.id }
