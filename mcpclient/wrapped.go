package mcpclient

import (
	"context"
	"encoding/json"

	"github.com/acpgate/acpgate/mcpclient/wire"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// wrapped wraps an mcp-go transport for our client: it captures the raw
// tools/list input schemas, decodes tools/call results (see
// takeCallResult), keeps the 2026-07-28 Tasks extension out of a legacy
// initialize, names the capability of a -32021 error and refuses a
// CreateTaskResult where none may come (see exttasks.go) and, where mcp-go
// sends none (wire.LibraryCancels), sends notifications/cancelled after every
// request whose context ends before its answer arrives; a server would
// otherwise go on working for nobody.
// It forwards the optional interfaces mcp-go looks for (server requests,
// connection loss, the legacy-protocol constraint) and nothing else: in
// particular it is not a transport.HTTPConnection (wrappedHTTP is, for HTTP
// transports), so mcp-go treats the transport it wraps as what it is. Make
// one with wrapTransport.
type wrapped struct {
	transport.Interface
	schemas *toolListing  // captures tools/list input schemas verbatim, and the ttl
	notes   *wire.Notices // the cancellation notices in flight; nil: mcp-go sends them
	serve   requestServer // answers server requests first; nil: mcp-go alone (see withServe)
	onInit  initEdit      // edits the initialize request (handshakeCapabilities); nil: none
	probe   *probeState   // the server/discover probe (revision.go)
	trace   requestTrace  // every request's span and trace context (telemetry.go)
}

// wrappedHTTP is wrapped for a transport.HTTPConnection (streamable HTTP
// or SSE), which it is too.
type wrappedHTTP struct {
	wrapped
	http transport.HTTPConnection
}

// wrapTransport returns t wrapped for our client: a wrappedHTTP when t is
// a transport.HTTPConnection, else a wrapped. Either way exactly one
// notifications/cancelled follows a cancelled request: mcp-go's or, through
// notes, ours.
func wrapTransport(t transport.Interface, schemas *toolListing, notes *wire.Notices, trace requestTrace) transport.Interface {
	w := wrapped{Interface: t, schemas: schemas, trace: trace}
	w.probe = &probeState{}
	switch t.(type) {
	case *wire.StdioTransport, *tunnelTransport:
	default:
		w.probe.noFence.Store(true) // the ping fence is for stdio and acp (see revision.go)
	}
	if !wire.LibraryCancels(t) {
		w.notes = notes
	}
	if h, ok := t.(transport.HTTPConnection); ok {
		return wrappedHTTP{wrapped: w, http: h}
	}
	return w
}

// SendRequest implements transport.Interface: req goes with the trace
// context of ctx, in a span of its own when telemetry is on (telemetry.go).
func (t wrapped) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	ctx, req, span := t.trace.start(ctx, t.Interface, req)
	resp, err := t.send(ctx, req)
	t.trace.end(ctx, span, resp, err)
	return resp, err
}

// send sends req through the wrapped transport.
func (t wrapped) send(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	switch {
	case req.Method == string(mcp.MethodServerDiscover):
		return t.discover(ctx, req)
	case req.Method == string(mcp.MethodInitialize):
		if err := t.probe.refusedForAuth(); err != nil {
			return nil, err // not a legacy server: it wants a sign-in
		}
		if t.onInit != nil {
			t.onInit(&req)
		}
	}
	resp, err := t.Interface.SendRequest(ctx, req)
	if err == nil && resp != nil {
		nameMissingCapability(resp.Error)
		if err := checkTaskResult(req.Method, resp); err != nil {
			return nil, err
		}
	}
	if err == nil && resp != nil && resp.Error == nil {
		switch {
		case req.Method == string(mcp.MethodToolsList) && t.schemas != nil:
			t.schemas.capture(resp.Result)
		case req.Method == string(mcp.MethodToolsCall), req.Method == string(mcp.MethodTasksResult):
			resp = takeCallResult(ctx, resp, ownsResults(t.Interface))
		}
	}
	if err != nil && ctx.Err() != nil && t.notes != nil && req.Method != string(mcp.MethodInitialize) {
		t.notes.Cancel(ctx, t.Interface, req.ID)
	}
	return resp, err
}

// ownsResults reports whether the results tr answers with are each in a
// buffer of its own that nobody else reads or writes, which
// takeCallResult may then unescape in place: the stdio transport's (a
// line each) and the tunnel's (TunnelConn.Request promises it).
func ownsResults(tr transport.Interface) bool {
	switch tr.(type) {
	case *wire.StdioTransport, *tunnelTransport:
		return true
	}
	return false
}

// SetProtocolVersion implements transport.HTTPConnection.
func (t wrappedHTTP) SetProtocolVersion(v string) { t.http.SetProtocolVersion(v) }

// SetRequestHandler forwards server-to-client requests (ping, roots, ...),
// through serve when set.
func (t wrapped) SetRequestHandler(h transport.RequestHandler) {
	b, ok := t.Interface.(transport.BidirectionalInterface)
	if !ok {
		return
	}
	if serve := t.serve; serve != nil {
		next := h
		h = func(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
			return serve(ctx, req, next)
		}
	}
	b.SetRequestHandler(h)
}

// SetConnectionLostHandler forwards to transports that can report it (SSE).
func (t wrapped) SetConnectionLostHandler(fn func(error)) {
	if s, ok := t.Interface.(interface{ SetConnectionLostHandler(func(error)) }); ok {
		s.SetConnectionLostHandler(fn)
	}
}

// The wrapper does not forward RequiresLegacyProtocol: mcp-go's streamable
// HTTP transport says it needs a legacy revision when its standalone GET
// stream is on, yet it opens that stream only after a legacy handshake (on
// 2026-07-28 it does not), so the server/discover probe is sent there too
// (see revision.go; TestProtocolChoiceHTTP pins this).

// toolListing is what a connection keeps of its tools/list pages: the
// raw input schemas (wire.RawSchemas) and the shortest ttlMs (listTTL).
type toolListing struct {
	raw wire.RawSchemas
	ttl listTTL // the listing's ttlMs (2026-07-28; see revision.go)
}

// capture keeps what a tools/list result page says.
func (l *toolListing) capture(result json.RawMessage) {
	l.ttl.capture(result)
	l.raw.Capture(result)
}

// apply replaces the decoded input schemas of tools by the raw ones.
func (l *toolListing) apply(tools []mcp.Tool) { l.raw.Apply(tools) }
