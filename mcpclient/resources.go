package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// This file holds what a session does with a server's resources and
// prompts beyond listing them: which server a resource URI belongs to,
// resource subscriptions, argument completion, and the server's log level.

// ErrUnsupported: the server does not declare the capability a request
// needs (resource subscriptions, completion).
var ErrUnsupported = errors.New("not supported by the MCP server")

// ResourceServer returns the ready server that uri belongs to: the first,
// in spec order, that lists a resource with exactly that URI, else the
// first with a resource template that matches it (RFC 6570). Safe for
// concurrent use.
func (m *Manager) ResourceServer(uri string) (string, bool) {
	for _, r := range m.Resources() {
		if r.Item.URI == uri {
			return r.Server, true
		}
	}
	for _, t := range m.ResourceTemplates() {
		if tpl := t.Item.URITemplate; tpl != nil && tpl.Template != nil && tpl.Match(uri) != nil {
			return t.Server, true
		}
	}
	return "", false
}

// Subscribe asks server for notifications/resources/updated about uri
// (resources/subscribe), within the server's call timeout. Each one
// arrives as an Event of kind EventResourceUpdated through
// Options.OnEvent. A server that does not declare resource subscriptions
// gets no request: the error wraps ErrUnsupported. The subscription is
// made again each time the server restarts, until Unsubscribe. Safe for
// concurrent use.
func (m *Manager) Subscribe(ctx context.Context, server, uri string) error {
	return m.fleet.subscription(ctx, server, uri, true)
}

// Unsubscribe ends a subscription made by Subscribe
// (resources/unsubscribe). Like Subscribe, it fails with ErrUnsupported
// for a server without subscriptions. Safe for concurrent use.
func (m *Manager) Unsubscribe(ctx context.Context, server, uri string) error {
	return m.fleet.subscription(ctx, server, uri, false)
}

// subscription sends resources/subscribe (on) or resources/unsubscribe
// about uri, and records what the server is to be subscribed to.
func (fl *fleet) subscription(ctx context.Context, server, uri string, on bool) error {
	s, c, callCtx, cancel, err := fl.request(ctx, server)
	if err != nil {
		return err
	}
	defer cancel(nil)
	if c.modern() {
		return s.subscriber.listenSubscription(ctx, callCtx, c, uri, on)
	}
	if !on {
		s.subscriber.subs.set(uri, false) // whatever the server answers, the session wants no more
	}
	method, err := s.subscriber.sendSubscription(callCtx, c, uri, on)
	if err != nil {
		if errors.Is(err, ErrUnsupported) {
			return fmt.Errorf("MCP server %q: %s: %w", server, method, err)
		}
		return s.caller.callErr(ctx, callCtx, c, method+" "+uri, err)
	}
	if on {
		s.subscriber.subs.set(uri, true)
	}
	return nil
}

// listenSubscription subscribes to uri (on) or unsubscribes on a
// 2026-07-28 connection, which has no resources/subscribe: the resource
// is added to (or removed from) the filter of the connection's
// subscriptions/listen, which is reopened; subscribing waits until the
// server acknowledged the new filter.
func (sb *subscriber) listenSubscription(ctx, callCtx context.Context, c *conn, uri string, on bool) error {
	if !subscribable(c) {
		return fmt.Errorf("MCP server %q: subscriptions/listen: %w (it declares no resource subscriptions)", sb.env.spec.Name, ErrUnsupported)
	}
	sb.subs.set(uri, on)
	n := c.listen.kick()
	if !on {
		return nil
	}
	err := c.listen.waitAck(callCtx, n)
	switch {
	case err == nil:
		return nil
	case callCtx.Err() != nil:
		return sb.calls.callErr(ctx, callCtx, c, "subscriptions/listen "+uri, err)
	default:
		// The stream failed; it is retried, and names uri from now on.
		return fmt.Errorf("MCP server %q: subscribing to %s: %w", sb.env.spec.Name, uri, err)
	}
}

// subscribable reports whether c's server declares resource
// subscriptions.
func subscribable(c *conn) bool {
	caps := c.client.GetServerCapabilities()
	return caps.Resources != nil && caps.Resources.Subscribe
}

// sendSubscription sends resources/subscribe (on) or resources/unsubscribe
// about uri over c and returns the method's name. mcp-go's client has no
// call for them: the request goes through the connection's transport with
// an id of acpgate's own, which cannot collide with the client's numeric
// ids. A server without subscriptions gets no request (ErrUnsupported).
func (sb *subscriber) sendSubscription(ctx context.Context, c *conn, uri string, on bool) (string, error) {
	method := string(mcp.MethodResourcesUnsubscribe)
	if on {
		method = string(mcp.MethodResourcesSubscribe)
	}
	if !subscribable(c) {
		return method, fmt.Errorf("%w (it declares no resource subscriptions)", ErrUnsupported)
	}
	_, err := sb.rawRequest(ctx, c, "acpgate-sub-", method, mcp.SubscribeParams{URI: uri}, nil)
	return method, err
}

// rawRequest sends a request of method with params (and header, for HTTP)
// over c's transport, for a method mcp-go's client has no call for. Its id
// is acpgate's own (prefix and a number), which cannot collide with the
// client's numeric ids. Errors are what the client's own requests give: a
// transport failure as a *transport.Error, a JSON-RPC error answer as
// mcp-go's error for it.
func (sb *subscriber) rawRequest(ctx context.Context, c *conn, prefix, method string, params any, header http.Header) (json.RawMessage, error) {
	req := transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION,
		ID:      mcp.NewRequestId(prefix + strconv.FormatUint(sb.calls.nextID(), 10)),
		Method:  method,
		Params:  params,
		Header:  header,
	}
	resp, err := c.client.GetTransport().SendRequest(ctx, req)
	if err != nil {
		return nil, transport.NewError(err)
	}
	if resp.Error != nil {
		return nil, resp.Error.AsError()
	}
	return resp.Result, nil
}

// resubscribe makes the server's recorded subscriptions again on a new
// connection (after a restart). Best effort: a failure is logged at debug
// level and the subscription stays recorded for the next start.
func (sb *subscriber) resubscribe(ctx context.Context, c *conn) {
	if c.modern() {
		return // the listen filter names them (listen.go)
	}
	for _, uri := range sb.subs.list() {
		if _, err := sb.sendSubscription(ctx, c, uri, true); err != nil {
			sb.env.logger.Debug("resources/subscribe after a restart failed", "uri", uri, "err", err)
		}
	}
}

// subscriptions is the set of resource URIs a server is subscribed to.
// Safe for concurrent use; the zero value is empty.
type subscriptions struct {
	mu   sync.Mutex
	uris map[string]bool
}

// set records (on) or forgets uri.
func (u *subscriptions) set(uri string, on bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !on {
		delete(u.uris, uri)
		return
	}
	if u.uris == nil {
		u.uris = map[string]bool{}
	}
	u.uris[uri] = true
}

// list returns the recorded URIs, sorted.
func (u *subscriptions) list() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Sorted(maps.Keys(u.uris))
}

// resourceUpdated handles a notifications/resources/updated: it becomes an
// EventResourceUpdated. It runs on the transport's reader goroutine.
func (sb *subscriber) resourceUpdated(params map[string]any) {
	uri, _ := params["uri"].(string)
	if uri == "" {
		return
	}
	sb.owner.resourceUpdated(uri)
}

// CompletePrompt asks server for the completions of argument arg of its
// prompt (completion/complete), given the value typed so far and the
// values of the prompt's other arguments (known, may be nil), within the
// server's call timeout. A server that does not declare completions gets
// no request: the error wraps ErrUnsupported. Safe for concurrent use.
func (m *Manager) CompletePrompt(ctx context.Context, server, prompt, arg, value string, known map[string]string) ([]string, error) {
	s, c, callCtx, cancel, err := m.fleet.request(ctx, server)
	if err != nil {
		return nil, err
	}
	defer cancel(nil)
	if c.client.GetServerCapabilities().Completions == nil {
		return nil, fmt.Errorf("MCP server %q: completion/complete: %w (it declares no completions)", server, ErrUnsupported)
	}
	req := mcp.CompleteRequest{}
	req.Params.Ref = mcp.PromptReference{Type: "ref/prompt", Name: prompt}
	req.Params.Argument = mcp.CompleteArgument{Name: arg, Value: value}
	req.Params.Context = mcp.CompleteContext{Arguments: known}
	res, err := c.client.Complete(callCtx, req)
	if err != nil {
		return nil, s.caller.callErr(ctx, callCtx, c, "completion/complete "+prompt, err)
	}
	return res.Completion.Values, nil
}

// setLogLevel sends logging/setLevel to a server that declares logging,
// at the lowest level Options.Logger records: a server then sends the
// messages acpgate would log and no more. Its messages only ever reach
// the logger (see serverLog), never a model. Best effort: a failure is
// logged at debug level.
func (sb *subscriber) setLogLevel(ctx context.Context, c *conn) {
	if c.client.GetServerCapabilities().Logging == nil {
		return
	}
	req := mcp.SetLevelRequest{}
	req.Params.Level = mcpLevel(ctx, sb.env.logger)
	//lint:ignore SA1019 logging is deprecated in 2026-07-28 only; sent to servers that declare it, whatever their revision.
	if err := c.client.SetLevel(ctx, req); err != nil {
		sb.env.logger.Debug("logging/setLevel failed", "level", req.Params.Level, "err", err)
	}
}

// mcpLevel is the MCP logging level matching the lowest level l records.
func mcpLevel(ctx context.Context, l *slog.Logger) mcp.LoggingLevel {
	switch {
	case l.Enabled(ctx, slog.LevelDebug):
		return mcp.LoggingLevelDebug
	case l.Enabled(ctx, slog.LevelInfo):
		return mcp.LoggingLevelInfo
	case l.Enabled(ctx, slog.LevelWarn):
		return mcp.LoggingLevelWarning
	default:
		return mcp.LoggingLevelError
	}
}

// subscriber holds the resource subscriptions (kept across restarts), the
// 2026-07-28 listen stream and the log level. Files: resources.go,
// listen.go.
type subscriber struct {
	env   roleEnv
	calls callPlumbing   // the caller
	owner resourceEvents // the server
	subs  subscriptions
}

// notify takes resources/updated.
func (sb *subscriber) notify(method string, params map[string]any) bool {
	if method != mcp.MethodNotificationResourceUpdated {
		return false
	}
	sb.resourceUpdated(params)
	return true
}
