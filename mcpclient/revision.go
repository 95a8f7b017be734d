package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Protocol 2026-07-28 (the stateless revision: server/discover instead of
// initialize, multi round-trip input_required results instead of server
// requests, subscriptions/listen, ttlMs cache hints).
//
// A stdio server is offered 2026-07-28 first: mcp-go's client sends
// server/discover, and falls back to the initialize handshake (2025-11-25,
// and older servers negotiate down from it) when that fails. mcp-go bounds
// that probe by a fixed timeout (5 s by default), which a server that
// ignores unknown methods would cost every start. Instead the transport
// wrapper sends a ping behind the server/discover (fenceAfter later; ping is allowed
// before initialization in every revision): a server that answers the ping
// but not the probe within discoverGrace ignores unknown methods, and the
// probe fails then. Should such a server refuse initialize after all, it
// may be a 2026-07-28 server slow to answer the probe only: the handshake
// is tried once more, with a probe that waits for its answer. A probe
// answered without a 2026-07-28 version among supportedVersions (some
// servers answer any method with {}) fails too. mcp-go's own bound is
// switched off: a server slow to start (npx fetching a package) answers
// neither, and is waited for within the connect timeout as before.
//
// An acp server (MCP over ACP, see tunnel.go) is offered 2026-07-28 as a
// stdio server is, fence included: a client that relays to a server
// ignoring unknown methods leaves the probe unanswered just the same.
//
// A streamable HTTP server is offered 2026-07-28 the same way, without the
// fence: every POST gets an answer (a legacy server refuses the probe with
// a JSON-RPC error or an HTTP 4xx at once). Only after a legacy handshake
// does the transport open its standalone GET stream (list_changed and
// server requests of 2025-11-25 arrive there); on 2026-07-28 notifications
// come on the subscriptions/listen stream instead. Legacy SSE servers are
// pinned to 2025-11-25 (the revision has no SSE transport).
//
// On a 2026-07-28 connection:
//   - a call's input_required result is answered by mcp-go's retry loop
//     through handlers that are the same as those of server requests
//     (answer): elicitation goes to Options.Elicitor attributed to the call,
//     and so on;
//   - the server's list_changed notifications are asked for with
//     subscriptions/listen (for what its capabilities say can change);
//   - a tools/list result's ttlMs is honoured: the list is kept until it
//     expires, and listed again then (at most every minTTL).

// discoverGrace is how long a probe may stay unanswered after the ping
// behind it was answered: a server may handle requests concurrently (mcp-go
// does), and on a loaded machine the probe's answer can trail the ping's.
// Misjudging a 2026-07-28 server costs it the new revision for good; the
// grace costs only servers that ignore unknown methods, once per start.
const discoverGrace = 200 * time.Millisecond

// fenceAfter is how long a probe goes without the ping behind it: a
// server answers it at once (with its discovery, or an error), and the
// ping is then not sent at all.
const fenceAfter = 5 * time.Millisecond

// minTTL is the shortest time between two listings for ttlMs.
const minTTL = 250 * time.Millisecond

// errNoDiscover: the server does not speak 2026-07-28.
var errNoDiscover = errors.New("server does not answer server/discover")

// protocolOptions are the mcp-go client options that choose the protocol
// for a connection over t (the raw transport).
func (dl *dialer) protocolOptions(t transport.Interface) []client.ClientOption {
	tr := TransportStdio
	switch t.(type) {
	case *transport.SSE:
		tr = TransportSSE
	case *transport.StreamableHTTP:
		tr = TransportHTTP
	}
	if dl.legacyOnly(tr) {
		return []client.ClientOption{client.WithProtocolVersion(ProtocolVersion)}
	}
	opts := []client.ClientOption{client.WithDiscoverTimeout(-1)}
	in := inputHandlers{dl.requests}
	if dl.requests.requestHandler(string(mcp.MethodElicitationCreate)) != nil {
		opts = append(opts, client.WithElicitationHandler(in))
	}
	if dl.requests.requestHandler(string(mcp.MethodSamplingCreateMessage)) != nil {
		opts = append(opts, client.WithSamplingHandler(in))
	}
	if dl.requests.requestHandler(string(mcp.MethodListRoots)) != nil {
		opts = append(opts, client.WithRootsHandler(in))
	}
	return opts
}

// legacyOnly reports whether a connection over tr is offered 2025-11-25
// only: legacy SSE, and streamable HTTP once the server answered the probe
// without a 2026-07-28 version (see redialLegacy).
func (dl *dialer) legacyOnly(tr Transport) bool {
	switch tr {
	case TransportSSE:
		return true
	case TransportHTTP:
		return dl.httpLegacy.Load()
	}
	return false
}

// preferredVersion is the protocol version asked for in the handshake of c.
func (dl *dialer) preferredVersion(c *conn) string {
	if dl.legacyOnly(c.transport) {
		return ProtocolVersion
	}
	return mcp.LATEST_PROTOCOL_VERSION
}

// redialLegacy reports whether the new HTTP connection c is to be
// replaced by one pinned to 2025-11-25: its server answered the
// server/discover probe without listing 2026-07-28, which mcp-go's
// transport takes for a 2026-07-28 start (it opens no GET stream then),
// before the client falls back to initialize. The server is not probed
// again.
func (dl *dialer) redialLegacy(c *conn) bool {
	w, ok := c.client.GetTransport().(interface{ probeState() *probeState })
	if !ok || c.modern() || w.probeState() == nil || !w.probeState().noModern.Load() {
		return false
	}
	dl.httpLegacy.Store(true)
	return true
}

// modern reports whether c speaks 2026-07-28 or later.
func (c *conn) modern() bool { return c.init != nil && mcp.IsModernProtocol(c.init.ProtocolVersion) }

// probeState is what the transport wrapper knows of a connection's
// server/discover probe. Safe for concurrent use.
type probeState struct {
	cut      atomic.Bool // a probe was given up because the ping behind it was answered
	noFence  atomic.Bool // send the next probe without the fence
	noModern atomic.Bool // a probe was answered, but without a 2026-07-28 version
	// needsAuth is the error of a probe refused for want of a sign-in (a
	// 401, or a 403 asking for more scope): the server is then not taken
	// for a legacy one, and the initialize mcp-go falls back to fails with
	// this error unsent, so that the server waits for a sign-in and is
	// probed again with the token.
	needsAuth atomic.Pointer[error]
}

// retryModern reports whether the handshake of c, which failed with err,
// is to be tried again with a probe that waits for its answer: a probe was
// cut short by the fence, and the server then refused initialize (a
// 2026-07-28-only server that answers server/discover slowly but pings
// at once).
func retryModern(c *conn, err error) bool {
	w, ok := c.client.GetTransport().(interface{ probeState() *probeState })
	if !ok || isTransportErr(err) {
		return false
	}
	p := w.probeState()
	if p == nil || !p.cut.Load() || p.noFence.Load() {
		return false
	}
	p.noFence.Store(true)
	return true
}

func (t wrapped) probeState() *probeState { return t.probe }

// discover sends the server/discover probe req (see probe), and once more
// when the server refuses it with -32022 naming the very version it
// carried among those it supports: mcp-go renegotiates only to another
// version, and would otherwise take the server for a legacy one (SEP-2575:
// a client retries with a version from error.data.supported).
func (t wrapped) discover(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := t.probeOnce(ctx, req)
	if err == nil && retrySameVersion(req, resp) {
		req.ID = mcp.NewRequestId("acpgate-discover-retry")
		resp, err = t.probeOnce(ctx, req)
	}
	if err != nil && t.probe != nil && errors.Is(err, ErrNeedsAuth) {
		t.probe.needsAuth.Store(&err)
	}
	return resp, err
}

// retrySameVersion reports whether resp refuses req with -32022
// (unsupported protocol version) while listing the version req carries in
// its _meta among the supported ones.
func retrySameVersion(req transport.JSONRPCRequest, resp *transport.JSONRPCResponse) bool {
	if resp == nil || resp.Error == nil || resp.Error.Code != mcp.UNSUPPORTED_PROTOCOL_VERSION {
		return false
	}
	var data mcp.UnsupportedProtocolVersionData
	if raw, err := json.Marshal(resp.Error.Data); err != nil || json.Unmarshal(raw, &data) != nil {
		return false
	}
	var params struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	raw, err := json.Marshal(req.Params)
	if err != nil || json.Unmarshal(raw, &params) != nil {
		return false
	}
	var sent string
	if json.Unmarshal(params.Meta[mcp.MetaKeyProtocolVersion], &sent) != nil || sent == "" {
		return false
	}
	return slices.Contains(data.Supported, sent)
}

// refusedForAuth returns the error of a probe refused for want of a
// sign-in, or nil.
func (p *probeState) refusedForAuth() error {
	if p == nil {
		return nil
	}
	if e := p.needsAuth.Load(); e != nil {
		return *e
	}
	return nil
}

// probeOnce sends the server/discover probe req behind a ping fence (see
// the comment at the top of this file).
func (t wrapped) probeOnce(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	if t.probe == nil || t.probe.noFence.Load() {
		return t.checkProbe(t.Interface.SendRequest(ctx, req))
	}
	type answer struct {
		resp *transport.JSONRPCResponse
		err  error
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	probe, fence := make(chan answer, 1), make(chan answer, 1)
	sending := make(chan struct{})
	go func() {
		close(sending)
		r, err := t.Interface.SendRequest(ctx, req)
		probe <- answer{r, err}
	}()
	go func() {
		// The fence's delay counts from when the probe is being sent, so
		// that a probe whose goroutine is slow to run still goes first
		// (mostly: the write itself is not waited for).
		select {
		case <-sending:
		case <-ctx.Done():
			return
		}
		// Most servers answer the probe at once, and need no fence.
		wait := time.NewTimer(fenceAfter)
		defer wait.Stop()
		select {
		case <-wait.C:
		case <-ctx.Done():
			return
		}
		ping := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId("acpgate-discover-fence"), Method: string(mcp.MethodPing)}
		r, err := t.Interface.SendRequest(ctx, ping)
		fence <- answer{r, err}
	}()
	var grace <-chan time.Time
	for {
		select {
		case a := <-probe:
			return t.checkProbe(a.resp, a.err)
		case a := <-fence:
			if a.err != nil {
				return nil, fmt.Errorf("ping before server/discover: %w", a.err)
			}
			timer := time.NewTimer(discoverGrace)
			defer timer.Stop()
			grace = timer.C
		case <-grace:
			t.probe.cut.Store(true)
			return nil, fmt.Errorf("%w: it answered a ping sent after it", errNoDiscover)
		}
	}
}

// checkProbe passes on the answer to a server/discover probe, but as an
// error when it lists no 2026-07-28 version.
func (t wrapped) checkProbe(resp *transport.JSONRPCResponse, err error) (*transport.JSONRPCResponse, error) {
	if err != nil || resp == nil || resp.Error != nil {
		return resp, err
	}
	if !speaksModern(resp.Result) {
		if t.probe != nil {
			t.probe.noModern.Store(true)
		}
		return nil, fmt.Errorf("%w: its answer lists no 2026-07-28 version", errNoDiscover)
	}
	return resp, nil
}

// speaksModern reports whether a server/discover result lists a modern
// protocol version this client speaks.
func speaksModern(result json.RawMessage) bool {
	var r mcp.DiscoverResult
	if json.Unmarshal(result, &r) != nil {
		return false
	}
	return slices.ContainsFunc(r.SupportedVersions, func(v string) bool {
		return mcp.IsModernProtocol(v) && slices.Contains(mcp.ValidProtocolVersions, v)
	})
}

// inputHandlers answers the input requests of input_required results
// (mcp-go's handler interfaces) through the server's request handlers.
type inputHandlers struct{ an serverRequests }

// Elicit implements client.ElicitationHandler.
func (h inputHandlers) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return answerAs[mcp.ElicitationResult](ctx, h.an, mcp.MethodElicitationCreate, req.Params)
}

// CreateMessage implements client.SamplingHandler.
func (h inputHandlers) CreateMessage(ctx context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	return answerAs[mcp.CreateMessageResult](ctx, h.an, mcp.MethodSamplingCreateMessage, req.CreateMessageParams)
}

// ListRoots implements client.RootsHandler.
func (h inputHandlers) ListRoots(ctx context.Context, _ mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	return answerAs[mcp.ListRootsResult](ctx, h.an, mcp.MethodListRoots, struct{}{})
}

// answerAs answers an input request through an.answer, in mcp-go's type T.
func answerAs[T any](ctx context.Context, an serverRequests, method mcp.MCPMethod, params any) (*T, error) {
	res, err := an.answer(ctx, string(method), params)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("%s answer: %w", method, err)
	}
	return &out, nil
}

// listTTL keeps the shortest ttlMs of a connection's tools/list pages, and
// the connection's one expiry timer. Safe for concurrent use.
type listTTL struct {
	mu      sync.Mutex
	ttl     time.Duration // 0: none given
	timer   *time.Timer   // the pending re-listing, if any
	stopped bool          // the connection is gone: arm no more
}

// capture notes the ttlMs of a tools/list result page.
func (l *listTTL) capture(result json.RawMessage) {
	var r mcp.CacheableResult
	if json.Unmarshal(result, &r) != nil {
		return
	}
	ms, ok := r.TTL()
	if !ok {
		return
	}
	d := max(time.Duration(ms)*time.Millisecond, minTTL)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ttl == 0 || d < l.ttl {
		l.ttl = d
	}
}

// arm runs expire when the ttl noted since the last arm runs out, and
// forgets that ttl. It replaces the expiry of earlier listings: a
// connection has one pending re-listing at most, however often it is
// listed (list_changed, expiry). A listing without ttlMs cancels it.
func (l *listTTL) arm(expire func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.ttl
	l.ttl = 0
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	if d == 0 || l.stopped {
		return
	}
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		l.mu.Lock()
		current := l.timer == t && !l.stopped
		if current {
			l.timer = nil
		}
		l.mu.Unlock()
		if current {
			expire()
		}
	})
	l.timer = t
}

// stop cancels the pending re-listing for good (the connection ends).
func (l *listTTL) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
}
