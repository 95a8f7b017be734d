package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/acpgate/acpgate/mcpclient/wire"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Tasks on 2026-07-28: the io.modelcontextprotocol/tasks extension
// (SEP-2663). acpgate declares the extension in its client capabilities,
// which mcp-go puts in the _meta of every 2026-07-28 request (the legacy
// initialize has it taken out: see dropExtTasks). A server may then
// answer a tools/call with a CreateTaskResult (resultType "task", the
// task's fields at the top level). The transport wrapper takes it into the
// call's resultSlot (takeCallResult, takeExtTask) and the call follows the
// task (followExtTask):
//
//   - it polls tasks/get at the task's pollIntervalMs (within [minPoll,
//     maxPoll]); a change of status or status message is reported as a
//     Progress and restarts the call timeout, as for 2025-11-25 tasks
//     (taskReport);
//   - input_required: each input request under a key not seen before on
//     this task is answered through the handlers of server requests and
//     multi round-trip input requests (answer: elicitation, sampling,
//     roots, attributed to the call), and the answers are sent with
//     tasks/update; a key seen on an earlier poll is not asked again;
//   - completed: the task's result is the call's, decoded as a tools/call
//     result (the tasks/get answer is bounded like every message);
//   - failed: the call fails with the task's JSON-RPC error, a
//     *RequestError wrapped with ErrTaskFailed;
//   - cancelled (by the server): the call fails with ErrTaskCancelled;
//   - the caller's context ending sends tasks/cancel (never
//     notifications/cancelled: the tools/call was answered), and the call
//     timeout passing without news leaves the task running with a
//     *TaskRunningError, both as for 2025-11-25 tasks (taskErr).
//
// mcp-go v1.2.1 knows none of this (resultType "task", tasks/update, the
// result, error and inputRequests inlined in a tasks/get answer): tasks/get
// and tasks/update go through the connection's transport with the _meta
// mcp-go gives its own requests (extRequest). tasks/cancel is mcp-go's
// CancelTask (cancelTask), whose request is the same in both revisions.
//
// A CreateTaskResult answering any other request, or on a connection that
// did not declare the extension, fails that request with
// ErrInvalidResponse. A request refused with -32021 (a client capability
// missing) fails with a *MissingCapabilityError naming what the server
// wants.

// extTasksID is the Tasks extension's identifier.
const extTasksID = "io.modelcontextprotocol/tasks"

// resultTypeTask is the resultType of a CreateTaskResult.
const resultTypeTask mcp.ResultType = "task"

// Errors of calls that run as 2026-07-28 tasks, and of malformed answers.
var (
	// ErrTaskFailed: the task ended with status failed; the JSON-RPC
	// error it failed with is a *RequestError in the same chain.
	ErrTaskFailed = errors.New("MCP task failed")
	// ErrTaskCancelled: the server cancelled the task.
	ErrTaskCancelled = errors.New("MCP task cancelled by the server")
	// ErrInvalidResponse: the server's answer does not fit the request,
	// e.g. a CreateTaskResult to a request other than tools/call.
	ErrInvalidResponse = errors.New("invalid response from the MCP server")
	// ErrMissingCapability is wrapped by MissingCapabilityError.
	ErrMissingCapability = errors.New("MCP server requires a client capability acpgate does not declare")
)

// MissingCapabilityError is the error of a request the server refused
// with -32021 (Missing Required Client Capability). It wraps
// ErrMissingCapability and the mcp-go error it was made from.
type MissingCapabilityError struct {
	Server  string
	Request string // what was asked, e.g. "tools/call search"
	// Capability names what the server requires, as paths into the
	// capabilities object joined with ", " (e.g.
	// "extensions/io.modelcontextprotocol/tasks"); "" when it did not say.
	Capability string
	err        error
}

// Error implements error.
func (e *MissingCapabilityError) Error() string {
	what := e.Capability
	if what == "" {
		what = "(unnamed)"
	}
	return fmt.Sprintf("MCP server %q: %s: the server requires the client capability %s, which acpgate does not declare here", e.Server, e.Request, what)
}

// Unwrap returns ErrMissingCapability and the underlying error.
func (e *MissingCapabilityError) Unwrap() []error { return []error{ErrMissingCapability, e.err} }

// extTask is a CreateTaskResult or a tasks/get answer (a DetailedTask).
type extTask struct {
	ResultType     mcp.ResultType             `json:"resultType"`
	TaskID         string                     `json:"taskId"`
	Status         mcp.TaskStatus             `json:"status"`
	StatusMessage  string                     `json:"statusMessage"`
	PollIntervalMs *int64                     `json:"pollIntervalMs"`
	InputRequests  map[string]extInputRequest `json:"inputRequests"`
	Result         json.RawMessage            `json:"result"`
	Error          *mcp.JSONRPCErrorDetails   `json:"error"`
}

// extInputRequest is one entry of a task's inputRequests: a server request
// (elicitation/create, sampling/createMessage, roots/list) in the shape of
// one on the wire.
type extInputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// isCreateTask reports whether raw, a result, is a CreateTaskResult.
func isCreateTask(raw json.RawMessage) bool {
	if !bytes.Contains(raw, []byte(`"resultType"`)) {
		return false
	}
	var r struct {
		ResultType mcp.ResultType `json:"resultType"`
	}
	return json.Unmarshal(raw, &r) == nil && r.ResultType == resultTypeTask
}

// takeExtTask takes a CreateTaskResult into slot and reports whether it did.
func takeExtTask(slot *resultSlot, raw json.RawMessage) bool {
	if !isCreateTask(raw) {
		return false
	}
	var t extTask
	if json.Unmarshal(raw, &t) != nil || t.TaskID == "" {
		return false
	}
	slot.ext = &t
	return true
}

// checkTaskResult fails the answer resp to a request of method with
// ErrInvalidResponse when it is a CreateTaskResult and method cannot be
// answered with one (anything but tools/call and tasks/get).
func checkTaskResult(method string, resp *transport.JSONRPCResponse) error {
	if method == string(mcp.MethodToolsCall) || method == string(mcp.MethodTasksGet) || resp == nil || resp.Error != nil {
		return nil
	}
	if isCreateTask(resp.Result) {
		return fmt.Errorf("%w: a CreateTaskResult answering %s", ErrInvalidResponse, method)
	}
	return nil
}

// dropExtTasks removes the Tasks extension from the capabilities caps of
// an initialize request: the extension is of 2026-07-28, and a connection
// that falls back to the handshake does not follow such tasks.
func dropExtTasks(caps map[string]json.RawMessage) {
	var ext map[string]json.RawMessage
	if json.Unmarshal(caps["extensions"], &ext) != nil {
		return
	}
	if _, ok := ext[extTasksID]; !ok {
		return
	}
	delete(ext, extTasksID)
	if len(ext) == 0 {
		delete(caps, "extensions")
		return
	}
	caps["extensions"], _ = json.Marshal(ext)
}

// nameMissingCapability gives a -32021 error the data mcp-go reads the
// missing capability from ({"capability": ...}), made from the
// requiredCapabilities the specification has servers send.
func nameMissingCapability(e *mcp.JSONRPCErrorDetails) {
	if e == nil || e.Code != mcp.MISSING_REQUIRED_CLIENT_CAPABILITY || e.Data == nil {
		return
	}
	b, err := json.Marshal(e.Data)
	if err != nil {
		return
	}
	var d struct {
		Capability   string         `json:"capability"`
		RequiredCaps map[string]any `json:"requiredCapabilities"`
	}
	if json.Unmarshal(b, &d) != nil || d.Capability != "" || len(d.RequiredCaps) == 0 {
		return
	}
	var names []string
	capabilityPaths("", d.RequiredCaps, &names)
	slices.Sort(names)
	e.Data = map[string]any{"capability": strings.Join(names, ", "), "requiredCapabilities": d.RequiredCaps}
}

// capabilityPaths appends the paths of the leaves of caps (an object whose
// empty objects mean "supported") to names, prefixed with prefix.
func capabilityPaths(prefix string, caps map[string]any, names *[]string) {
	for k, v := range caps {
		path := prefix + k
		if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
			capabilityPaths(path+"/", sub, names)
			continue
		}
		*names = append(*names, path)
	}
}

// missingCapability returns err as a *MissingCapabilityError when the
// server refused the request (what) with -32021, and nil otherwise.
func (cl *caller) missingCapability(what string, err error) error {
	var mc mcp.MissingRequiredClientCapabilityError
	if !errors.As(err, &mc) {
		return nil
	}
	return &MissingCapabilityError{Server: cl.env.spec.Name, Request: what, Capability: mc.Capability, err: err}
}

// followExtTask follows the 2026-07-28 task t that the tools/call on
// callCtx created until it ends (see the comment at the top of this file).
// ctx is the caller's context.
func (cl *caller) followExtTask(ctx, callCtx context.Context, c *conn, cs *callState, t *extTask) (*mcp.CallToolResult, error) {
	what := "tools/call " + cs.tool + " (task " + t.TaskID + ")"
	if !c.modern() {
		return nil, fmt.Errorf("MCP server %q: %s: %w: a CreateTaskResult on a %s connection", cl.env.spec.Name, what, ErrInvalidResponse, c.init.ProtocolVersion)
	}
	ts := cs.adoptTask(t.TaskID)
	cl.env.logger.Debug("tool runs as a task (2026-07-28)", "tool", cs.tool, "task", t.TaskID)
	if t.Status.IsTerminal() && t.Result == nil && t.Error == nil && t.Status != mcp.TaskStatusCancelled {
		// A CreateTaskResult carries no result or error, even when the
		// task it creates has already ended: one tasks/get has them.
		next, err := cl.getExtTask(callCtx, c, ts.id)
		if err != nil {
			return nil, cl.extErr(ctx, callCtx, c, "tasks/get (task "+ts.id+")", err)
		}
		t = next
	}
	asked := map[string]bool{}
	poll := time.NewTimer(time.Hour)
	defer poll.Stop()
	for {
		cl.taskReport(cs, mcp.Task{TaskId: ts.id, Status: t.Status, StatusMessage: t.StatusMessage})
		switch t.Status {
		case mcp.TaskStatusCompleted:
			res, ok := wire.DecodeCallResult(t.Result, false)
			if !ok {
				return nil, fmt.Errorf("MCP server %q: %s: %w: the completed task has no tools/call result", cl.env.spec.Name, what, ErrInvalidResponse)
			}
			return res, nil
		case mcp.TaskStatusFailed:
			return nil, cl.taskFailed(what, t)
		case mcp.TaskStatusCancelled:
			return nil, fmt.Errorf("MCP server %q: %s: %w: %s", cl.env.spec.Name, what, ErrTaskCancelled, t.StatusMessage)
		case mcp.TaskStatusInputRequired:
			if err := cl.extInput(callCtx, c, ts.id, t.InputRequests, asked); err != nil {
				if callCtx.Err() != nil {
					return nil, cl.taskErr(ctx, callCtx, c, cs, ts, err)
				}
				cl.cancelTask(c, ts.id)
				return nil, cl.extErr(ctx, callCtx, c, what, err)
			}
		}
		poll.Reset(pollInterval(t.PollIntervalMs))
		select {
		case <-callCtx.Done():
			return nil, cl.taskErr(ctx, callCtx, c, cs, ts, callCtx.Err())
		case <-poll.C:
		}
		next, err := cl.getExtTask(callCtx, c, ts.id)
		if err != nil {
			if callCtx.Err() != nil {
				return nil, cl.taskErr(ctx, callCtx, c, cs, ts, err)
			}
			return nil, cl.extErr(ctx, callCtx, c, "tasks/get (task "+ts.id+")", err)
		}
		t = next
	}
}

// extErr is callErr for the requests of a 2026-07-28 task, a -32021 made
// a *MissingCapabilityError.
func (cl *caller) extErr(ctx, callCtx context.Context, c *conn, what string, err error) error {
	if mc := cl.missingCapability(what, err); mc != nil {
		return mc
	}
	return cl.callErr(ctx, callCtx, c, what, err)
}

// taskFailed is the error of the task t that failed: its JSON-RPC error as
// a *RequestError, wrapped with ErrTaskFailed.
func (cl *caller) taskFailed(what string, t *extTask) error {
	re := &RequestError{Code: mcp.INTERNAL_ERROR, Message: t.StatusMessage}
	if t.Error != nil {
		re.Code, re.Message = t.Error.Code, t.Error.Message
	}
	return fmt.Errorf("MCP server %q: %s: %w: %w", cl.env.spec.Name, what, ErrTaskFailed, re)
}

// getExtTask sends tasks/get for task id.
func (cl *caller) getExtTask(ctx context.Context, c *conn, id string) (*extTask, error) {
	raw, err := cl.extRequest(ctx, c, mcp.MethodTasksGet, map[string]any{"taskId": id})
	if err != nil {
		return nil, err
	}
	var t extTask
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("%w: tasks/get: %w", ErrInvalidResponse, err)
	}
	if t.TaskID != id {
		return nil, fmt.Errorf("%w: tasks/get for task %s answered for task %q", ErrInvalidResponse, id, t.TaskID)
	}
	return &t, nil
}

// extInput answers the input requests of task id whose keys are not in
// asked (which it adds them to), concurrently, and sends the answers with
// tasks/update. ctx is the call's: the requests are attributed to it.
func (cl *caller) extInput(ctx context.Context, c *conn, id string, reqs map[string]extInputRequest, asked map[string]bool) error {
	type answer struct {
		key string
		res any
		err error
	}
	out := make(chan answer, len(reqs))
	n := 0
	for key, r := range reqs {
		if asked[key] {
			continue
		}
		asked[key] = true
		n++
		go func() {
			res, err := cl.answers.answer(ctx, r.Method, r.Params)
			out <- answer{key, res, err}
		}()
	}
	if n == 0 {
		return nil
	}
	responses := make(map[string]any, n)
	for range n {
		a := <-out
		if a.err != nil {
			return fmt.Errorf("input request %q: %w", a.key, a.err)
		}
		responses[a.key] = a.res
	}
	_, err := cl.extRequest(ctx, c, mcp.MCPMethod("tasks/update"), map[string]any{"taskId": id, "inputResponses": responses})
	if err != nil {
		return fmt.Errorf("tasks/update: %w", err)
	}
	return nil
}

// extRequest sends a request of method with params on c's transport, with
// the _meta mcp-go gives its own requests on 2026-07-28 (protocol version,
// client capabilities and identity) and, for HTTP, its standard headers
// (Mcp-Name is the taskId, where params has one), and returns the result.
func (cl *caller) extRequest(ctx context.Context, c *conn, method mcp.MCPMethod, params map[string]any) (json.RawMessage, error) {
	raw, header, err := modernRequest(c, cl.env.opts, method, params)
	if err != nil {
		return nil, err
	}
	// tasks/get, tasks/update and tasks/cancel name their task, so that
	// an intermediary routes them to the instance holding it.
	if id, ok := params["taskId"].(string); ok && header != nil {
		header.Set(mcp.HeaderName, id)
	}
	return cl.raw.rawRequest(ctx, c, "acpgate-task-", string(method), raw, header)
}

// modernRequest is the params of a 2026-07-28 request of method that
// mcp-go has no call for, with the _meta mcp-go gives its own requests
// (protocol version, client capabilities, client info), and the standard
// headers of the request for HTTP (nil when there are none).
func modernRequest(c *conn, opts *Options, method mcp.MCPMethod, params map[string]any) (json.RawMessage, http.Header, error) {
	version := c.client.ProtocolVersion()
	params["_meta"] = map[string]any{
		mcp.MetaKeyProtocolVersion:    version,
		mcp.MetaKeyClientCapabilities: c.client.GetClientCapabilities(),
		mcp.MetaKeyClientInfo:         mcp.Implementation{Name: opts.ClientName, Version: opts.ClientVersion},
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, nil, err
	}
	var header http.Header
	if h := mcp.StandardHeaders(version, method, raw); len(h) > 0 {
		header = make(http.Header, len(h)+1)
		for k, v := range h {
			header.Set(k, v)
		}
	}
	return raw, header, nil
}
