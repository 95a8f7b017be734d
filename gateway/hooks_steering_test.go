package gateway_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/openaicompat"
	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

// fakeHooks decides calls by name: deny "blocked", rewrite "rewritten",
// ask for "asked"; AfterCall adds a note to every result.
type fakeHooks struct{}

func (fakeHooks) BeforeCall(_ context.Context, call gateway.CallInfo) gateway.CallCheck {
	switch call.Name {
	case "blocked":
		return gateway.CallCheck{Decision: gateway.HookDeny, Reason: "blocked by policy"}
	case "rewritten":
		return gateway.CallCheck{Decision: gateway.HookAllow, Input: json.RawMessage(`{"v":"new"}`), Context: []string{"pre note"}}
	case "asked":
		return gateway.CallCheck{Decision: gateway.HookAsk}
	}
	return gateway.CallCheck{}
}

func (fakeHooks) AfterCall(_ context.Context, call gateway.CallInfo, res gateway.Result) gateway.Result {
	return res.WithModelText("after " + call.Name)
}

// TestRunCallHooks: a denied call does not run and the model gets the
// reason; a rewritten one runs with the new input, without the approver
// (allowed); "ask" reaches the approver with MustAsk; AfterCall's text is
// added for the model.
func TestRunCallHooks(t *testing.T) {
	srv := fakellm.Start(
		fakellm.Turn{ToolCalls: []fakellm.ToolCall{{ID: "b", Name: "blocked", Arguments: `{}`}, {ID: "r", Name: "rewritten", Arguments: `{"v":"old"}`}, {ID: "a", Name: "asked", Arguments: `{}`}}},
		fakellm.Turn{Text: "done"},
	)
	defer srv.Close()
	var mu sync.Mutex
	ran := map[string]string{}
	mk := func(name string) gateway.Tool {
		tl := namedTool(name)
		tl.Execute = func(_ context.Context, args json.RawMessage, _ func(gateway.Progress)) (gateway.Result, error) {
			mu.Lock()
			ran[name] = string(args)
			mu.Unlock()
			return gateway.TextResult(name + " ran"), nil
		}
		return tl
	}
	acc := tools(mk("blocked"), mk("rewritten"), mk("asked"))
	acc.Hooks = fakeHooks{}
	approved := map[string]bool{}
	acc.Approver = func(ctx context.Context, call gateway.CallInfo, _ gateway.Tool) (gateway.Decision, error) {
		approved[call.Name] = gateway.MustAsk(ctx)
		return gateway.Allow, nil
	}
	if _, err := gateway.NewRunner(gateway.RunnerOptions{}).Run(context.Background(), gateway.RunOptions{Model: srv.Provider(t, openaicompat.Config{}), Input: userInput("go"), ToolAccess: acc}); err != nil {
		t.Fatal(err)
	}
	if _, ok := ran["blocked"]; ok || ran["rewritten"] != `{"v":"new"}` || ran["asked"] != `{}` {
		t.Errorf("ran %v", ran)
	}
	if len(approved) != 1 || !approved["asked"] {
		t.Errorf("approver asked about %v (want only asked, with MustAsk)", approved)
	}
	got := map[string]string{}
	for _, m := range srv.Requests()[1].Messages {
		if m.Role == "tool" {
			got[m.ToolCallID] = m.Content
		}
	}
	if got["b"] != "blocked by policy" || got["r"] != "rewritten ran\npre note\nafter rewritten" || !strings.HasSuffix(got["a"], "after asked") {
		t.Errorf("tool messages %q", got)
	}
}

// steerBox hands out prompts once at the first Take, and counts the
// Takes that were the last.
type steerBox struct {
	mu       sync.Mutex
	prompts  [][]gateway.Content
	lastSeen int
}

func (b *steerBox) Take(last bool) [][]gateway.Content {
	b.mu.Lock()
	defer b.mu.Unlock()
	if last {
		b.lastSeen++
	}
	out := b.prompts
	b.prompts = nil
	return out
}

// TestRunSteering: a steered prompt taken after a step's tool results is
// the next request's last message; one taken when the model ends its turn
// makes the turn go on with another request.
func TestRunSteering(t *testing.T) {
	srv := fakellm.Start(
		fakellm.Turn{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "echo", Arguments: `{}`}}},
		fakellm.Turn{Text: "answered"},
		fakellm.Turn{Text: "and the late one"},
	)
	defer srv.Close()
	box := &steerBox{prompts: [][]gateway.Content{userInput("steered")}}
	echo := namedTool("echo")
	echo.Execute = func(context.Context, json.RawMessage, func(gateway.Progress)) (gateway.Result, error) {
		return gateway.TextResult("echoed"), nil
	}
	var ev events
	first := true
	acc := tools(echo)
	res, err := gateway.NewRunner(gateway.RunnerOptions{}).Run(context.Background(), gateway.RunOptions{Model: srv.Provider(t, openaicompat.Config{}), Input: userInput("go"), ToolAccess: acc, Sink: func(e gateway.Event) {
		ev.sink(e)
		// After the first answer, one more prompt arrives: it is taken at
		// the turn's last point.
		if e.Kind == gateway.EventText && first {
			first = false
			box.mu.Lock()
			box.prompts = [][]gateway.Content{userInput("late")}
			box.mu.Unlock()
		}
	}, Steering: box})
	if err != nil || res.Stop != gateway.StopEndTurn {
		t.Fatalf("stop %s, %v", res.Stop, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	m1 := reqs[1].Messages
	if m1[len(m1)-1].Role != "user" || m1[len(m1)-1].Content != "steered" || m1[len(m1)-2].Role != "tool" {
		t.Errorf("second request ends %+v", m1[len(m1)-2:])
	}
	if m2 := reqs[2].Messages; m2[len(m2)-1].Content != "late" {
		t.Errorf("third request ends %+v", m2[len(m2)-1])
	}
	if s := ev.kinds(gateway.EventSteered); len(s) != 2 {
		t.Errorf("%d steered events", len(s))
	}
	if box.lastSeen != 2 {
		t.Errorf("%d last takes, want 2 (one took the late prompt, one ended the turn)", box.lastSeen)
	}
}

// TestApproverRewritesInput: an Approver may replace an approved call's
// input (RewriteInput, a PermissionRequest hook's updatedInput); a
// rewrite that is not a JSON object keeps the call from running; outside
// an approval RewriteInput changes nothing.
func TestApproverRewritesInput(t *testing.T) {
	if gateway.RewriteInput(context.Background(), json.RawMessage(`{}`)) {
		t.Error("RewriteInput outside an approval reported a change")
	}
	srv := fakellm.Start(
		fakellm.Turn{ToolCalls: []fakellm.ToolCall{{ID: "o", Name: "object", Arguments: `{"v":"old"}`}, {ID: "l", Name: "list", Arguments: `{"v":"old"}`}}},
		fakellm.Turn{Text: "done"},
	)
	defer srv.Close()
	var mu sync.Mutex
	ran := map[string]string{}
	mk := func(name string) gateway.Tool {
		tl := namedTool(name)
		tl.AskApproval = true
		tl.Execute = func(_ context.Context, args json.RawMessage, _ func(gateway.Progress)) (gateway.Result, error) {
			mu.Lock()
			ran[name] = string(args)
			mu.Unlock()
			return gateway.TextResult(name + " ran"), nil
		}
		return tl
	}
	acc := tools(mk("object"), mk("list"))
	acc.Approver = func(ctx context.Context, call gateway.CallInfo, _ gateway.Tool) (gateway.Decision, error) {
		input := `{"v":"approved"}`
		if call.Name == "list" {
			input = `["not", "an", "object"]`
		}
		if !gateway.RewriteInput(ctx, json.RawMessage(input)) {
			t.Errorf("RewriteInput in the approval of %s reported no change", call.Name)
		}
		return gateway.Allow, nil
	}
	if _, err := gateway.NewRunner(gateway.RunnerOptions{}).Run(context.Background(), gateway.RunOptions{Model: srv.Provider(t, openaicompat.Config{}), Input: userInput("go"), ToolAccess: acc}); err != nil {
		t.Fatal(err)
	}
	if _, ok := ran["list"]; ok || ran["object"] != `{"v":"approved"}` {
		t.Errorf("ran %v", ran)
	}
	for _, m := range srv.Requests()[1].Messages {
		if m.Role == "tool" && m.ToolCallID == "l" && !strings.Contains(m.Content, "not a JSON object") {
			t.Errorf("list's result %q", m.Content)
		}
	}
}
