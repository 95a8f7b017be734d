package mcpclient

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// relatedTask returns the task id a server request's params name in
// _meta (mcp.RelatedTaskMetaKey: the request belongs to that task), or "".
func relatedTask(params json.RawMessage) string {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	var rt struct {
		TaskID string `json:"taskId"`
	}
	if json.Unmarshal(p.Meta[mcp.RelatedTaskMetaKey], &rt) != nil {
		return ""
	}
	return rt.TaskID
}

// taskCall returns the running call that follows the task a server
// request's params name (see relatedTask), or nil.
func (cl *caller) taskCall(params json.RawMessage) *callState {
	id := relatedTask(params)
	if id == "" {
		return nil
	}
	var found *callState
	cl.calls.Range(func(_, v any) bool {
		cs := v.(*callState)
		if ts := cs.task.Load(); ts != nil && ts.id == id {
			found = cs
			return false
		}
		return true
	})
	return found
}

// recordTask gives the call of ctx (if any) the task just taken into slot,
// as soon as the transport has it: a server request that names the task
// and arrives before the call follows it is attributed to the call too.
func recordTask(ctx context.Context, slot *resultSlot) {
	cs, ok := ctx.Value(callKey{}).(*callState)
	if !ok {
		return
	}
	ts := &taskState{}
	switch {
	case slot.task != nil:
		ts.id, ts.p.Status, ts.p.StatusMessage = slot.task.TaskId, string(slot.task.Status), slot.task.StatusMessage
	case slot.ext != nil:
		ts.id, ts.p.Status, ts.p.StatusMessage = slot.ext.TaskID, string(slot.ext.Status), slot.ext.StatusMessage
	}
	if ts.id != "" {
		// The created task's status: a progress report that comes before
		// the call reports the task (taskReport) already says it.
		ts.p.TaskID = ts.id
		cs.task.CompareAndSwap(nil, ts)
	}
}

// maxPeek bounds the results peekTask looks into: a CreateTaskResult is a
// few hundred bytes; a larger result is a tool's, decoded by its caller.
const maxPeek = 16 << 10

// peekTask is the stdio transport's Peek (on its reader goroutine): a
// tools/call answered with a created task gives the call that task at
// once, so the progress and status notifications the server sends next,
// handled on the same goroutine, are the task's. Over stdio they would
// otherwise be handled before the caller's goroutine has seen the
// response (recordTask, there, is later).
func peekTask(ctx context.Context, resp *transport.JSONRPCResponse) {
	slot, _ := ctx.Value(resultSlotKey{}).(*resultSlot)
	if slot == nil || resp.Error != nil || len(resp.Result) > maxPeek {
		return
	}
	if takeTask(slot, resp.Result) || takeExtTask(slot, resp.Result) {
		recordTask(ctx, slot)
	}
}

// adoptTask returns the call's taskState for task id: the one recordTask
// made, else a new one, which the call then has.
func (cs *callState) adoptTask(id string) *taskState {
	if ts := cs.task.Load(); ts != nil && ts.id == id {
		return ts
	}
	ts := &taskState{id: id}
	cs.task.Store(ts)
	return ts
}
