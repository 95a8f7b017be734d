package mcpclient

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// cancelling wraps an mcp-go transport so that every request whose context
// ends before its answer arrives is followed by notifications/cancelled, on
// every transport. (mcp-go sends it only over stdio; over HTTP and SSE a
// server would go on working for nobody.) The wrapper forwards the optional
// interfaces mcp-go looks for; because it implements
// transport.HTTPConnection, mcp-go leaves cancellation to it everywhere, so
// exactly one notification is sent.
type cancelling struct {
	transport.Interface
	schemas *rawSchemas // captures tools/list input schemas verbatim
	notes   *notices    // the cancellation notices in flight
}

// notices tracks the cancellation notices of one connection: they are
// sent off the caller's path, bounded by the connection's life, and
// closeConn waits for them, so none outlives the connection.
type notices struct {
	life context.Context
	wg   sync.WaitGroup
}

func newNotices(life context.Context) *notices { return &notices{life: life} }

// send runs fn (which sends one notice) in a goroutine with a context
// that ends with the connection, or after five seconds.
func (n *notices) send(fn func(ctx context.Context)) {
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		ctx, cancel := context.WithTimeout(n.life, 5*time.Second)
		defer cancel()
		fn(ctx)
	}()
}

// wait returns once every notice has been sent or given up.
func (n *notices) wait() { n.wg.Wait() }

// SendRequest implements transport.Interface.
func (t cancelling) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := t.Interface.SendRequest(ctx, req)
	if err == nil && resp != nil && resp.Error == nil {
		switch {
		case req.Method == string(mcp.MethodToolsList) && t.schemas != nil:
			t.schemas.capture(resp.Result)
		case req.Method == string(mcp.MethodToolsCall):
			_, own := t.Interface.(*stdioTransport)
			resp = takeCallResult(ctx, resp, own)
		}
	}
	if err != nil && ctx.Err() != nil && req.Method != string(mcp.MethodInitialize) {
		n := mcp.JSONRPCNotification{
			JSONRPC: mcp.JSONRPC_VERSION,
			Notification: mcp.Notification{
				Method: string(mcp.MethodNotificationCancelled),
				Params: mcp.NotificationParams{AdditionalFields: map[string]any{
					"requestId": req.ID,
					"reason":    context.Cause(ctx).Error(),
				}},
			},
		}
		// Best effort, off the caller's path: the caller has its error.
		t.notes.send(func(nctx context.Context) { _ = t.Interface.SendNotification(nctx, n) })
	}
	return resp, err
}

// SetProtocolVersion forwards to HTTP transports.
func (t cancelling) SetProtocolVersion(v string) {
	if h, ok := t.Interface.(transport.HTTPConnection); ok {
		h.SetProtocolVersion(v)
	}
}

// SetRequestHandler forwards server-to-client requests (ping, roots, ...).
func (t cancelling) SetRequestHandler(h transport.RequestHandler) {
	if b, ok := t.Interface.(transport.BidirectionalInterface); ok {
		b.SetRequestHandler(h)
	}
}

// SetConnectionLostHandler forwards to transports that can report it (SSE).
func (t cancelling) SetConnectionLostHandler(fn func(error)) {
	if s, ok := t.Interface.(interface{ SetConnectionLostHandler(func(error)) }); ok {
		s.SetConnectionLostHandler(fn)
	}
}

// RequiresLegacyProtocol forwards to transports that constrain the
// protocol (streamable HTTP with continuous listening).
func (t cancelling) RequiresLegacyProtocol() bool {
	l, ok := t.Interface.(interface{ RequiresLegacyProtocol() bool })
	return ok && l.RequiresLegacyProtocol()
}

// rawSchemas keeps each tool's inputSchema exactly as the server sent it.
// mcp-go decodes schemas into a struct that keeps only type, properties,
// required, additionalProperties and $defs at the top level, so a top-level
// anyOf, description or $schema would be lost; tools are handed on with
// these raw schemas instead. Safe for concurrent use.
type rawSchemas struct {
	mu sync.Mutex
	m  map[string]json.RawMessage
}

func (r *rawSchemas) capture(result json.RawMessage) {
	var page struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &page) != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]json.RawMessage{}
	}
	for _, t := range page.Tools {
		if len(t.InputSchema) > 0 {
			r.m[t.Name] = t.InputSchema
		}
	}
}

// apply replaces the decoded input schemas of tools by the raw ones.
func (r *rawSchemas) apply(tools []mcp.Tool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range tools {
		if raw, ok := r.m[tools[i].Name]; ok {
			tools[i].RawInputSchema = raw
			tools[i].InputSchema = mcp.ToolInputSchema{}
		}
	}
}
