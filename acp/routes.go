package acp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp/jsonrpc"
)

// This file is the ACP method surface: every method the agent serves, the
// type its params decode into, the checks they pass first, and the
// JSON-RPC error every failure is answered with. The connection
// (acp/jsonrpc) hands each message read to Agent.handle.

// route is how the agent serves one ACP method. prepare (optional) checks
// the raw params, and may rewrite them, before serve decodes them; notify,
// when set, serves the method sent as a notification. A method with no
// notify is a request: sent without an id it is ignored with a warning
// (it would run with no one to answer, e.g. start servers no one knows
// of).
type route struct {
	prepare func(params json.RawMessage) (json.RawMessage, *inputError)
	serve   func(ctx context.Context, params json.RawMessage) (any, error)
	notify  func(ctx context.Context, params json.RawMessage) error
}

// typed is the route of a request whose params decode into P and are
// validated as acp-go-sdk validates them, answered by fn.
func typed[P any, R any](fn func(context.Context, P) (R, error)) route {
	return route{serve: func(ctx context.Context, raw json.RawMessage) (any, error) {
		var p P
		if err := decodeParams(raw, &p); err != nil {
			return nil, err
		}
		return fn(ctx, p)
	}}
}

// untyped is the route of a request answered by fn from its raw params,
// which are first checked against P's member types (checkParamTypes): the
// methods whose params acp-go-sdk v0.13.0 types differently from the
// schema, or not at all.
func untyped[P any](fn func(context.Context, json.RawMessage) (any, error)) route {
	return route{serve: func(ctx context.Context, raw json.RawMessage) (any, error) {
		if ierr := checkParamTypes(raw, new(P)); ierr != nil {
			return nil, ierr
		}
		return fn(ctx, raw)
	}}
}

// rawParams is the route of a request answered by fn from its raw
// params, which fn checks itself.
func rawParams(fn func(context.Context, json.RawMessage) (any, error)) route {
	return route{serve: fn}
}

// decodeParams decodes raw into p (a pointer to a params type): a member
// of the wrong JSON type is -32602 naming it (checkParamTypes); what else
// does not decode, or fails the type's Validate, is -32602 with the
// decoder's words, as acp-go-sdk answers it.
func decodeParams(raw json.RawMessage, p any) error {
	if ierr := checkParamTypes(raw, p); ierr != nil {
		return ierr
	}
	if err := json.Unmarshal(raw, p); err != nil {
		return acpsdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	if v, ok := p.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return acpsdk.NewInvalidParams(map[string]any{"error": err.Error()})
		}
	}
	return nil
}

// withPrepare returns r with its params checked by prepare first.
func (r route) withPrepare(prepare func(json.RawMessage) (json.RawMessage, *inputError)) route {
	r.prepare = prepare
	return r
}

// routes is every ACP method agent a serves.
func routes(a *Agent) map[string]route {
	servers := func(raw json.RawMessage) (json.RawMessage, *inputError) {
		return normalizeServers(raw, a.advertisedACP.Load())
	}
	prompt := func(raw json.RawMessage) (json.RawMessage, *inputError) { return raw, checkPrompt(raw) }
	cancel := typed(func(ctx context.Context, p acpsdk.CancelNotification) (any, error) { return nil, a.Cancel(ctx, p) })
	cancel.notify = func(ctx context.Context, raw json.RawMessage) error { _, err := cancel.serve(ctx, raw); return err }
	mcpMessage := untyped[messageParams](func(ctx context.Context, raw json.RawMessage) (any, error) {
		return a.tunnel.message(ctx, raw, true)
	})
	mcpMessage.notify = func(ctx context.Context, raw json.RawMessage) error {
		if ierr := checkParamTypes(raw, new(messageParams)); ierr != nil {
			return ierr
		}
		_, err := a.tunnel.message(ctx, raw, false)
		return err
	}
	return map[string]route{
		acpsdk.AgentMethodInitialize:             rawParams(a.initialize),
		acpsdk.AgentMethodAuthenticate:           typed(a.auth.authenticate),
		acpsdk.AgentMethodLogout:                 typed(a.auth.logout),
		acpsdk.AgentMethodSessionNew:             typed(a.newSession).withPrepare(servers),
		acpsdk.AgentMethodSessionLoad:            typed(a.LoadSession).withPrepare(servers),
		acpsdk.AgentMethodSessionResume:          typed(a.ResumeSession).withPrepare(servers),
		acpsdk.AgentMethodSessionFork:            untyped[acpsdk.UnstableForkSessionRequest](a.forkSession).withPrepare(servers),
		methodSessionDelete:                      rawParams(a.deleteSession),
		acpsdk.AgentMethodSessionList:            typed(a.ListSessions),
		acpsdk.AgentMethodSessionClose:           typed(a.CloseSession),
		acpsdk.AgentMethodSessionPrompt:          typed(a.Prompt).withPrepare(prompt),
		acpsdk.AgentMethodSessionCancel:          cancel,
		methodSteering:                           rawParams(a.steer),
		acpsdk.AgentMethodSessionSetMode:         typed(a.SetSessionMode),
		acpsdk.AgentMethodSessionSetConfigOption: typed(a.SetSessionConfigOption),
		acpsdk.AgentMethodProvidersList: rawParams(func(context.Context, json.RawMessage) (any, error) {
			return a.prov.list()
		}),
		acpsdk.AgentMethodProvidersSet: untyped[acpsdk.UnstableSetProvidersRequest](func(_ context.Context, raw json.RawMessage) (any, error) {
			return a.prov.set(raw)
		}),
		acpsdk.AgentMethodProvidersDisable: rawParams(func(_ context.Context, raw json.RawMessage) (any, error) {
			return a.prov.disable(raw)
		}),
		acpsdk.AgentMethodMcpMessage: mcpMessage,
	}
}

// methodSessionDelete is session/delete (stable in ACP v1 since June
// 2026; acp-go-sdk v0.13.0 does not know it).
const methodSessionDelete = "session/delete"

// dispatcher hands each message the connection reads to its route. Its
// table is set once; safe for concurrent use.
type dispatcher struct {
	table  map[string]route
	logger *slog.Logger
}

// serves reports whether the agent serves method (initialize advertises
// a capability only when it does).
func (d *dispatcher) serves(method string) bool {
	_, ok := d.table[method]
	return ok
}

// handle is the connection's handler: it serves one request or
// notification from the client by its route. Every error is answered as a
// JSON-RPC error (rpcError).
func (d *dispatcher) handle(ctx context.Context, r *jsonrpc.Request) (any, error) {
	rt, ok := d.table[r.Method]
	switch {
	case !ok && r.IsCall():
		return nil, rpcError(acpsdk.NewMethodNotFound(r.Method))
	case !ok:
		return nil, jsonrpc.ErrMethodNotFound
	case !r.IsCall() && rt.notify == nil:
		d.logger.Warn("client sent a request without an id; ignored (it would get no answer)", "method", r.Method)
		return nil, nil
	}
	params := r.Params
	if rt.prepare != nil {
		var ierr *inputError
		if params, ierr = rt.prepare(params); ierr != nil {
			d.logger.Warn("client message rejected", "method", r.Method, "id", string(r.ID), "code", ierr.Code, "path", ierr.Path, "problem", ierr.Problem)
			return nil, rpcError(ierr)
		}
	}
	if !r.IsCall() {
		return nil, rt.notify(ctx, params)
	}
	res, err := rt.serve(ctx, params)
	if err != nil {
		var ierr *inputError
		if errors.As(err, &ierr) {
			d.logger.Warn("client message rejected", "method", r.Method, "id", string(r.ID), "code", ierr.Code, "path", ierr.Path, "problem", ierr.Problem)
		}
		return nil, rpcError(err)
	}
	return res, nil
}

// rpcError is the JSON-RPC error answering err: an *inputError names the
// member at fault, an *acpsdk.RequestError is sent as it is, a
// cancellation is -32800 and anything else -32603, as acp-go-sdk answers
// them.
func rpcError(err error) *jsonrpc.Error {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je
	}
	var ie *inputError
	if errors.As(err, &ie) {
		return ie.rpcError()
	}
	var re *acpsdk.RequestError
	if !errors.As(err, &re) {
		if errors.Is(err, context.Canceled) {
			re = acpsdk.NewRequestCancelled(map[string]any{"error": err.Error()})
		} else {
			re = acpsdk.NewInternalError(map[string]any{"error": err.Error()})
		}
	}
	out := &jsonrpc.Error{Code: re.Code, Message: re.Message}
	if re.Data != nil {
		out.Data, _ = json.Marshal(re.Data)
	}
	return out
}

// preempt handles session/cancel as soon as it is read, ahead of the
// notifications queued before it (see jsonrpc.Options.Preempt): a burst
// of them can never fill the queue, and a cancellation is never dropped.
func (d *dispatcher) preempt(r *jsonrpc.Request) bool {
	if r.Method != acpsdk.AgentMethodSessionCancel {
		return false
	}
	if _, err := d.handle(context.Background(), r); err != nil {
		d.logger.Debug("session/cancel not handled", "err", err)
	}
	return true
}
