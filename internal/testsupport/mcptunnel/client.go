package mcptunnel

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The methods of MCP over ACP.
const (
	MethodMessage = "mcp/message"
	MethodCancel  = "$/cancel_request"
)

// Client is an ACP client's side of MCP over ACP on one connection to an
// agent. Wire it around acp-go-sdk's client connection:
//
//	tc := mcptunnel.NewClient(agentStdin)
//	conn := acpsdk.NewClientSideConnection(client, tc.Input(), tc.Output(agentStdout))
//
// It answers the agent's mcp/message requests for the servers given to
// Serve (another serverId gets -33001), sends what a server says while a
// request runs as mcp/message notifications, and ends a request's
// handling at the agent's $/cancel_request; every other message passes
// through. Safe for concurrent use.
type Client struct {
	in      *lockedWriter
	mu      sync.Mutex
	servers map[string]served             // by serverId
	active  map[string]context.CancelFunc // requests being served, by the outer ACP id
	pending map[string]chan rpcResponse   // our requests to the agent, by id
	seq     int
	log     []Event
	changed chan struct{} // closed at the next event
	// Versions are the protocol versions the servers' server/discover
	// lists (nil: all mcp-go speaks, 2026-07-28 first).
	Versions []string
}

// served is a server given to Serve.
type served struct {
	srv    *server.MCPServer
	refuse *Error // answer every mcp/message with this instead
	// answers are results given for methods mcp-go's server does not
	// serve (an extension's), by method: see Answer.
	answers map[string]json.RawMessage
}

// Event is something that happened on the tunnel: Kind is "message" (the
// agent's request: Server its serverId, ID its requestId, Method the
// inner method), "done" (the request was answered), "refuse" (it was
// answered with the server's refusal), "cancel" (the agent cancelled it:
// ID its requestId).
type Event struct {
	Kind, Server, ID, Method string
}

// NewClient returns a Client writing to the agent's input agentIn.
func NewClient(agentIn io.Writer) *Client {
	return &Client{
		in:      &lockedWriter{w: agentIn},
		servers: map[string]served{},
		active:  map[string]context.CancelFunc{},
		pending: map[string]chan rpcResponse{},
		changed: make(chan struct{}),
	}
}

// Serve makes srv reachable as serverID.
func (c *Client) Serve(serverID string, srv *server.MCPServer) {
	c.mu.Lock()
	c.servers[serverID] = served{srv: srv}
	c.mu.Unlock()
}

// Answer makes the server given to Serve as serverID answer the MCP
// method with result (its JSON), before mcp-go's server sees it: for an
// extension's methods (such as skills/list), which mcp-go does not serve.
func (c *Client) Answer(serverID, method string, result json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.servers[serverID]
	if s.answers == nil {
		s.answers = map[string]json.RawMessage{}
	}
	s.answers[method] = result
	c.servers[serverID] = s
}

// Refuse answers every mcp/message for serverID with the ACP error e.
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

// Active returns how many of the agent's requests are being served now.
func (c *Client) Active() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.active)
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

// take handles line if it is the tunnel's: an mcp/message request, a
// $/cancel_request of one being served, or the answer to one of the
// Client's requests.
func (c *Client) take(line []byte) bool {
	var m rpcMessage
	if json.Unmarshal(line, &m) != nil {
		return false
	}
	switch {
	case m.Method == MethodMessage && m.ID != nil:
		ctx, cancel := context.WithCancel(context.Background())
		c.mu.Lock()
		c.active[string(m.ID)] = cancel
		c.mu.Unlock()
		// Recorded here, on the reading goroutine, so that Events keeps
		// the order the agent wrote its requests in.
		var p messageParams
		perr := json.Unmarshal(m.Params, &p)
		if perr == nil {
			c.record(Event{Kind: "message", Server: p.ServerID, ID: p.RequestID, Method: p.Method})
		}
		go func() {
			defer cancel()
			r := c.message(ctx, p, perr, m.Params)
			c.mu.Lock()
			delete(c.active, string(m.ID))
			c.mu.Unlock()
			c.reply(m.ID, r)
		}()
		return true
	case m.Method == MethodCancel:
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		_ = json.Unmarshal(m.Params, &p)
		c.mu.Lock()
		cancel, ok := c.active[string(p.RequestID)]
		c.mu.Unlock()
		if ok {
			cancel()
			c.record(Event{Kind: "cancel", ID: string(p.RequestID)})
		}
		return ok
	case m.Method == "":
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

// messageParams are the params of mcp/message, either way.
type messageParams struct {
	ServerID  string          `json:"serverId"`
	RequestID string          `json:"requestId"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params,omitempty"`
}

// message serves the agent's mcp/message: the answer carries the inner
// MCP result or error; an ACP error is a binding failure only. p is the
// request's params as take decoded them from raw (perr the decoding's error).
func (c *Client) message(ctx context.Context, p messageParams, perr error, raw json.RawMessage) rpcResponse {
	if perr != nil || p.ServerID == "" || p.RequestID == "" || p.Method == "" {
		return rpcResponse{err: &Error{Code: mcp.INVALID_PARAMS, Message: fmt.Sprintf("mcp/message needs serverId, requestId and method: %s", raw)}}
	}
	c.mu.Lock()
	s, ok := c.servers[p.ServerID]
	c.seq++
	sessionID := fmt.Sprintf("req-%d", c.seq)
	c.mu.Unlock()
	switch {
	case !ok:
		return rpcResponse{err: &Error{Code: CodeUnknownServer, Message: "unknown serverId " + strconv.Quote(p.ServerID)}}
	case s.refuse != nil:
		c.record(Event{Kind: "refuse", Server: p.ServerID, ID: p.RequestID})
		return rpcResponse{err: s.refuse}
	case s.answers[p.Method] != nil:
		c.record(Event{Kind: "done", Server: p.ServerID, ID: p.RequestID, Method: p.Method})
		b, _ := json.Marshal(map[string]json.RawMessage{"result": s.answers[p.Method]})
		return rpcResponse{result: b}
	}
	if string(p.Params) == "null" {
		p.Params = nil
	}
	notify := func(method string, params json.RawMessage) {
		c.in.writeJSON(map[string]any{"jsonrpc": "2.0", "method": MethodMessage, "params": messageParams{ServerID: p.ServerID, RequestID: p.RequestID, Method: method, Params: params}})
	}
	res, merr := serveRequest(ctx, s.srv, sessionID, c.Versions, p.Method, p.Params, notify)
	c.record(Event{Kind: "done", Server: p.ServerID, ID: p.RequestID, Method: p.Method})
	if merr != nil {
		b, _ := json.Marshal(map[string]any{"error": merr})
		return rpcResponse{result: b}
	}
	if res == nil {
		res = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]json.RawMessage{"result": res})
	return rpcResponse{result: b}
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

// Notify sends the notification method with params to the agent.
func (c *Client) Notify(method string, params any) {
	c.in.writeJSON(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
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
