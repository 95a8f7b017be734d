package mcpclient

import (
	"context"
	"encoding/json"

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
	id := ""
	switch {
	case slot.task != nil:
		id = slot.task.TaskId
	case slot.ext != nil:
		id = slot.ext.TaskID
	}
	if id != "" {
		cs.task.CompareAndSwap(nil, &taskState{id: id})
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
