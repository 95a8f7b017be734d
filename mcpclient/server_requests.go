package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// requestServer answers a request from the server, or hands it to next
// (mcp-go's own handling: ping, and refusals).
type requestServer func(ctx context.Context, req transport.JSONRPCRequest, next transport.RequestHandler) (*transport.JSONRPCResponse, error)

// withServe returns t (a wrapTransport result) with its server requests
// going through fn first, and its initialize request edited by onInit.
func withServe(t transport.Interface, fn requestServer, onInit initEdit) transport.Interface {
	switch w := t.(type) {
	case wrapped:
		w.serve, w.onInit = fn, onInit
		return w
	case wrappedHTTP:
		w.serve, w.onInit = fn, onInit
		return w
	}
	return t
}

// serveRequest answers elicitation/create, sampling/createMessage and
// roots/list with the Options' handlers; everything else, and those whose
// handler is not set, go to next. ctx is the transport's (see
// requestContext).
func (an *answerer) serveRequest(ctx context.Context, req transport.JSONRPCRequest, next transport.RequestHandler) (*transport.JSONRPCResponse, error) {
	if an.requestHandler(req.Method) == nil {
		return next(ctx, req)
	}
	res, err := an.answer(ctx, req.Method, req.Params)
	return reply(req.ID, res, err), nil
}

// requestHandler is the handler of server requests of method, or nil
// when acpgate does not answer them (no handler set in the Options).
func (an *answerer) requestHandler(method string) func(context.Context, Origin, json.RawMessage) (any, error) {
	o := an.env.opts
	switch method {
	case string(mcp.MethodElicitationCreate):
		if o.Elicitor != nil {
			return an.elicit
		}
	case string(mcp.MethodSamplingCreateMessage):
		if an.env.samples() {
			return an.sample
		}
	case string(mcp.MethodListRoots):
		if o.Roots != nil {
			return an.roots
		}
	}
	return nil
}

// answer answers a server request of method with params: a request on the
// wire (ctx is the transport's) or, on a 2026-07-28 connection, an input
// request of a call's input_required result (ctx is the call's); see
// requestContext for which call it belongs to.
func (an *answerer) answer(ctx context.Context, method string, params any) (any, error) {
	handle := an.requestHandler(method)
	if handle == nil {
		return nil, fmt.Errorf("no handler for %s", method)
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	rctx, origin, done := an.requestContext(ctx, raw)
	defer done()
	an.env.logger.Debug("server request", "method", method, "tool", origin.Tool)
	res, err := handle(rctx, origin, raw)
	if err != nil {
		an.env.logger.Debug("server request refused", "method", method, "err", err)
		return nil, err
	}
	return res, nil
}

// errorResponse is the JSON-RPC error answering a request that failed with
// err: a RequestError's code, -32602 for a malformed request, -32800 when
// it was cancelled, -32603 otherwise.
func errorResponse(id mcp.RequestId, err error) *transport.JSONRPCResponse {
	var re *RequestError
	switch {
	case errors.As(err, &re):
		resp := transport.NewJSONRPCErrorResponse(id, re.Code, re.Message, nil)
		if len(re.Data) > 0 {
			resp.Error.Data = re.Data
		}
		return resp
	case errors.Is(err, ErrBadRequest):
		return transport.NewJSONRPCErrorResponse(id, mcp.INVALID_PARAMS, err.Error(), nil)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return transport.NewJSONRPCErrorResponse(id, mcp.REQUEST_INTERRUPTED, "request cancelled: "+err.Error(), nil)
	}
	return transport.NewJSONRPCErrorResponse(id, mcp.INTERNAL_ERROR, err.Error(), nil)
}

// callKey is the context key of the callState of a tools/call.
type callKey struct{}

// requestContext attributes a server request whose transport context is
// ctx and whose params are params to a call (see the attribution rules in
// requests.go) and returns the handler's context, the request's origin,
// and the function that releases the context.
func (an *answerer) requestContext(ctx context.Context, params json.RawMessage) (context.Context, Origin, func()) {
	o := Origin{Server: an.env.spec.Name}
	cs, _ := ctx.Value(callKey{}).(*callState)
	if cs == nil {
		cs = an.calls.taskCall(params)
	}
	if cs == nil {
		cs = an.calls.soleCall()
	}
	if cs == nil {
		rctx, cancel := context.WithTimeout(ctx, an.env.spec.CallTimeout)
		return rctx, o, cancel
	}
	o.Tool = cs.tool
	rctx, cancel := context.WithCancel(cs.ctx)
	stop := context.AfterFunc(ctx, cancel)
	return rctx, o, func() { stop(); cancel() }
}

// soleCall returns the server's running call if exactly one is running.
func (cl *caller) soleCall() *callState {
	var only *callState
	n := 0
	cl.calls.Range(func(_, v any) bool {
		only, n = v.(*callState), n+1
		return n < 2
	})
	if n != 1 {
		return nil
	}
	return only
}

func (an *answerer) elicit(ctx context.Context, o Origin, params json.RawMessage) (any, error) {
	req, err := decodeElicit(params, o)
	if err != nil {
		return nil, err
	}
	res, err := an.env.opts.Elicitor.Elicit(ctx, req)
	if err != nil {
		return nil, err
	}
	switch res.Action {
	case ElicitAccept:
		if req.Mode == ElicitURL {
			res.Content = nil // the answer is the consent; the rest happens out of band
		}
	case ElicitDecline, ElicitCancel:
		res.Content = nil
	default:
		return nil, fmt.Errorf("elicitation handler answered with unknown action %q", res.Action)
	}
	return res, nil
}

func (an *answerer) sample(ctx context.Context, o Origin, params json.RawMessage) (any, error) {
	req, err := decodeSampling(params, o)
	if err != nil {
		return nil, err
	}
	return an.env.opts.Sampler.CreateMessage(ctx, req)
}

func (an *answerer) roots(ctx context.Context, o Origin, _ json.RawMessage) (any, error) {
	roots, err := an.env.opts.Roots.Roots(ctx, o)
	if err != nil {
		return nil, err
	}
	if roots == nil {
		roots = []Root{}
	}
	return struct {
		Roots []Root `json:"roots"`
	}{roots}, nil
}

// elicitationComplete passes a notifications/elicitation/complete on (on
// the transport's reader goroutine).
func (an *answerer) elicitationComplete(params map[string]any) {
	id, _ := params["elicitationId"].(string)
	if e := an.env.opts.Elicitor; e != nil && id != "" {
		e.ElicitationComplete(an.env.spec.Name, id)
	}
}

// RootsChanged tells every ready server that the roots changed
// (notifications/roots/list_changed); servers then ask again with
// roots/list. It does nothing when Options.Roots is nil. It returns once
// the notification has been sent to each ready server (or failed: the
// errors are joined), bounded by ctx. Safe for concurrent use.
func (m *Manager) RootsChanged(ctx context.Context) error {
	if m.opts.Roots == nil {
		return nil
	}
	var errs []error
	for _, s := range m.fleet.list().servers {
		c, err := s.readyConn(ctx)
		if err != nil {
			continue
		}
		if err := c.client.RootListChanges(ctx); err != nil {
			errs = append(errs, fmt.Errorf("MCP server %q: %w", s.spec.Name, err))
		}
	}
	return errors.Join(errs...)
}

// answerer answers the requests a server sends the client (elicitation,
// sampling, roots, and its tasks of them) and the notifications about
// them. Files: server_requests.go, clienttasks.go, logging.go.
type answerer struct {
	env   roleEnv
	logs  *logGate   // the server's own output, into the log
	calls callFinder // the caller
}

// notify takes log messages and the end of URL elicitations.
func (an *answerer) notify(method string, params map[string]any) bool {
	switch method {
	case string(mcp.MethodNotificationMessage):
		an.serverLog(params)
	case string(mcp.MethodNotificationElicitationComplete):
		an.elicitationComplete(params)
	default:
		return false
	}
	return true
}
