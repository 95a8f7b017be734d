package mcpclient

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Client-side tasks (MCP 2025-11-25, experimental; the "Tasks" utility with
// acpgate as the receiver). tasks.go is the other direction: calls acpgate
// makes as tasks to servers.
//
// On a 2025-11-25 (or older) connection acpgate declares the client
// capability tasks: {list, cancel, requests: {sampling.createMessage,
// elicitation.create}}, each request type only when its handler is set (see
// taskCapability). A sampling/createMessage or elicitation/create whose
// params carry "task" is then answered at once with a CreateTaskResult
// (status "working"), and the same handler as for the plain request runs in
// the background, attributed to the call the request arrived for (its
// Origin and context values are taken when the request arrives). An
// elicitation's task is "input_required" while the user is asked; it ends
// "completed" (the handler answered), "failed" (the handler's error) or
// "cancelled" (tasks/cancel). The server follows the task with tasks/get,
// tasks/result (which waits until the task ends and returns the handler's
// result with _meta["io.modelcontextprotocol/related-task"], or its error),
// tasks/list and tasks/cancel, and is told of each change of status with
// notifications/tasks/status.
//
// The server owns its tasks: a task outlives the call that caused it. The
// bounds: a task is kept for its TTL (the one the server asks for, at most
// maxClientTaskTTL) from its creation and then forgotten (its handler, if
// still running, is cancelled); a connection holds at most
// maxClientTasks tasks (finished ones are forgotten first to make room);
// and every handler is cancelled, and waited for, when the connection
// closes (closeConn), so none outlives it. On a 2026-07-28 connection no
// task capability is declared (that revision replaced it with the
// io.modelcontextprotocol/tasks extension) and requests are answered plainly.

// Bounds of the tasks one connection's server may create.
const (
	maxClientTasks       = 64
	maxClientTaskTTL     = 10 * time.Minute
	clientTaskPollMillis = 1000 // the pollInterval suggested to the server
)

var (
	// errUnknownTask: no task of that id (never created, or forgotten).
	errUnknownTask = errors.New("unknown task")
	// errTaskEnded: the task already ended (tasks/cancel of a finished task).
	errTaskEnded = errors.New("task already ended")
	// errTooManyTasks: the connection holds maxClientTasks tasks, none finished.
	errTooManyTasks = errors.New("too many tasks")
	// errTasksClosed: the connection is closing.
	errTasksClosed = errors.New("connection closing")
	// errTaskCancelled is the error of a task cancelled by tasks/cancel.
	errTaskCancelled = fmt.Errorf("task cancelled by the server: %w", context.Canceled)
)

// clientTasks is the task table of one connection. Safe for concurrent use;
// close ends it.
type clientTasks struct {
	life   context.Context // ends with close: every handler's context ends with it
	cancel context.CancelFunc
	logger *slog.Logger
	now    func() time.Time
	wg     sync.WaitGroup // the running handlers

	// send sends a notification to the server (set before the connection
	// starts; nil: none is sent). sendMu keeps status notifications in the
	// order of the changes they report.
	send   func(context.Context, mcp.JSONRPCNotification) error
	sendMu sync.Mutex

	mu     sync.Mutex
	tasks  map[string]*clientTask
	closed bool
}

// clientTask is one task. task, res and err are guarded by the table's mu;
// done is closed when the task reaches a terminal status.
type clientTask struct {
	task    mcp.Task
	expires time.Time
	cancel  context.CancelFunc // cancels the handler
	done    chan struct{}      // closed when it ends (terminal status)
	expired chan struct{}      // closed when sweep forgets it
	res     any                // the handler's result (completed)
	err     error              // the handler's error (failed), or errTaskCancelled
}

// newClientTasks returns the task table of a connection that lives at most
// as long as life.
func newClientTasks(life context.Context, logger *slog.Logger) *clientTasks {
	ctx, cancel := context.WithCancel(life)
	return &clientTasks{life: ctx, cancel: cancel, logger: logger, now: time.Now, tasks: map[string]*clientTask{}}
}

// close cancels every running handler and waits until all have returned;
// tasks created afterwards are refused.
func (ct *clientTasks) close() {
	ct.mu.Lock()
	ct.closed = true
	ct.mu.Unlock()
	ct.cancel()
	ct.wg.Wait()
}

// taskRunner runs a task's handler: ctx ends when the task is cancelled,
// expires or the connection closes; status reports a change of status
// (input_required, working) while it runs.
type taskRunner func(ctx context.Context, status func(mcp.TaskStatus, string)) (any, error)

// create creates a task with the TTL the server asked for (ms; nil or ≤ 0:
// the maximum) and runs run in the background with a context carrying the
// values of vals. It returns the task as created (status working).
func (ct *clientTasks) create(vals context.Context, ttlMs *int64, run taskRunner) (mcp.Task, error) {
	ttl := maxClientTaskTTL
	if ttlMs != nil && *ttlMs > 0 {
		ttl = min(ttl, time.Duration(*ttlMs)*time.Millisecond)
	}
	now := ct.now()
	ct.mu.Lock()
	defer ct.mu.Unlock()
	if ct.closed {
		return mcp.Task{}, errTasksClosed
	}
	ct.sweep(now)
	if len(ct.tasks) >= maxClientTasks && !ct.evictEnded() {
		return mcp.Task{}, fmt.Errorf("%w: %d tasks are running on this connection", errTooManyTasks, maxClientTasks)
	}
	stamp := now.UTC().Format(time.RFC3339Nano)
	t := &clientTask{
		task: mcp.Task{
			TaskId: uuid.NewString(), Status: mcp.TaskStatusWorking, CreatedAt: stamp, LastUpdatedAt: stamp,
			TTL: ptr(ttl.Milliseconds()), PollInterval: ptr(int64(clientTaskPollMillis)),
		},
		expires: now.Add(ttl),
		done:    make(chan struct{}),
		expired: make(chan struct{}),
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(vals), ttl)
	stop := context.AfterFunc(ct.life, cancel)
	t.cancel = func() { stop(); cancel() }
	ct.tasks[t.task.TaskId] = t
	id := t.task.TaskId
	ct.wg.Add(1) // under mu with closed false: never concurrent with close's Wait
	go func() {
		defer ct.wg.Done()
		defer t.cancel()
		res, err := run(ctx, func(s mcp.TaskStatus, msg string) { ct.setStatus(id, s, msg, nil, nil) })
		status := mcp.TaskStatusCompleted
		msg := ""
		if err != nil {
			status, msg = mcp.TaskStatusFailed, err.Error()
		}
		ct.setStatus(id, status, msg, res, err)
	}()
	return t.task, nil
}

func ptr[T any](v T) *T { return &v }

// sweep forgets the tasks whose TTL has passed (cancelling their handlers).
// Called with mu held.
func (ct *clientTasks) sweep(now time.Time) {
	for id, t := range ct.tasks {
		if !now.Before(t.expires) {
			t.cancel()
			delete(ct.tasks, id)
			close(t.expired) // a tasks/result waiting for it ends
		}
	}
}

// evictEnded forgets the finished task created first and reports whether
// there was one. Called with mu held.
func (ct *clientTasks) evictEnded() bool {
	var oldest *clientTask
	for _, t := range ct.tasks {
		if t.task.Status.IsTerminal() && (oldest == nil || t.expires.Before(oldest.expires)) {
			oldest = t
		}
	}
	if oldest == nil {
		return false
	}
	delete(ct.tasks, oldest.task.TaskId)
	return true
}

// lookup returns the task id, or an error wrapping errUnknownTask. Called
// with mu held.
func (ct *clientTasks) lookup(id string) (*clientTask, error) {
	ct.sweep(ct.now())
	t, ok := ct.tasks[id]
	if !ok {
		return nil, fmt.Errorf("%w %q", errUnknownTask, id)
	}
	return t, nil
}

// setStatus moves task id to status with msg, unless it has ended; a
// terminal status records res and err and wakes tasks/result. The server
// is told (notifications/tasks/status). It reports whether the status
// changed.
func (ct *clientTasks) setStatus(id string, status mcp.TaskStatus, msg string, res any, err error) bool {
	ct.sendMu.Lock()
	defer ct.sendMu.Unlock()
	ct.mu.Lock()
	t, ok := ct.tasks[id]
	if !ok || t.task.Status.IsTerminal() || (t.task.Status == status && t.task.StatusMessage == msg) {
		ct.mu.Unlock()
		return false
	}
	t.task.Status, t.task.StatusMessage = status, msg
	t.task.LastUpdatedAt = ct.now().UTC().Format(time.RFC3339Nano)
	if status.IsTerminal() {
		t.res, t.err = res, err
	}
	snap := t.task
	ct.mu.Unlock()
	ct.notify(snap)
	if status.IsTerminal() {
		close(t.done) // once: only the first terminal status gets here; after its notification
	}
	return true
}

// notify sends notifications/tasks/status for task: best effort, bounded
// by the connection and five seconds. Called with sendMu held.
func (ct *clientTasks) notify(task mcp.Task) {
	if ct.send == nil || ct.life.Err() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ct.life, 5*time.Second)
	defer cancel()
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: mcp.MethodNotificationTasksStatus,
		Params: mcp.NotificationParams{AdditionalFields: taskFields(task)},
	}}
	if err := ct.send(ctx, n); err != nil {
		ct.logger.Debug("notifications/tasks/status not sent", "task", task.TaskId, "err", err)
	}
}

// taskFields is task as notification params.
func taskFields(task mcp.Task) map[string]any {
	var m map[string]any
	b, _ := json.Marshal(task)
	_ = json.Unmarshal(b, &m)
	return m
}

// get returns task id.
func (ct *clientTasks) get(id string) (mcp.Task, error) {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	t, err := ct.lookup(id)
	if err != nil {
		return mcp.Task{}, err
	}
	return t.task, nil
}

// list returns the tasks, oldest first.
func (ct *clientTasks) list() []mcp.Task {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	ct.sweep(ct.now())
	out := make([]mcp.Task, 0, len(ct.tasks))
	for _, t := range ct.tasks {
		out = append(out, t.task)
	}
	slices.SortFunc(out, func(a, b mcp.Task) int {
		return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), cmp.Compare(a.TaskId, b.TaskId))
	})
	return out
}

// cancelTask cancels task id: its status becomes cancelled and its handler's
// context ends. A task that has ended already is an error wrapping
// errTaskEnded.
func (ct *clientTasks) cancelTask(id string) (mcp.Task, error) {
	ct.mu.Lock()
	t, err := ct.lookup(id)
	if err == nil && t.task.Status.IsTerminal() {
		err = fmt.Errorf("%w: task %q is %s", errTaskEnded, id, t.task.Status)
	}
	ct.mu.Unlock()
	if err != nil {
		return mcp.Task{}, err
	}
	if !ct.setStatus(id, mcp.TaskStatusCancelled, "cancelled by the server", nil, errTaskCancelled) {
		// It ended (or was forgotten) meanwhile.
		if cur, err := ct.get(id); err != nil || cur.Status != mcp.TaskStatusCancelled {
			return mcp.Task{}, cmp.Or(err, fmt.Errorf("%w: task %q is %s", errTaskEnded, id, cur.Status))
		}
	}
	t.cancel()
	return ct.get(id)
}

// result waits until task id ends (or ctx or the connection does) and
// returns its result with the related-task _meta, or its error.
func (ct *clientTasks) result(ctx context.Context, id string) (json.RawMessage, error) {
	ct.mu.Lock()
	t, err := ct.lookup(id)
	ct.mu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case <-t.done:
	case <-t.expired:
		return nil, fmt.Errorf("%w %q (its TTL passed before it ended)", errUnknownTask, id)
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-ct.life.Done():
		return nil, errTasksClosed
	}
	ct.mu.Lock()
	res, rerr := t.res, t.err
	ct.mu.Unlock()
	if rerr != nil {
		return nil, rerr
	}
	return withRelatedTask(res, id)
}

// withRelatedTask is res as JSON with _meta["io.modelcontextprotocol/related-task"]
// naming task id (other _meta entries kept).
func withRelatedTask(res any, id string) (json.RawMessage, error) {
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil || fields == nil {
		fields = map[string]json.RawMessage{}
	}
	meta := map[string]any{}
	if raw, ok := fields["_meta"]; ok {
		_ = json.Unmarshal(raw, &meta)
	}
	meta[mcp.RelatedTaskMetaKey] = map[string]any{"taskId": id}
	if fields["_meta"], err = json.Marshal(meta); err != nil {
		return nil, err
	}
	return json.Marshal(fields)
}

// serve answers the server's tasks/get, tasks/result, tasks/list and
// tasks/cancel; ok is false for any other method.
func (ct *clientTasks) serve(ctx context.Context, method string, params any) (res any, ok bool, err error) {
	var p struct {
		TaskID string `json:"taskId"`
	}
	if method != string(mcp.MethodTasksList) {
		if b, merr := json.Marshal(params); merr == nil {
			_ = json.Unmarshal(b, &p)
		}
	}
	switch mcp.MCPMethod(method) {
	case mcp.MethodTasksGet:
		t, err := ct.get(p.TaskID)
		return mcp.NewGetTaskResult(t), true, err
	case mcp.MethodTasksResult:
		r, err := ct.result(ctx, p.TaskID)
		return r, true, err
	case mcp.MethodTasksList:
		return mcp.NewListTasksResult(ct.list()), true, nil
	case mcp.MethodTasksCancel:
		t, err := ct.cancelTask(p.TaskID)
		return mcp.NewCancelTaskResult(t), true, err
	}
	return nil, false, nil
}

// initEdit edits an initialize request before it is sent.
type initEdit func(*transport.JSONRPCRequest)

// serveTask answers the server's task requests on a connection with task
// table ct: tasks/*, and a task-augmented sampling/createMessage or
// elicitation/create (with a handler set). ok is false for any other
// request, which then goes the usual way (serveRequest).
func (an *answerer) serveTask(ctx context.Context, ct *clientTasks, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, bool) {
	if res, ok, err := ct.serve(ctx, req.Method, req.Params); ok {
		return reply(req.ID, res, taskRequestErr(err)), true
	}
	if req.Method != string(mcp.MethodSamplingCreateMessage) && req.Method != string(mcp.MethodElicitationCreate) {
		return nil, false
	}
	handle := an.requestHandler(req.Method)
	raw, err := json.Marshal(req.Params)
	if handle == nil || err != nil {
		return nil, false
	}
	var p struct {
		Task *mcp.TaskParams `json:"task"`
	}
	if json.Unmarshal(raw, &p) != nil || p.Task == nil {
		return nil, false
	}
	rctx, origin, done := an.requestContext(ctx, raw)
	vals := context.WithoutCancel(rctx) // the call's values; the task outlives the call
	done()
	elicit := req.Method == string(mcp.MethodElicitationCreate)
	task, err := ct.create(vals, p.Task.TTL, func(ctx context.Context, status func(mcp.TaskStatus, string)) (any, error) {
		if elicit {
			status(mcp.TaskStatusInputRequired, "waiting for the user")
		}
		res, err := handle(ctx, origin, raw)
		if err != nil {
			an.env.logger.Debug("server request refused", "method", req.Method, "err", err)
		}
		return res, err
	})
	if err != nil {
		return reply(req.ID, nil, err), true
	}
	an.env.logger.Debug("server request runs as a task", "method", req.Method, "tool", origin.Tool, "task", task.TaskId)
	return reply(req.ID, mcp.NewCreateTaskResult(task), nil), true
}

// taskRequestErr is err as the server is to see it: an unknown task or a
// cancel of a finished one are invalid params (-32602).
func taskRequestErr(err error) error {
	if errors.Is(err, errUnknownTask) || errors.Is(err, errTaskEnded) {
		return &RequestError{Code: mcp.INVALID_PARAMS, Message: err.Error()}
	}
	return err
}

// reply is the response to request id: res, or err (see errorResponse).
func reply(id mcp.RequestId, res any, err error) *transport.JSONRPCResponse {
	if err != nil {
		return errorResponse(id, err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return errorResponse(id, err)
	}
	return transport.NewJSONRPCResultResponse(id, b)
}
