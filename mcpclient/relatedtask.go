package mcpclient

import (
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
func (s *server) taskCall(params json.RawMessage) *callState {
	id := relatedTask(params)
	if id == "" {
		return nil
	}
	var found *callState
	s.calls.Range(func(_, v any) bool {
		cs := v.(*callState)
		if ts := cs.task.Load(); ts != nil && ts.id == id {
			found = cs
			return false
		}
		return true
	})
	return found
}
