package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// Tasks (MCP 2025-11-25, experimental; SEP-1686). A tool whose definition
// says it supports tasks (execution.taskSupport "optional" or "required"),
// on a server that declares tasks.requests.tools.call, is called as a task:
// the tools/call carries a "task" parameter, the server answers at once with
// a CreateTaskResult, and the call then
//
//   - waits for the result with tasks/result (which the server holds open
//     until the task ends; server requests that belong to the task, such
//     as an elicitation, arrive meanwhile and are attributed to the call),
//   - polls tasks/get (at the server's pollInterval, within
//     [minPoll, maxPoll]) and reads notifications/tasks/status, reporting
//     each change of status or status message as a Progress,
//   - on cancellation of its context sends tasks/cancel (off the caller's
//     path, bounded like cancellation notices),
//   - when the call timeout passes with no change of status and no
//     progress notification, stops waiting without cancelling the task: the
//     server keeps running it until its TTL, and the call fails with a
//     *TaskRunningError (wrapping ErrTaskRunning and ErrCallTimeout) that
//     names the task.
//
// mcp-go v1.2.1 offers the requests (GetTask, TaskResult, CancelTask) but
// its CallTool cannot return a CreateTaskResult (it wants content): the
// transport wrapper takes the task into the call's resultSlot instead (see
// takeTask) and hands mcp-go a stand-in. On 2026-07-28 connections tasks
// are those of the io.modelcontextprotocol/tasks extension (SEP-2663:
// resultType "task", tasks/update, no tasks/result), which mcp-go's client
// does not implement: see exttasks.go.
//
// The client "tasks" capability (the server making *its* requests,
// sampling and elicitation, task-augmented) is the other direction: see
// clienttasks.go.

// ErrTaskRunning: acpgate stopped waiting for a task that is still running
// on the server (see TaskRunningError).
var ErrTaskRunning = errors.New("MCP task still running")

// TaskRunningError is the error of a call whose task outlived the call
// timeout: the task keeps running on the server (until its TTL), acpgate
// no longer waits for it. It wraps ErrTaskRunning and ErrCallTimeout.
type TaskRunningError struct {
	Server, Tool string
	TaskID       string
	Status       string // the task's last known status, e.g. "working"
	Message      string // its last status message, if any
	Waited       time.Duration
}

// Error implements error.
func (e *TaskRunningError) Error() string {
	msg := fmt.Sprintf("MCP server %q: tool %s is still running as task %s (%s", e.Server, e.Tool, e.TaskID, e.Status)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg + fmt.Sprintf("); acpgate stopped waiting after %s without news from it; the server keeps running it, but its result will not be fetched", e.Waited)
}

// Unwrap returns ErrTaskRunning and ErrCallTimeout.
func (e *TaskRunningError) Unwrap() []error { return []error{ErrTaskRunning, ErrCallTimeout} }

// Bounds of the tasks/get polling interval.
const (
	minPoll     = 200 * time.Millisecond
	maxPoll     = 5 * time.Second
	defaultPoll = time.Second
)

// taskState is what a call knows of its task. The poller and the
// transport's reader goroutine both report: a report is a snapshot of p
// numbered under mu, and is delivered (the call's onProgress) after mu is
// released, one at a time and in number order (see deliver).
type taskState struct {
	id  string
	mu  sync.Mutex
	p   Progress // the last report: status, status message, progress
	seq uint64   // the number of the last snapshot of p

	deliverMu sync.Mutex // held while a report is delivered
	delivered uint64     // the number of the last report delivered; under deliverMu
}

// snapshot returns p and numbers it. Called with ts.mu held.
func (ts *taskState) snapshot() (Progress, uint64) {
	ts.seq++
	return ts.p, ts.seq
}

// deliver calls fn with the report p numbered seq, unless a later report
// has been delivered already: a report overtaken between its snapshot and
// its delivery is dropped, so the last report delivered is always the
// newest. Deliveries never overlap; ts.mu is not held during fn.
func (ts *taskState) deliver(seq uint64, p Progress, fn func(Progress)) {
	ts.deliverMu.Lock()
	defer ts.deliverMu.Unlock()
	if seq <= ts.delivered {
		return
	}
	ts.delivered = seq
	fn(p)
}

// taskTTL is the retention asked for a task: long enough to outlive the
// call timeout, so a task acpgate stopped waiting for can still finish.
func taskTTL(callTimeout time.Duration) *int64 {
	ms := max(10*time.Minute, 2*callTimeout).Milliseconds()
	return &ms
}

// asTask returns the task parameter for a tools/call of tool on c, or nil
// when it is called plainly: the tool must support tasks and the server
// declare task-augmented tools/call, on a 2025-11-25 connection.
func (cl *caller) asTask(c *conn, tool string) *mcp.TaskParams {
	if c.init == nil || mcp.IsModernProtocol(c.init.ProtocolVersion) {
		return nil
	}
	tc := c.init.Capabilities.Tasks
	if tc == nil || tc.Requests == nil || tc.Requests.Tools == nil || tc.Requests.Tools.Call == nil {
		return nil
	}
	if !cl.tools.anyTool(tool, func(t mcp.Tool) bool {
		return t.Execution != nil && (t.Execution.TaskSupport == mcp.TaskSupportOptional || t.Execution.TaskSupport == mcp.TaskSupportRequired)
	}) {
		return nil
	}
	p := mcp.NewTaskParams(taskTTL(cl.env.spec.CallTimeout))
	return &p
}

// takeTask takes a CreateTaskResult (a result with a "task" object and no
// content) into slot and reports whether it did.
func takeTask(slot *resultSlot, raw json.RawMessage) bool {
	var r struct {
		Task    *mcp.Task       `json:"task"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &r) != nil || r.Task == nil || r.Task.TaskId == "" || r.Content != nil {
		return false
	}
	slot.task = r.Task
	return true
}

// followTask waits for the task the tools/call on callCtx created (see the
// comment at the top of this file). ctx is the caller's context.
func (cl *caller) followTask(ctx, callCtx context.Context, c *conn, cs *callState, task mcp.Task, slot *resultSlot) (*mcp.CallToolResult, error) {
	ts := cs.adoptTask(task.TaskId)
	cl.env.logger.Debug("tool runs as a task", "tool", cs.tool, "task", task.TaskId)
	cl.taskReport(cs, task)

	done := make(chan error, 1)
	go func() {
		req := mcp.TaskResultRequest{}
		req.Params.TaskId = task.TaskId
		r, err := c.client.TaskResult(callCtx, req)
		if err == nil && slot.res == nil {
			slot.res = &mcp.CallToolResult{Result: r.Result, Content: r.Content, StructuredContent: r.StructuredContent, IsError: r.IsError}
		}
		done <- err
	}()

	interval := pollInterval(task.PollInterval)
	poll := time.NewTimer(interval)
	defer poll.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return nil, cl.taskErr(ctx, callCtx, c, cs, ts, err)
			}
			return slot.res, nil
		case <-callCtx.Done():
			err := <-done
			if err == nil {
				return slot.res, nil // it came as the wait ended
			}
			return nil, cl.taskErr(ctx, callCtx, c, cs, ts, err)
		case <-poll.C:
			req := mcp.GetTaskRequest{}
			req.Params.TaskId = task.TaskId
			if g, err := c.client.GetTask(callCtx, req); err == nil {
				cl.taskReport(cs, g.Task)
				interval = pollInterval(g.PollInterval)
			} else if callCtx.Err() == nil {
				cl.env.logger.Debug("tasks/get failed", "task", task.TaskId, "err", err)
			}
			poll.Reset(interval)
		}
	}
}

// taskErr is the error of a task call that ended without a result: the
// caller's cancellation (the task is cancelled too), the call timeout (the
// task keeps running: TaskRunningError), or err, the failure of its
// tasks/result.
func (cl *caller) taskErr(ctx, callCtx context.Context, c *conn, cs *callState, ts *taskState, err error) error {
	switch {
	case ctx.Err() != nil:
		cl.cancelTask(c, ts.id)
	case errors.Is(context.Cause(callCtx), errTimeout):
		ts.mu.Lock()
		defer ts.mu.Unlock()
		return &TaskRunningError{Server: cl.env.spec.Name, Tool: cs.tool, TaskID: ts.id, Status: ts.p.Status, Message: ts.p.StatusMessage, Waited: cs.timeout}
	}
	return cl.callErr(ctx, callCtx, c, "tools/call "+cs.tool+" (task "+ts.id+")", err)
}

// cancelTask sends tasks/cancel for id, off the caller's path and bounded
// like a cancellation notice.
func (cl *caller) cancelTask(c *conn, id string) {
	c.notes.Send(func(ctx context.Context) {
		var err error
		if c.modern() {
			// The Tasks extension's tasks/cancel (with its Mcp-Name header).
			_, err = cl.extRequest(ctx, c, mcp.MethodTasksCancel, map[string]any{"taskId": id})
		} else {
			req := mcp.CancelTaskRequest{}
			req.Params.TaskId = id
			_, err = c.client.CancelTask(ctx, req)
		}
		if err != nil {
			cl.env.logger.Debug("tasks/cancel failed", "task", id, "err", err)
		}
	})
}

// pollInterval is the server's suggested interval (ms), within bounds.
func pollInterval(ms *int64) time.Duration {
	if ms == nil || *ms <= 0 {
		return defaultPoll
	}
	return min(max(time.Duration(*ms)*time.Millisecond, minPoll), maxPoll)
}

// taskReport records the task's state t for the call cs; a change of
// status or status message restarts the call timeout and is reported.
func (cl *caller) taskReport(cs *callState, t mcp.Task) {
	ts := cs.task.Load()
	if ts == nil || t.TaskId != ts.id {
		return
	}
	ts.mu.Lock()
	if ts.seq > 0 && ts.p.Status == string(t.Status) && ts.p.StatusMessage == t.StatusMessage {
		// Reported already (the first report always goes out: the status
		// recordTask set has not been delivered until a snapshot is).
		ts.mu.Unlock()
		return
	}
	ts.p.TaskID, ts.p.Status, ts.p.StatusMessage = ts.id, string(t.Status), t.StatusMessage
	p, seq := ts.snapshot()
	ts.mu.Unlock()
	cs.timer.Reset(cs.timeout)
	if cs.onProgress != nil {
		ts.deliver(seq, p, cs.onProgress)
	}
}

// reportProgress reports the progress notification p of cs to its
// onProgress (which must be set): as it is for a plain call, merged into
// the task's state and in order with the task's other reports for a call
// that runs as a task.
func reportProgress(cs *callState, p Progress) {
	ts := cs.task.Load()
	if ts == nil {
		cs.onProgress(p)
		return
	}
	ts.mu.Lock()
	ts.p.Progress, ts.p.Total, ts.p.Message = p.Progress, p.Total, p.Message
	p, seq := ts.snapshot()
	ts.mu.Unlock()
	ts.deliver(seq, p, cs.onProgress)
}

// taskStatus handles a notifications/tasks/status (on the transport's
// reader goroutine): the call following that task reports it.
func (cl *caller) taskStatus(params map[string]any) {
	raw, err := json.Marshal(params)
	if err != nil {
		return
	}
	var t mcp.Task
	if json.Unmarshal(raw, &t) != nil || t.TaskId == "" {
		return
	}
	cl.calls.Range(func(_, v any) bool {
		cs := v.(*callState)
		if ts := cs.task.Load(); ts != nil && ts.id == t.TaskId {
			cl.taskReport(cs, t)
			return false
		}
		return true
	})
}
