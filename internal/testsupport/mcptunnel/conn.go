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

// This file is an Endpoint: one long-lived connection to a server, with
// the server's own requests (elicitation, sampling, roots) sent to a
// Peer, independent of ACP. The request-scoped Client does not use it;
// mcpclient's tests of its Tunnel abstraction (connection-style tunnels,
// server requests) do.

// Peer is the other end of an Endpoint: where the server's own requests
// and notifications go. Safe for concurrent use.
type Peer interface {
	// Request sends the server's request and returns the answer's result,
	// or an error (an *Error for an error answer).
	Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// Notify sends the server's notification.
	Notify(method string, params json.RawMessage)
}

// Legacy is the protocol list that keeps a connection on 2025-11-25, where
// servers send their requests (elicitation, sampling, roots) as requests.
var Legacy = []string{mcp.ProtocolVersion20251125}

// Endpoint is one connection to an MCP server: messages from the agent
// are handled by the server (HandleMessage); what the server sends of its
// own goes to the Peer. Safe for concurrent use; Close once done.
type Endpoint struct {
	srv      *server.MCPServer
	sess     *connSession
	versions []string
	ids      atomic.Int64
	stop     chan struct{}
	wg       sync.WaitGroup
	once     sync.Once
}

// NewEndpoint opens a connection to srv under session id id: versions
// are the protocol versions server/discover lists (nil: all mcp-go
// speaks). It fails when id is already a session of srv.
func NewEndpoint(srv *server.MCPServer, id string, peer Peer, versions []string) (*Endpoint, error) {
	e := &Endpoint{srv: srv, versions: versions, stop: make(chan struct{})}
	e.sess = &connSession{id: id, peer: peer, notes: make(chan mcp.JSONRPCNotification, 64)}
	if err := srv.RegisterSession(context.Background(), e.sess); err != nil {
		return nil, err
	}
	e.wg.Add(1)
	go e.forward()
	return e, nil
}

// forward passes the server's notifications on, in order.
func (e *Endpoint) forward() {
	defer e.wg.Done()
	for {
		select {
		case n := <-e.sess.notes:
			params, _ := json.Marshal(n.Params)
			e.sess.peer.Notify(n.Method, params)
		case <-e.stop:
			return
		}
	}
}

// context is ctx as the server's handlers see this connection.
func (e *Endpoint) context(ctx context.Context) context.Context {
	ctx = e.srv.WithContext(ctx, e.sess)
	if e.versions != nil {
		ctx = server.WithSupportedProtocolVersions(ctx, e.versions)
	}
	return ctx
}

// Request has the server answer the agent's request.
func (e *Endpoint) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *Error) {
	return handle(e.context(ctx), e.srv, e.ids.Add(1), method, params)
}

// Notify hands the agent's notification to the server.
func (e *Endpoint) Notify(ctx context.Context, method string, params json.RawMessage) {
	msg := map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "method": method}
	if len(params) > 0 {
		msg["params"] = params
	}
	raw, _ := json.Marshal(msg)
	e.srv.HandleMessage(e.context(ctx), raw)
}

// Close ends the connection: the server forgets the session. Idempotent.
func (e *Endpoint) Close() {
	e.once.Do(func() {
		e.srv.UnregisterSession(context.Background(), e.sess.id)
		close(e.stop)
		e.wg.Wait()
	})
}

// session is the connection as mcp-go's server sees it: its notification
// channel, and its requests to the client sent through the Peer.
type connSession struct {
	id          string
	peer        Peer
	notes       chan mcp.JSONRPCNotification
	initialized atomic.Bool
}

var (
	_ server.SessionWithElicitation = (*connSession)(nil)
	_ server.SessionWithRoots       = (*connSession)(nil)
	_ server.SessionWithSampling    = (*connSession)(nil)
)

func (s *connSession) Initialize()                                         { s.initialized.Store(true) }
func (s *connSession) Initialized() bool                                   { return s.initialized.Load() }
func (s *connSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return s.notes }
func (s *connSession) SessionID() string                                   { return s.id }

func (s *connSession) RequestElicitation(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return ask[mcp.ElicitationResult](ctx, s.peer, string(mcp.MethodElicitationCreate), req.Params)
}

func (s *connSession) ListRoots(ctx context.Context, _ mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	return ask[mcp.ListRootsResult](ctx, s.peer, string(mcp.MethodListRoots), nil)
}

func (s *connSession) RequestSampling(ctx context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	return ask[mcp.CreateMessageResult](ctx, s.peer, string(mcp.MethodSamplingCreateMessage), req.CreateMessageParams)
}

// ask sends a request of the server through p and decodes its result.
func ask[T any](ctx context.Context, p Peer, method string, params any) (*T, error) {
	var raw json.RawMessage
	if params != nil {
		raw, _ = json.Marshal(params)
	}
	res, err := p.Request(ctx, method, raw)
	if err != nil {
		return nil, err
	}
	var out T
	if err := json.Unmarshal(res, &out); err != nil {
		return nil, fmt.Errorf("%s result: %w", method, err)
	}
	return &out, nil
}
