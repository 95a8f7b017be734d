package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpgate/acpgate/mcpclient/oauth"
	"github.com/acpgate/acpgate/mcpclient/wire"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Progress is one notifications/progress from a server about a call, or,
// for a call that runs as a task, a change of the task's status: then
// TaskID, Status and StatusMessage are the task's, and Progress, Total and
// Message those of the last progress notification (zero before the first).
type Progress struct {
	Progress float64
	Total    float64 // 0 when the server did not say
	Message  string

	TaskID        string // "" unless the call runs as a task
	Status        string // the task's status ("working", "input_required", ...)
	StatusMessage string // the task's status message, if any
}

// CallOption configures one CallTool.
type CallOption func(*callState)

// WithProgress has fn called for each progress notification of the call. fn
// runs on the transport's reader goroutine (for a call that runs as a task,
// also on the goroutine polling the task; never two calls at once, and in
// the order the reports were taken, an overtaken one dropped, so the last
// call has the newest state): it must return quickly and must not call back
// into the Manager.
func WithProgress(fn func(Progress)) CallOption {
	return func(c *callState) { c.onProgress = fn }
}

// callState is one call in flight, found by its progress token. ctx (the
// call's, ending with it) and tool are what its server requests are
// attributed with (see requestContext).
type callState struct {
	ctx        context.Context
	tool       string
	timer      *time.Timer
	timeout    time.Duration
	onProgress func(Progress)
	task       atomic.Pointer[taskState] // set once the call runs as a task
}

// CallTool calls tool on server with args (anything that marshals to a JSON
// object, such as map[string]any or json.RawMessage; nil for none).
//
// The call has the server's call timeout; every progress notification the
// server sends for it restarts that timeout. Cancelling ctx sends
// notifications/cancelled to the server (once, on every transport). The
// result is passed through as the server sent it, in mcp-go's type on
// purpose (see the package doc; it is decoded without copying large texts):
// IsError, every content block and StructuredContent. Errors wrap
// ErrUnknownServer, ErrUnknownTool,
// ErrNotReady (ErrRestarting while the server restarts, ErrNeedsAuth while
// it waits for sign-in), ErrRateLimited, ErrCallTimeout,
// ErrResponseTooLarge, ErrServerExited or ErrConnLost, or the context's
// error. A call that runs as a task (2025-11-25: tasks.go; 2026-07-28:
// exttasks.go) may also fail with a *TaskRunningError, ErrTaskFailed (with
// the task's *RequestError) or ErrTaskCancelled; a call refused for want of
// a client capability fails with a *MissingCapabilityError, and one answered
// with something that does not fit it with ErrInvalidResponse.
//
// A call the server refuses for want of a sign-in (a token that no longer
// works, or a 403 asking for more scope) waits, where Options.SignIn is
// set, for a sign-in (the one under way, or a new one presented through
// Options.SignIn), bounded by ctx, and is then made again, once; a
// server that signs in by a machine grant signs in at once, bounded by the
// call's timeout (an authorization server that does not answer in time
// fails the call naming its endpoint, wrapping oauth.ErrNoAnswer, and
// leaves the server's state as it was). Otherwise it fails with an error
// wrapping ErrNeedsAuth. Safe for concurrent use.
func (m *Manager) CallTool(ctx context.Context, server, tool string, args any, opts ...CallOption) (*mcp.CallToolResult, error) {
	s, err := m.fleet.server(server)
	if err != nil {
		return nil, err
	}
	c, err := s.readyConn(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.lister.checkTool(tool); err != nil {
		return nil, err
	}
	if s.limiter != nil && !s.limiter.Allow(time.Now()) {
		return nil, fmt.Errorf("%w: %q allows %d calls per minute; try again shortly", ErrRateLimited, server, s.spec.CallsPerMinute)
	}
	cs := &callState{tool: tool, timeout: s.spec.CallTimeout}
	for _, o := range opts {
		o(cs)
	}
	deadline := time.Now().Add(cs.timeout)
	res, err := s.caller.callTool(ctx, c, tool, args, cs)
	if errors.Is(err, ErrNeedsAuth) {
		var signedIn bool
		if signedIn, err = s.caller.signInForCall(ctx, c, err, "tools/call "+tool, deadline); signedIn {
			res, err = s.caller.callTool(ctx, c, tool, args, cs)
			if errors.Is(err, ErrNeedsAuth) {
				s.caller.authFailed(c, err)
			}
		}
	}
	return res, err
}

// callTool makes one tools/call on c, within the call timeout; the call's
// context carries cs (see callKey).
func (cl *caller) callTool(ctx context.Context, c *conn, tool string, args any, cs *callState) (*mcp.CallToolResult, error) {
	token := "acpgate-" + strconv.FormatUint(cl.tokenSeq.Add(1), 10)
	callCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	callCtx = context.WithValue(callCtx, callKey{}, cs)
	cs.ctx = callCtx
	callCtx = wire.WithSizeTrip(callCtx)
	callCtx, slot := withResultSlot(callCtx)
	cs.timer = time.AfterFunc(cs.timeout, func() { cancel(errTimeout) })
	defer cs.timer.Stop()
	cl.calls.Store(token, cs)
	defer cl.calls.Delete(token)

	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	req.Params.Meta = &mcp.Meta{ProgressToken: token}
	req.Params.Task = cl.asTask(c, tool)
	res, err := c.client.CallTool(callCtx, req)
	if err == nil {
		if slot.task != nil {
			return cl.followTask(ctx, callCtx, c, cs, *slot.task, slot)
		}
		if slot.ext != nil {
			return cl.followExtTask(ctx, callCtx, c, cs, slot.ext)
		}
		if slot.res != nil {
			return slot.res, nil // decoded by the transport wrapper
		}
		return res, nil
	}
	return nil, cl.extErr(ctx, callCtx, c, "tools/call "+tool, err)
}

// signInForCall handles the request what on c, refused for want of a
// sign-in (err), and reports whether a sign-in succeeded; when none did it
// returns the error to give the caller. A machine grant (no user) signs
// in at once, bounded by the call's deadline; with Options.SignIn set a
// user's sign-in is waited for (the one under way, or a new one), bounded
// by ctx. A sign-in that fails because the authorization server did not
// answer (oauth.ErrNoAnswer) is that server's fault: the error names its
// endpoint, and the MCP server keeps its state. Otherwise, see authFailed.
func (cl *caller) signInForCall(ctx context.Context, c *conn, err error, what string, deadline time.Time) (bool, error) {
	var serr error
	if oc := cl.auth.current(); oc != nil && oc.Machine() {
		sctx, cancel := context.WithDeadline(ctx, deadline)
		serr = oc.SignIn(sctx, nil)
		cancel()
	} else if cl.env.opts.SignIn != nil {
		var run *signInRun
		if run, serr = cl.auth.signIn(signInCall); serr == nil {
			serr = cl.auth.wait(ctx, run)
		}
	} else {
		serr = err
	}
	if serr == nil {
		return true, nil
	}
	if tokErr := noToken(serr); tokErr != nil {
		if ctx.Err() == nil && !time.Now().Before(deadline) {
			return false, fmt.Errorf("%w: MCP server %q: %s: not sent within %s: %w", ErrCallTimeout, cl.env.spec.Name, what, cl.env.spec.CallTimeout, tokErr)
		}
		return false, fmt.Errorf("MCP server %q: %s: %w", cl.env.spec.Name, what, tokErr)
	}
	if serr != err {
		err = fmt.Errorf("%w (sign-in: %w)", err, serr)
	}
	cl.authFailed(c, err)
	return false, err
}

// authFailed handles a request on c that needed a sign-in it did not get:
// a token that no longer works (401) sends the server to wait for sign-in;
// a token short of a scope (403) leaves it serving the other tools.
func (cl *caller) authFailed(c *conn, err error) {
	var na *oauth.NeedsAuthError
	if errors.As(err, &na) && na.Status == http.StatusForbidden {
		return
	}
	if hl, ok := c.link.(*httpLink); ok {
		hl.lost(err)
	}
}

// callErr turns an error of a request on c into one that says what happened.
func (cl *caller) callErr(ctx, callCtx context.Context, c *conn, what string, err error) error {
	if tokErr := noToken(err); tokErr != nil {
		// The request was never sent: its token did not come. Not the
		// server's fault, nor the link's.
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("MCP server %q: %s: %w: %w", cl.env.spec.Name, what, ctx.Err(), tokErr)
		case errors.Is(context.Cause(callCtx), errTimeout):
			return fmt.Errorf("%w: MCP server %q: %s: not sent within %s: %w", ErrCallTimeout, cl.env.spec.Name, what, cl.env.spec.CallTimeout, tokErr)
		}
		return fmt.Errorf("MCP server %q: %s: %w", cl.env.spec.Name, what, tokErr)
	}
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("MCP server %q: %s: %w", cl.env.spec.Name, what, ctx.Err())
	case errors.Is(context.Cause(callCtx), errTimeout):
		return fmt.Errorf("%w: MCP server %q: %s: no answer or progress within %s", ErrCallTimeout, cl.env.spec.Name, what, cl.env.spec.CallTimeout)
	case errors.Is(err, ErrResponseTooLarge), errors.Is(err, ErrNeedsAuth), errors.Is(err, ErrInvalidResponse):
		// Not the link's fault: the link stays (see authFailed).
		return fmt.Errorf("MCP server %q: %s: %w", cl.env.spec.Name, what, err)
	}
	if wire.SizeTripped(callCtx) {
		return fmt.Errorf("MCP server %q: %s: %w: an event of the response stream was over %d bytes (%w)",
			cl.env.spec.Name, what, ErrResponseTooLarge, cl.env.opts.MaxMessageSize, err)
	}
	if isTransportErr(err) {
		if died := linkDied(c, err); died != nil {
			return fmt.Errorf("MCP server %q: %s failed: %w", cl.env.spec.Name, what, died)
		}
	}
	return fmt.Errorf("MCP server %q: %s: %w", cl.env.spec.Name, what, err)
}

// noToken returns the oauth error inside err when err says that a request
// got no token because an authorization server did not answer in time
// (it wraps oauth.ErrNoAnswer): the *oauth.Error of a failed token
// flight, else the *oauth.UnansweredError of a request that stopped
// waiting for one. Nil otherwise.
func noToken(err error) error {
	if !errors.Is(err, oauth.ErrNoAnswer) {
		return nil
	}
	var fe *oauth.Error
	if errors.As(err, &fe) {
		return fe
	}
	var ue *oauth.UnansweredError
	if errors.As(err, &ue) {
		return ue
	}
	return nil
}

// isTransportErr reports whether err was raised below JSON-RPC (the
// request or its answer never made it), as opposed to an error response.
func isTransportErr(err error) bool {
	var te *transport.Error
	return errors.As(err, &te) || errors.Is(err, transport.ErrTransportClosed)
}

// linkDied reports why c's link died, if the transport error err was caused
// by that. It waits a moment for the process exit to be noticed.
func linkDied(c *conn, err error) error {
	t := time.NewTimer(200 * time.Millisecond)
	defer t.Stop()
	select {
	case <-c.link.done():
		return c.link.reason()
	case <-t.C:
	}
	if hl, ok := c.link.(*httpLink); ok {
		hl.lost(err)
		return c.link.reason()
	}
	return nil
}

// progress handles a notifications/progress: it restarts the call's
// timeout and reports the progress.
func (cl *caller) progress(params map[string]any) {
	var key string
	switch tok := params["progressToken"].(type) {
	case string:
		key = tok
	default:
		return
	}
	v, ok := cl.calls.Load(key)
	if !ok {
		return
	}
	cs := v.(*callState)
	cs.timer.Reset(cs.timeout)
	if cs.onProgress != nil {
		p := Progress{}
		p.Progress, _ = params["progress"].(float64)
		p.Total, _ = params["total"].(float64)
		p.Message, _ = params["message"].(string)
		reportProgress(cs, p)
	}
}

// ReadResource reads uri from server, within the server's call timeout.
// The result is mcp-go's type on purpose (see the package doc): the
// contents as the server sent them.
func (m *Manager) ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error) {
	s, c, callCtx, cancel, err := m.fleet.request(ctx, server)
	if err != nil {
		return nil, err
	}
	defer cancel(nil)
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := c.client.ReadResource(callCtx, req)
	if errors.Is(err, ErrNeedsAuth) {
		s.caller.authFailed(c, err)
	}
	if err != nil {
		return nil, s.caller.callErr(ctx, callCtx, c, "resources/read "+uri, err)
	}
	return res, nil
}

// GetPrompt renders prompt name of server with args, within the server's
// call timeout. The result is mcp-go's type on purpose (see the package
// doc): the messages as the server sent them.
func (m *Manager) GetPrompt(ctx context.Context, server, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	s, c, callCtx, cancel, err := m.fleet.request(ctx, server)
	if err != nil {
		return nil, err
	}
	defer cancel(nil)
	req := mcp.GetPromptRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.client.GetPrompt(callCtx, req)
	if errors.Is(err, ErrNeedsAuth) {
		s.caller.authFailed(c, err)
	}
	if err != nil {
		return nil, s.caller.callErr(ctx, callCtx, c, "prompts/get "+name, err)
	}
	return res, nil
}

// request finds a ready server and a context bounded by its call timeout.
func (fl *fleet) request(ctx context.Context, server string) (*server, *conn, context.Context, context.CancelCauseFunc, error) {
	s, err := fl.server(server)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	c, err := s.readyConn(ctx)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	callCtx, cancel := context.WithCancelCause(context.WithValue(ctx, callKey{}, true))
	t := time.AfterFunc(s.spec.CallTimeout, func() { cancel(errTimeout) })
	callCtx = wire.WithSizeTrip(callCtx)
	return s, c, callCtx, func(err error) { t.Stop(); cancel(err) }, nil
}

// caller makes tool calls and follows the tasks they become (both
// revisions), with progress and cancellation. Files: calls.go, tasks.go,
// exttasks.go, relatedtask.go.
type caller struct {
	env      roleEnv
	auth     callSignIn     // the auth role: sign-in for a refused call
	tools    toolIndex      // the lister: which tools run as tasks
	raw      rawRequester   // the subscriber: requests mcp-go has no method for
	answers  serverRequests // the answerer: input requests of 2026-07-28 results
	calls    sync.Map       // progress token (string) -> *callState
	tokenSeq atomic.Uint64
}

// nextID returns a number not returned before, for a progress token or a
// request id.
func (cl *caller) nextID() uint64 { return cl.tokenSeq.Add(1) }

// notify takes progress and task status notifications.
func (cl *caller) notify(method string, params map[string]any) bool {
	switch method {
	case string(mcp.MethodNotificationProgress):
		cl.progress(params)
	case mcp.MethodNotificationTasksStatus:
		cl.taskStatus(params)
	default:
		return false
	}
	return true
}
