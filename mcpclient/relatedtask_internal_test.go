package mcpclient

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

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

// TestProgressAfterPeekedTask: over stdio the transport's reader peeks at
// a CreateTaskResult (peekTask) before it reads on, so a progress
// notification that follows it is reported as the task's, with the
// created task's status, before the caller has followed the task; the
// caller's own report of the task then adds nothing twice. A large
// result is not peeked at.
func TestProgressAfterPeekedTask(t *testing.T) {
	t.Parallel()
	var reports []Progress
	cs := &callState{tool: "job", onProgress: func(p Progress) { reports = append(reports, p) }}
	cs.timer = time.NewTimer(time.Hour)
	cs.timeout = time.Hour
	ctx, _ := withResultSlot(context.WithValue(context.Background(), callKey{}, cs))
	created := `{"task":{"taskId":"t-1","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":60000}}`
	peekTask(ctx, &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(1), Result: json.RawMessage(created)})
	reportProgress(cs, Progress{Progress: 1, Total: 3, Message: "step 1/3"})
	(&caller{}).taskReport(cs, mcp.Task{TaskId: "t-1", Status: mcp.TaskStatusWorking})
	if len(reports) != 1 || reports[0].TaskID != "t-1" || reports[0].Status != "working" || reports[0].Progress != 1 {
		t.Fatalf("reports %+v, want one: step 1/3 of task t-1, working", reports)
	}
	// Without a report before it, the caller's report of the task is the
	// first one, and goes out.
	cs2 := &callState{tool: "job", onProgress: func(p Progress) { reports = append(reports, p) }, timer: time.NewTimer(time.Hour), timeout: time.Hour}
	ctx2, _ := withResultSlot(context.WithValue(context.Background(), callKey{}, cs2))
	peekTask(ctx2, &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(2), Result: json.RawMessage(created)})
	(&caller{}).taskReport(cs2, mcp.Task{TaskId: "t-1", Status: mcp.TaskStatusWorking})
	if len(reports) != 2 || reports[1].Status != "working" {
		t.Errorf("reports %+v, want the task's working report", reports)
	}
	big := strings.Replace(created, `"ttl":60000`, `"ttl":60000,"pad":"`+strings.Repeat("x", maxPeek)+`"`, 1)
	cs3 := &callState{tool: "job"}
	ctx3, _ := withResultSlot(context.WithValue(context.Background(), callKey{}, cs3))
	peekTask(ctx3, &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(3), Result: json.RawMessage(big)})
	if cs3.task.Load() != nil {
		t.Error("a result over maxPeek was peeked at")
	}
}
