package plan_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/plan"
)

// TestParse: a whole plan is accepted (content trimmed), an empty one
// clears it, and anything else is refused naming what is wrong.
func TestParse(t *testing.T) {
	t.Parallel()
	got, err := plan.Parse(json.RawMessage(`{"entries":[{"content":" Read the code ","priority":"high","status":"completed"},{"content":"Fix it","priority":"low","status":"in_progress"}]}`))
	if err != nil || len(got) != 2 || got[0] != (plan.Entry{Content: "Read the code", Priority: plan.High, Status: plan.Completed}) {
		t.Fatalf("%+v %v", got, err)
	}
	if got, err := plan.Parse(json.RawMessage(`{"entries":[]}`)); err != nil || got == nil || len(got) != 0 {
		t.Errorf("empty plan: %+v %v", got, err)
	}
	for _, tc := range []struct{ args, want string }{
		{`{}`, "entries is missing"},
		{`{"entries":null}`, "entries is missing"},
		{`[]`, "the arguments must be"},
		{`{"entries":[],"extra":1}`, `unknown field "extra"`},
		{`{"entries":[{"content":"","priority":"high","status":"pending"}]}`, "entries[0].content is empty"},
		{`{"entries":[{"content":"` + strings.Repeat("x", plan.MaxContentBytes+1) + `","priority":"high","status":"pending"}]}`, "entries[0].content must be UTF-8 text of at most 1000 bytes"},
		{`{"entries":[{"content":"a","priority":"high","status":"pending"},{"content":"b","priority":"urgent","status":"pending"}]}`, `entries[1].priority must be high, medium or low, not "urgent"`},
		{`{"entries":[{"content":"a","priority":"low","status":"done"}]}`, `entries[0].status must be pending, in_progress or completed, not "done"`},
		{`{"entries":[{"content":"a","priority":"low"}]}`, `entries[0].status must be`},
		{`{"entries":[` + strings.Repeat(`{"content":"a","priority":"low","status":"pending"},`, plan.MaxEntries) + `{"content":"a","priority":"low","status":"pending"}]}`, "101 entries; a plan has at most 100"},
	} {
		_, err := plan.Parse(json.RawMessage(tc.args))
		if !errors.Is(err, plan.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.60s: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestTool: the tool needs no approval, tells the model what it did and
// carries the plan for the session (Entries); a failed call carries none.
func TestTool(t *testing.T) {
	t.Parallel()
	tool := plan.Tool()
	if tool.Name != plan.ToolName || tool.AskApproval || tool.AskInAuto || !json.Valid(tool.InputSchema) {
		t.Fatalf("%+v", tool)
	}
	res, err := tool.Execute(context.Background(), json.RawMessage(`{"entries":[{"content":"a","priority":"high","status":"completed"},{"content":"b","priority":"medium","status":"pending"}]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.ModelText(); got != "Plan updated: 2 steps (1 completed, 0 in progress, 1 pending). The user sees it." {
		t.Errorf("model text %q", got)
	}
	if got, ok := plan.Entries(res); !ok || len(got) != 2 || got[1].Content != "b" {
		t.Errorf("entries %+v %v", got, ok)
	}
	cleared, _ := tool.Execute(context.Background(), json.RawMessage(`{"entries":[]}`), nil)
	if got, ok := plan.Entries(cleared); !ok || len(got) != 0 || cleared.ModelText() != "Plan cleared." {
		t.Errorf("cleared: %+v %v %q", got, ok, cleared.ModelText())
	}
	if _, err := tool.Execute(context.Background(), json.RawMessage(`{}`), nil); !errors.Is(err, plan.ErrInvalid) {
		t.Errorf("bad plan: %v", err)
	}
	if _, ok := plan.Entries(gateway.TextResult("x")); ok {
		t.Error("entries in another tool's result")
	}
}
