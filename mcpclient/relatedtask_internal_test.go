package mcpclient

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// The task a tools/call creates belongs to the call as soon as the
// transport takes its CreateTaskResult, before the call follows it: a
// server request naming the task in that window is the call's; following
// it keeps the same task state. Both revisions' task results.
func TestTaskRecordedOnArrival(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, result string }{
		{"2025-11-25", `{"task":{"taskId":"t-1","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":60000}}`},
		{"2026-07-28", `{"resultType":"task","taskId":"t-1","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttlMs":60000}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &server{}
			s.caller = &caller{}
			cs := &callState{tool: "job"}
			s.caller.calls.Store("token", cs)
			ctx, slot := withResultSlot(context.WithValue(context.Background(), callKey{}, cs))
			resp := &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(1), Result: json.RawMessage(tc.result)}
			takeCallResult(ctx, resp, false)
			if slot.task == nil && slot.ext == nil {
				t.Fatal("the task was not taken")
			}
			params := json.RawMessage(`{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t-1"}}}`)
			if got := s.caller.taskCall(params); got != cs {
				t.Fatalf("a request naming the task went to %v, want the call", got)
			}
			ts := cs.task.Load()
			if cs.adoptTask("t-1") != ts {
				t.Error("following the task made a second task state")
			}
		})
	}
}
