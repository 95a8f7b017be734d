package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

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
// gets no request: the error wraps ErrUnsupported. Subscriptions do not
// survive a restart of the server. Safe for concurrent use.
func (m *Manager) Subscribe(ctx context.Context, server, uri string) error {
	return m.subscription(ctx, server, uri, string(mcp.MethodResourcesSubscribe))
}

// Unsubscribe ends a subscription made by Subscribe
// (resources/unsubscribe). Like Subscribe, it fails with ErrUnsupported
// for a server without subscriptions. Safe for concurrent use.
func (m *Manager) Unsubscribe(ctx context.Context, server, uri string) error {
	return m.subscription(ctx, server, uri, string(mcp.MethodResourcesUnsubscribe))
}

// subscription sends resources/subscribe or resources/unsubscribe (method)
// about uri. mcp-go's client has no call for them: the request goes
// through the connection's transport with an id of acpgate's own, which
// cannot collide with the client's numeric ids.
func (m *Manager) subscription(ctx context.Context, server, uri, method string) error {
	s, c, callCtx, cancel, err := m.request(ctx, server)
	if err != nil {
		return err
	}
	defer cancel(nil)
	caps := c.client.GetServerCapabilities()
	if caps.Resources == nil || !caps.Resources.Subscribe {
		return fmt.Errorf("MCP server %q: %s: %w (it declares no resource subscriptions)", server, method, ErrUnsupported)
	}
	req := transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION,
		ID:      mcp.NewRequestId("acpgate-sub-" + strconv.FormatUint(s.tokenSeq.Add(1), 10)),
		Method:  method,
		Params:  mcp.SubscribeParams{URI: uri},
	}
	resp, err := c.client.GetTransport().SendRequest(callCtx, req)
	if err == nil && resp.Error != nil {
		err = resp.Error.AsError()
	}
	if err != nil {
		return s.callErr(ctx, callCtx, c, method+" "+uri, err)
	}
	return nil
}

// resourceUpdated handles a notifications/resources/updated: it becomes an
// EventResourceUpdated. It runs on the transport's reader goroutine.
func (s *server) resourceUpdated(params map[string]any) {
	uri, _ := params["uri"].(string)
	if uri == "" {
		return
	}
	s.m.events.push(Event{Kind: EventResourceUpdated, Server: s.spec.Name, URI: uri, Status: s.status()})
}

// CompletePrompt asks server for the completions of argument arg of its
// prompt (completion/complete), given the value typed so far and the
// values of the prompt's other arguments (known, may be nil), within the
// server's call timeout. A server that does not declare completions gets
// no request: the error wraps ErrUnsupported. Safe for concurrent use.
func (m *Manager) CompletePrompt(ctx context.Context, server, prompt, arg, value string, known map[string]string) ([]string, error) {
	s, c, callCtx, cancel, err := m.request(ctx, server)
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
		return nil, s.callErr(ctx, callCtx, c, "completion/complete "+prompt, err)
	}
	return res.Completion.Values, nil
}

// setLogLevel sends logging/setLevel to a server that declares logging,
// at the lowest level Options.Logger records: a server then sends the
// messages acpgate would log and no more. Its messages only ever reach
// the logger (see serverLog), never a model. Best effort: a failure is
// logged at debug level.
func (s *server) setLogLevel(ctx context.Context, c *conn) {
	if c.client.GetServerCapabilities().Logging == nil {
		return
	}
	req := mcp.SetLevelRequest{}
	req.Params.Level = mcpLevel(ctx, s.logger)
	//lint:ignore SA1019 logging is deprecated in 2026-07-28 only; we pin 2025-11-25, where servers still honour it.
	if err := c.client.SetLevel(ctx, req); err != nil {
		s.logger.Debug("logging/setLevel failed", "level", req.Params.Level, "err", err)
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
