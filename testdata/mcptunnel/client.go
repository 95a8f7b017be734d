package mcptunnel

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The MCP-over-ACP methods.
const (
	MethodConnect    = "mcp/connect"
	MethodMessage    = "mcp/message"
	MethodDisconnect = "mcp/disconnect"
)

// Client is an ACP client's side of MCP over ACP on one connection to an
// agent. Wire it around acp-go-sdk's client connection:
//
//	tc := mcptunnel.NewClient(agentStdin)
//	conn := acpsdk.NewClientSideConnection(client, tc.Input(), tc.Output(agentStdout))
//
// It answers mcp/connect for the servers given to Serve (another serverId
// gets -32602), mcp/message on the connections it opened and
// mcp/disconnect, and sends the servers' own requests and notifications
// to the agent as mcp/message; every other message passes through. Safe
// for concurrent use.
type Client struct {
	in      *lockedWriter
	mu      sync.Mutex
	servers map[string]served           // by serverId
	conns   map[string]*Endpoint        // open connections by connectionId
	pending map[string]chan rpcResponse // our requests to the agent, by id
	seq     int
	log     []Event
	changed chan struct{} // closed at the next event
	// Versions are the protocol versions the servers' server/discover
	// lists (default Legacy: the servers' requests then travel as
	// requests).
	Versions []string
}

// served is a server given to Serve.
type served struct {
	srv    *server.MCPServer
	refuse *Error // answer mcp/connect with this instead
}

// Event is something that happened on the tunnel: Kind is "connect" (ID
// is the connectionId given; Server the serverId), "refuse", "message"
// (Method: the inner method the agent sent) or "disconnect".
type Event struct {
	Kind, Server, ID, Method string
}

// NewClient returns a Client writing to the agent's input agentIn.
func NewClient(agentIn io.Writer) *Client {
	return &Client{
		in:       &lockedWriter{w: agentIn},
		servers:  map[string]served{},
		conns:    map[string]*Endpoint{},
		pending:  map[string]chan rpcResponse{},
		changed:  make(chan struct{}),
		Versions: Legacy,
	}
}

// Serve makes srv reachable as serverID.
func (c *Client) Serve(serverID string, srv *server.MCPServer) {
	c.mu.Lock()
	c.servers[serverID] = served{srv: srv}
	c.mu.Unlock()
}

// Refuse answers mcp/connect for serverID with the error e.
func (c *Client) Refuse(serverID string, e *Error) {
	c.mu.Lock()
	c.servers[serverID] = served{refuse: e}
	c.mu.Unlock()
}

// Input is the writer the SDK connection writes the agent's input to:
// whole messages, never interleaved with the Client's own.
func (c *Client) Input() io.Writer { return c.in }

// Output returns agentOut without the messages the Client handles, for
// the SDK connection to read.
func (c *Client) Output(agentOut io.Reader) io.Reader {
	r, w := io.Pipe()
	go c.demux(agentOut, w)
	return r
}

// Events returns what happened so far, in order.
func (c *Client) Events() []Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Event(nil), c.log...)
}

// WaitEvent waits until an event matches, or ctx ends.
func (c *Client) WaitEvent(ctx context.Context, match func(Event) bool) (Event, error) {
	for {
		c.mu.Lock()
		for _, e := range c.log {
			if match(e) {
				c.mu.Unlock()
				return e, nil
			}
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return Event{}, fmt.Errorf("waiting for a tunnel event: %w (events: %v)", ctx.Err(), c.Events())
		}
	}
}

// Connections returns the connections open now, by connectionId.
func (c *Client) Connections() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make([]string, 0, len(c.conns))
	for id := range c.conns {
		ids = append(ids, id)
	}
	return ids
}

func (c *Client) record(e Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log = append(c.log, e)
	close(c.changed)
	c.changed = make(chan struct{})
}

// rpcMessage is any JSON-RPC message, decoded just enough to route it.
type rpcMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

type rpcResponse struct {
	result json.RawMessage
	err    *Error
}

// demux reads the agent's output, handles the tunnel's messages and
// passes the rest to sdk.
func (c *Client) demux(agentOut io.Reader, sdk *io.PipeWriter) {
	br := bufio.NewReaderSize(agentOut, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && !c.take(line) {
			if _, werr := sdk.Write(line); werr != nil {
				return
			}
		}
		if err != nil {
			c.failPending()
			_ = sdk.CloseWithError(err)
			return
		}
	}
}

// take handles line if it is the tunnel's: a request or notification of
// an MCP-over-ACP method, or the answer to one of the Client's requests.
func (c *Client) take(line []byte) bool {
	var m rpcMessage
	if json.Unmarshal(line, &m) != nil {
		return false
	}
	switch m.Method {
	case MethodConnect, MethodDisconnect:
		go c.reply(m.ID, c.handle(m))
		return true
	case MethodMessage:
		if m.ID == nil {
			c.message(m, false) // in order
		} else {
			go func() { c.reply(m.ID, c.message(m, true)) }()
		}
		return true
	case "":
		c.mu.Lock()
		ch, ok := c.pending[string(m.ID)]
		delete(c.pending, string(m.ID))
		c.mu.Unlock()
		if ok {
			ch <- rpcResponse{result: m.Result, err: m.Error}
		}
		return ok
	}
	return false
}

// handle answers mcp/connect and mcp/disconnect.
func (c *Client) handle(m rpcMessage) rpcResponse {
	var p struct {
		ServerID     string `json:"serverId"`
		ConnectionID string `json:"connectionId"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		return rpcResponse{err: &Error{Code: mcp.INVALID_PARAMS, Message: err.Error()}}
	}
	if m.Method == MethodDisconnect {
		c.mu.Lock()
		e := c.conns[p.ConnectionID]
		delete(c.conns, p.ConnectionID)
		c.mu.Unlock()
		if e == nil {
			return rpcResponse{err: &Error{Code: mcp.INVALID_PARAMS, Message: "unknown connectionId " + strconv.Quote(p.ConnectionID)}}
		}
		e.Close()
		c.record(Event{Kind: "disconnect", ID: p.ConnectionID})
		return rpcResponse{result: json.RawMessage(`{}`)}
	}
	c.mu.Lock()
	s, ok := c.servers[p.ServerID]
	c.seq++
	id := fmt.Sprintf("conn-%d", c.seq)
	c.mu.Unlock()
	switch {
	case !ok:
		return rpcResponse{err: &Error{Code: mcp.INVALID_PARAMS, Message: "unknown serverId " + strconv.Quote(p.ServerID)}}
	case s.refuse != nil:
		c.record(Event{Kind: "refuse", Server: p.ServerID})
		return rpcResponse{err: s.refuse}
	}
	e, err := NewEndpoint(s.srv, id, connPeer{c, id}, c.Versions)
	if err != nil {
		return rpcResponse{err: &Error{Code: mcp.INTERNAL_ERROR, Message: err.Error()}}
	}
	c.mu.Lock()
	c.conns[id] = e
	c.mu.Unlock()
	c.record(Event{Kind: "connect", Server: p.ServerID, ID: id})
	return rpcResponse{result: json.RawMessage(`{"connectionId":` + strconv.Quote(id) + `}`)}
}

// message hands the agent's mcp/message to the connection's server.
func (c *Client) message(m rpcMessage, request bool) rpcResponse {
	var p struct {
		ConnectionID string          `json:"connectionId"`
		Method       string          `json:"method"`
		Params       json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		return rpcResponse{err: &Error{Code: mcp.INVALID_PARAMS, Message: err.Error()}}
	}
	c.mu.Lock()
	e := c.conns[p.ConnectionID]
	c.mu.Unlock()
	if e == nil {
		return rpcResponse{err: &Error{Code: mcp.INVALID_PARAMS, Message: "unknown connectionId " + strconv.Quote(p.ConnectionID)}}
	}
	c.record(Event{Kind: "message", ID: p.ConnectionID, Method: p.Method})
	if !request {
		e.Notify(context.Background(), p.Method, p.Params)
		return rpcResponse{}
	}
	res, err := e.Request(context.Background(), p.Method, p.Params)
	return rpcResponse{result: res, err: err}
}

// reply answers the agent's request id.
func (c *Client) reply(id json.RawMessage, r rpcResponse) {
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if r.err != nil {
		msg["error"] = r.err
	} else {
		msg["result"] = r.result
	}
	c.in.writeJSON(msg)
}

// Call sends the request method with params to the agent, as the
// Client's own (its answer does not reach the SDK connection), and waits
// for the answer: its result, or an *Error.
func (c *Client) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	c.mu.Lock()
	c.seq++
	id := strconv.Quote(fmt.Sprintf("tunnel-%d", c.seq))
	ch := make(chan rpcResponse, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	c.in.writeJSON(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method, "params": params})
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		return r.result, nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return nil, ctx.Err()
	}
}

// failPending fails the requests still waiting: the agent is gone.
func (c *Client) failPending() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, ch := range c.pending {
		ch <- rpcResponse{err: &Error{Code: mcp.INTERNAL_ERROR, Message: "the agent closed its output"}}
		delete(c.pending, id)
	}
}

// inner is the params of an mcp/message.
func inner(conn, method string, params json.RawMessage) map[string]any {
	p := map[string]any{"connectionId": conn, "method": method}
	if len(params) > 0 && strings.TrimSpace(string(params)) != "null" {
		p["params"] = params
	}
	return p
}

// connPeer is one connection's Peer: the server's messages go to the agent.
type connPeer struct {
	c  *Client
	id string
}

func (p connPeer) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return p.c.Call(ctx, MethodMessage, inner(p.id, method, params))
}

func (p connPeer) Notify(method string, params json.RawMessage) {
	p.c.in.writeJSON(map[string]any{"jsonrpc": "2.0", "method": MethodMessage, "params": inner(p.id, method, params)})
}

// lockedWriter writes whole messages, one at a time.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// writeJSON writes v as one line; a failure means the agent is gone.
func (l *lockedWriter) writeJSON(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // every value here marshals
	}
	_, _ = l.Write(append(b, '\n'))
}
