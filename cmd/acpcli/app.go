package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/acpgate/acpgate/acp/sdkservers"
	"github.com/acpgate/acpgate/mcpclient"
	acp "github.com/coder/acp-go-sdk"
)

// exitError carries the exit code a failure maps to.
type exitError struct {
	code  int
	err   error
	quiet bool // already reported
}

// Error returns the underlying error's message.
func (e *exitError) Error() string { return e.err.Error() }

// Unwrap returns the underlying error.
func (e *exitError) Unwrap() error { return e.err }

// requestFailure is a failed ACP request; its message shows the JSON-RPC
// error code, message and data.
type requestFailure struct {
	method string
	err    error
}

// Error names the method and shows the JSON-RPC error code, message and data.
func (f *requestFailure) Error() string {
	var re *acp.RequestError
	if !errors.As(f.err, &re) {
		return fmt.Sprintf("%s failed: %v", f.method, f.err)
	}
	s := fmt.Sprintf("%s failed: JSON-RPC error %d: %s", f.method, re.Code, re.Message)
	if re.Data != nil {
		if b, err := json.Marshal(re.Data); err == nil {
			s += " (data: " + string(b) + ")"
		}
	}
	return s
}

// Unwrap returns the error the request failed with.
func (f *requestFailure) Unwrap() error { return f.err }

// app is one acpcli run against one agent.
type app struct {
	opts   options
	r      *renderer
	client *cliClient
	conn   *acp.ClientSideConnection
	proc   *agentProc
	dead   <-chan struct{} // closed when the agent exits or the connection ends
	sigs   <-chan os.Signal
	lines  *lineReader
	sid    acp.SessionId

	interrupted bool // a SIGINT cancelled the current turn
}

// signalError is the error for quitting on sig, with the conventional exit
// code for dying of it (130 for SIGINT).
func signalError(what string, sig os.Signal) error {
	code, err := exitInterrupted, "interrupted"
	if s, ok := sig.(syscall.Signal); ok && s != syscall.SIGINT {
		code, err = 128+int(s), s.String()
	}
	if what != "" {
		err = what + ": " + err
	}
	return &exitError{code: code, err: errors.New(err)}
}

// call runs one request, watching for the agent's death, signals and the
// deadline. On the first SIGINT it runs onInterrupt if given (and keeps
// waiting); otherwise, and on any further signal, it gives up.
func call[T any](a *app, ctx context.Context, method string, onInterrupt func(), fn func(context.Context) (T, error)) (T, error) {
	var zero T
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := fn(ctx)
		ch <- result{v, err}
	}()
	for {
		select {
		case res := <-ch:
			if res.err != nil {
				return zero, a.classify(ctx, method, res.err)
			}
			return res.v, nil
		case <-a.dead:
			// A final response may have raced the agent's exit; take it if
			// it comes at once.
			select {
			case res := <-ch:
				if res.err == nil {
					return res.v, nil
				}
			case <-time.After(time.Second):
			}
			return zero, a.deadError(method)
		case sig := <-a.sigs:
			if onInterrupt == nil || a.interrupted || sig != os.Interrupt {
				return zero, signalError(method, sig)
			}
			a.interrupted = true
			onInterrupt()
		}
	}
}

// classify turns a request error into an exitError: the agent died (3),
// the deadline passed (1) or the request failed (1).
func (a *app) classify(ctx context.Context, method string, err error) error {
	if a.isDead() {
		return a.deadError(method)
	}
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		return &exitError{code: exitFailed, err: fmt.Errorf("%s: timed out after %s", method, a.opts.timeout)}
	}
	return &exitError{code: exitFailed, err: &requestFailure{method: method, err: err}}
}

// isDead reports whether the connection has ended or the agent has exited.
// (It looks at both directly: a request fails with "peer disconnected" as
// soon as the connection ends, possibly before dead is closed.)
func (a *app) isDead() bool {
	select {
	case <-a.conn.Done():
		return true
	case <-a.proc.Exited():
		return true
	default:
		return false
	}
}

// deadError describes the agent's death or the connection's end (exit code 3).
func (a *app) deadError(method string) error {
	prefix := ""
	if method != "" {
		prefix = method + ": "
	}
	err := fmt.Errorf("%sthe connection to the agent closed unexpectedly", prefix)
	select {
	case <-a.proc.Exited():
		if a.proc.Err() != nil {
			err = fmt.Errorf("%sthe agent exited unexpectedly (%w)", prefix, a.proc.Err())
		} else {
			err = fmt.Errorf("%sthe agent exited unexpectedly (exit status 0)", prefix)
		}
	case <-time.After(500 * time.Millisecond):
	}
	return &exitError{code: exitAgentDied, err: err}
}

// start initializes the connection and opens (or loads) the session.
func (a *app) start(ctx context.Context) error {
	initReq := acp.InitializeRequest{
		ProtocolVersion: acp.ProtocolVersion(1),
		ClientCapabilities: acp.ClientCapabilities{
			Fs:       acp.FileSystemCapabilities{ReadTextFile: false, WriteTextFile: false},
			Terminal: false,
		},
		ClientInfo: &acp.Implementation{Name: "acpcli", Version: buildVersion()},
	}
	init, err := call(a, ctx, acp.AgentMethodInitialize, nil, func(ctx context.Context) (acp.InitializeResponse, error) {
		return a.conn.Initialize(ctx, initReq)
	})
	if err != nil {
		return err
	}
	a.describeAgent(init)
	if a.opts.load != "" {
		return a.loadSession(ctx)
	}
	req := acp.NewSessionRequest{Cwd: a.opts.cwd, McpServers: sdkservers.ToSDKList(a.opts.servers)}
	resp, err := call(a, ctx, acp.AgentMethodSessionNew, nil, func(ctx context.Context) (acp.NewSessionResponse, error) {
		return a.conn.NewSession(ctx, req)
	})
	if err != nil {
		return err
	}
	a.sid = resp.SessionId
	a.r.Notef("session: %s", a.sid)
	a.describeModes(resp.Modes)
	a.waitServers(ctx, resp.Meta)
	return nil
}

// loadSession sends session/load; the agent replays the history as
// session/update notifications, rendered like live ones.
func (a *app) loadSession(ctx context.Context) error {
	a.sid = acp.SessionId(a.opts.load)
	req := acp.LoadSessionRequest{SessionId: a.sid, Cwd: a.opts.cwd, McpServers: sdkservers.ToSDKList(a.opts.servers)}
	resp, err := call(a, ctx, acp.AgentMethodSessionLoad, nil, func(ctx context.Context) (acp.LoadSessionResponse, error) {
		return a.conn.LoadSession(ctx, req)
	})
	if err != nil {
		return err
	}
	a.r.Notef("session: %s", a.sid)
	a.describeModes(resp.Modes)
	a.waitServers(ctx, resp.Meta)
	return nil
}

// waitServers waits (up to --wait-servers) for the MCP servers the agent
// reports as connecting in meta and its session_info_updates, then prints
// each server's state. An agent that reports none is not waited for.
func (a *app) waitServers(ctx context.Context, meta any) {
	a.client.servers.report(meta, true)
	list, known := a.client.servers.wait(ctx, a.opts.waitServers)
	if !known {
		return
	}
	for _, line := range describe(list) {
		a.r.Notef("%s", line)
	}
}

// describeAgent prints who the agent is and warns about capabilities the
// requested session needs but the agent does not advertise.
func (a *app) describeAgent(init acp.InitializeResponse) {
	name := "(no agentInfo)"
	if info := init.AgentInfo; info != nil {
		name = strings.TrimSpace(info.Name + " " + info.Version)
		if info.Title != nil && *info.Title != "" && *info.Title != info.Name {
			name += " (" + *info.Title + ")"
		}
	}
	a.r.Notef("agent: %s, protocol version %d", name, init.ProtocolVersion)
	caps := init.AgentCapabilities
	if init.ProtocolVersion != 1 {
		a.r.Notef("warning: the agent answered protocol version %d; acpcli speaks 1", init.ProtocolVersion)
	}
	if a.opts.load != "" && !caps.LoadSession {
		a.r.Notef("warning: the agent does not advertise loadSession; trying session/load anyway")
	}
	for _, s := range a.opts.servers {
		if (s.Transport == mcpclient.TransportHTTP && !caps.McpCapabilities.Http) || (s.Transport == mcpclient.TransportSSE && !caps.McpCapabilities.Sse) {
			a.r.Notef("warning: MCP server %q needs a transport the agent does not advertise in mcpCapabilities", s.Name)
		}
	}
}

// describeModes prints the session's current and available modes, if any.
func (a *app) describeModes(m *acp.SessionModeState) {
	if m == nil || len(m.AvailableModes) == 0 {
		return
	}
	ids := make([]string, 0, len(m.AvailableModes))
	for _, mode := range m.AvailableModes {
		ids = append(ids, string(mode.Id))
	}
	a.r.Notef("mode: %s (available: %s)", m.CurrentModeId, strings.Join(ids, ", "))
}

// turn sends one text prompt and waits for the turn to end. The first
// SIGINT sends session/cancel and keeps waiting; the turn then fails with
// exit code 130.
func (a *app) turn(ctx context.Context, text string) error {
	a.client.beginTurn()
	req := acp.PromptRequest{SessionId: a.sid, Prompt: []acp.ContentBlock{acp.TextBlock(text)}}
	onInterrupt := func() {
		a.r.Notef("cancelling the turn (Ctrl-C again to quit)")
		a.client.cancelTurn()
		if err := a.conn.Cancel(context.Background(), acp.CancelNotification{SessionId: a.sid}); err != nil {
			a.r.Notef("acpcli: session/cancel: %v", err)
		}
	}
	resp, err := call(a, ctx, acp.AgentMethodSessionPrompt, onInterrupt, func(ctx context.Context) (acp.PromptResponse, error) {
		return a.conn.Prompt(ctx, req)
	})
	if err != nil {
		return err
	}
	a.r.Stop(resp.StopReason)
	if a.interrupted {
		return &exitError{code: exitInterrupted, err: errors.New("interrupted")}
	}
	switch resp.StopReason {
	case acp.StopReasonEndTurn, acp.StopReasonMaxTokens, acp.StopReasonMaxTurnRequests, acp.StopReasonRefusal:
		return nil
	}
	return &exitError{code: exitFailed, err: fmt.Errorf("the turn ended with stop reason %q", resp.StopReason)}
}

// interactive reads prompts from stdin, one per non-empty line, one turn at
// a time, until end of input. A failed request is reported and the loop goes
// on (the exit code is then 1); the agent dying, a signal or the deadline
// ends it.
func (a *app) interactive(ctx context.Context) error {
	var failed error
	for {
		if a.opts.stdinTTY {
			a.r.Prompt("> ")
		}
		line, ok, err := a.nextLine(ctx)
		if err != nil {
			return err
		}
		if !ok {
			return failed
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		err = a.turn(ctx, line)
		if err == nil {
			continue
		}
		var ee *exitError
		if ctx.Err() != nil || !errors.As(err, &ee) || ee.code != exitFailed {
			return err // timed out, interrupted or the agent is gone
		}
		a.r.Notef("acpcli: %v", err)
		failed = &exitError{code: exitFailed, err: err, quiet: true}
	}
}

// nextLine waits for the next line of stdin (ok false at end of input).
func (a *app) nextLine(ctx context.Context) (line string, ok bool, err error) {
	select {
	case line, ok := <-a.lines.Lines():
		return line, ok, nil
	case <-a.dead:
		return "", false, a.deadError("")
	case sig := <-a.sigs:
		return "", false, signalError("", sig)
	case <-ctx.Done():
		return "", false, &exitError{code: exitFailed, err: fmt.Errorf("timed out after %s", a.opts.timeout)}
	}
}
