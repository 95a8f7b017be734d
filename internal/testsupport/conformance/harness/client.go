package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/acpgate/acpgate/mcpclient"
	acp "github.com/coder/acp-go-sdk"
)

// maxRedirects bounds how many redirects a followed authorization URL may
// take (the authorization endpoint redirects once, to acpgate's listener).
const maxRedirects = 10

// errNotLoopback: the harness contacts loopback hosts only.
var errNotLoopback = errors.New("not a loopback URL")

// client is the harness's side of ACP. It records the outcome of each
// tool call, allows every permission request, answers form elicitations
// (accepted with the defaults of the required fields) and URL
// elicitations (accepted, then the URL is followed with an http.Client,
// redirects included, in the background). Safe for concurrent use: the
// SDK calls it from its own goroutines.
type client struct {
	log  *slog.Logger
	http *http.Client

	mu     sync.Mutex
	calls  map[acp.ToolCallId]acp.ToolCallStatus // the last status of each tool call
	text   []byte                                // agent text not yet logged
	follow sync.WaitGroup                        // URL follows in flight
	closed bool                                  // no more follows start (closeFollows)
	urls   []error                               // the outcome of each URL followed, in order of completion
	urlsCh chan struct{}                         // closed and replaced when urls grows
	done   int                                   // elicitation/complete notifications received
	// state is the scenario's server's state as the last
	// session_info_update reported it ("": none yet); stateCh is closed
	// and replaced when it changes.
	state   mcpclient.State
	stateCh chan struct{}
}

func newClient(log *slog.Logger, timeout time.Duration) *client {
	c := &client{log: log, calls: map[acp.ToolCallId]acp.ToolCallStatus{}, urlsCh: make(chan struct{}), stateCh: make(chan struct{})}
	c.http = &http.Client{
		Timeout: timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			return checkLoopback(req.URL)
		},
	}
	return c
}

// checkLoopback accepts http(s) URLs whose host is localhost or a loopback
// address.
func checkLoopback(u *url.URL) error {
	host := u.Hostname()
	if ip := net.ParseIP(host); (ip != nil && ip.IsLoopback()) || host == "localhost" {
		if u.Scheme == "http" || u.Scheme == "https" {
			return nil
		}
	}
	return fmt.Errorf("%w: %s", errNotLoopback, u.Redacted())
}

// SessionUpdate records tool call statuses and logs the agent's text.
func (c *client) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	u := n.Update
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
		c.text = append(c.text, u.AgentMessageChunk.Content.Text.Text...)
	case u.ToolCall != nil:
		c.calls[u.ToolCall.ToolCallId] = u.ToolCall.Status
		c.log.Info("tool call", "id", u.ToolCall.ToolCallId, "title", u.ToolCall.Title, "status", u.ToolCall.Status)
	case u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil:
		c.calls[u.ToolCallUpdate.ToolCallId] = *u.ToolCallUpdate.Status
		c.log.Info("tool call update", "id", u.ToolCallUpdate.ToolCallId, "status", *u.ToolCallUpdate.Status, "output", u.ToolCallUpdate.RawOutput)
	case u.SessionInfoUpdate != nil && u.SessionInfoUpdate.Meta != nil:
		if st := serverState(u.SessionInfoUpdate.Meta); st != "" && st != c.state {
			c.state = st
			close(c.stateCh)
			c.stateCh = make(chan struct{})
			c.log.Info("server state", "state", st)
		}
	}
	return nil
}

// settledState returns the server's state once it is past connecting, as
// session_info_updates report it after session/new (which answers while
// the server connects; from is the response's state), or the last state
// reported when ctx ends.
func (c *client) settledState(ctx context.Context, from mcpclient.State) mcpclient.State {
	for {
		c.mu.Lock()
		st, ch := c.state, c.stateCh
		c.mu.Unlock()
		if st == "" {
			st = from
		}
		if st != mcpclient.StateConnecting {
			return st
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return st
		}
	}
}

// turnDone logs the agent text of the turn that ended and returns the
// statuses of the tool calls made since the last turnDone.
func (c *client) turnDone() map[acp.ToolCallId]acp.ToolCallStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.text) > 0 {
		c.log.Info("agent text", "text", string(c.text))
		c.text = c.text[:0]
	}
	calls := c.calls
	c.calls = map[acp.ToolCallId]acp.ToolCallStatus{}
	return calls
}

// RequestPermission allows the call (allow_once, else allow_always).
func (c *client) RequestPermission(_ context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	for _, kind := range []acp.PermissionOptionKind{acp.PermissionOptionKindAllowOnce, acp.PermissionOptionKindAllowAlways} {
		for _, o := range p.Options {
			if o.Kind == kind {
				c.log.Info("permission allowed", "option", o.OptionId)
				return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{
					Selected: &acp.RequestPermissionOutcomeSelected{OptionId: o.OptionId, Outcome: "selected"},
				}}, nil
			}
		}
	}
	c.log.Warn("permission request without an allow option: cancelled")
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{
		Cancelled: &acp.RequestPermissionOutcomeCancelled{Outcome: "cancelled"},
	}}, nil
}

// UnstableCreateElicitation answers elicitation/create: a form is accepted
// with formAnswer; a URL is accepted and followed in the background (a
// URL that is not on a loopback host is declined, never contacted).
func (c *client) UnstableCreateElicitation(ctx context.Context, req acp.UnstableCreateElicitationRequest) (acp.UnstableCreateElicitationResponse, error) {
	switch {
	case req.Form != nil:
		content := formAnswer(req.Form.RequestedSchema)
		c.log.Info("form elicitation accepted", "message", req.Form.Message, "content", content)
		return acp.UnstableCreateElicitationResponse{Accept: &acp.UnstableCreateElicitationAccept{Action: "accept", Content: content}}, nil
	case req.Url != nil:
		u, err := url.Parse(req.Url.Url)
		if err == nil {
			err = checkLoopback(u)
		}
		if err != nil {
			c.log.Error("URL elicitation declined", "id", req.Url.ElicitationId, "err", err)
			return acp.NewUnstableCreateElicitationResponseDecline(), nil
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closed {
			return acp.NewUnstableCreateElicitationResponseCancel(), nil
		}
		c.log.Info("URL elicitation accepted", "id", req.Url.ElicitationId, "message", req.Url.Message, "url", req.Url.Url)
		c.follow.Add(1)
		go c.followURL(context.WithoutCancel(ctx), u.String())
		return acp.NewUnstableCreateElicitationResponseAccept(), nil
	}
	return acp.UnstableCreateElicitationResponse{}, acp.NewInvalidParams("elicitation/create: neither form nor url")
}

// followURL does what a browser would: GET u, following redirects (to
// acpgate's loopback redirect listener), and records the outcome.
func (c *client) followURL(ctx context.Context, u string) {
	defer c.follow.Done()
	err := c.get(ctx, u)
	if err != nil {
		c.log.Error("following the URL", "err", err)
	}
	c.mu.Lock()
	c.urls = append(c.urls, err)
	close(c.urlsCh)
	c.urlsCh = make(chan struct{})
	c.mu.Unlock()
}

// get fetches u and discards the body; any status is a success (what the
// pages say is for the user).
func (c *client) get(ctx context.Context, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	c.log.Info("followed the URL", "final", resp.Request.URL.Redacted(), "status", resp.StatusCode)
	return err
}

// waitFollowed waits until at least n URL elicitations have been followed
// (or ctx ends) and returns the outcome of each follow so far.
func (c *client) waitFollowed(ctx context.Context, n int) ([]error, error) {
	for {
		c.mu.Lock()
		got, ch := slices.Clone(c.urls), c.urlsCh
		c.mu.Unlock()
		if len(got) >= n {
			return got, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return got, fmt.Errorf("waiting for a URL elicitation (sign-in): %w", context.Cause(ctx))
		}
	}
}

// closeFollows makes later URL elicitations cancelled, and waits for the
// follows in flight (each bounded by the HTTP client's timeout).
func (c *client) closeFollows() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.follow.Wait()
}

// UnstableCompleteElicitation logs elicitation/complete (acpgate sends it
// once the server a sign-in was for is ready) and counts it.
func (c *client) UnstableCompleteElicitation(_ context.Context, n acp.UnstableCompleteElicitationNotification) error {
	c.log.Info("elicitation complete", "id", n.ElicitationId)
	c.mu.Lock()
	c.done++
	close(c.urlsCh)
	c.urlsCh = make(chan struct{})
	c.mu.Unlock()
	return nil
}

// waitCompleted waits until at least n elicitations were completed, or
// ctx ends (a sign-in that fails on purpose never completes).
func (c *client) waitCompleted(ctx context.Context, n int) bool {
	for {
		c.mu.Lock()
		done, ch := c.done, c.urlsCh
		c.mu.Unlock()
		if done >= n {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// formAnswer is the content of an accepted form: the default of each
// required field (or its type's zero value, or its first enum value).
// Optional fields are left out: applying their defaults (SEP-1034) is the
// MCP client's job, which the elicitation-sep1034-client-defaults scenario
// checks.
func formAnswer(s acp.UnstableElicitationSchema) map[string]any {
	content := map[string]any{}
	for _, name := range s.Required {
		prop, _ := s.Properties[name].(map[string]any)
		if d, ok := prop["default"]; ok {
			content[name] = d
			continue
		}
		if enum, ok := prop["enum"].([]any); ok && len(enum) > 0 {
			content[name] = enum[0]
			continue
		}
		switch prop["type"] {
		case "boolean":
			content[name] = false
		case "number", "integer":
			content[name] = 0
		case "array":
			content[name] = []any{}
		default:
			content[name] = ""
		}
	}
	return content
}

// ReadTextFile is not offered (clientCapabilities.fs is false).
func (c *client) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsReadTextFile)
}

// WriteTextFile is not offered.
func (c *client) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsWriteTextFile)
}

// CreateTerminal is not offered (clientCapabilities.terminal is false).
func (c *client) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalCreate)
}

// KillTerminal is not offered.
func (c *client) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalKill)
}

// TerminalOutput is not offered.
func (c *client) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalOutput)
}

// ReleaseTerminal is not offered.
func (c *client) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalRelease)
}

// WaitForTerminalExit is not offered.
func (c *client) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalWaitForExit)
}
