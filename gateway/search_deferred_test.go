package gateway_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/gateway"
)

// deferring is a scripted Provider that searches deferred tools itself
// (gateway.DeferredToolser); it records every request's tools.
type deferring struct {
	scripted
	specs [][]gateway.ToolSpec
}

func (d *deferring) DeferredTools() bool { return true }

func (d *deferring) Complete(ctx context.Context, req gateway.ModelRequest, onDelta func(gateway.Delta)) (gateway.ModelResponse, error) {
	d.specs = append(d.specs, req.Tools)
	return d.scripted.Complete(ctx, req, onDelta)
}

// TestToolSearchDeferredToProvider: above the threshold, a provider that
// searches deferred tools itself is given every tool the policy allows —
// the native ones as they are, the extra ones marked Deferred — in the same
// order on every request, and no search_tools or call_tool; the model
// calls a tool it found by its name, through the tool's own policy,
// approval and card. Below the threshold nothing is deferred.
func TestToolSearchDeferredToProvider(t *testing.T) {
	var called []string
	native := namedTool("read_file")
	denied := "ext__srv__tool_8"
	var approved []string
	acc := gateway.ToolAccess{
		Tools:  gateway.NewToolset([]gateway.Tool{native}, manyTools(1000, &called)),
		Policy: func(tl gateway.Tool) bool { return tl.Name != denied },
		Approver: func(_ context.Context, c gateway.CallInfo, tl gateway.Tool) (gateway.Decision, error) {
			approved = append(approved, c.Name+"/"+tl.Name)
			return gateway.Allow, nil
		},
	}
	model := &deferring{scripted: scripted{answers: []gateway.ModelResponse{
		calls(gateway.ToolCall{ID: "c1", Name: "ext__srv__tool_7", Arguments: json.RawMessage(`{"x":1}`)}),
		calls(gateway.ToolCall{ID: "c2", Name: denied, Arguments: json.RawMessage(`{}`)}),
	}}}
	ev := &events{}
	r := gateway.NewRunner(gateway.RunnerOptions{})
	res, err := r.Run(context.Background(), gateway.RunOptions{Model: model, Input: userInput("go"), ToolAccess: acc, Sink: ev.sink, SearchThreshold: 40})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background(), gateway.RunOptions{Model: model, History: res.Messages, Input: userInput("again"), ToolAccess: acc, SearchThreshold: 40}); err != nil {
		t.Fatal(err)
	}
	if len(model.specs) != 4 {
		t.Fatalf("%d requests, want 4", len(model.specs))
	}
	first := model.specs[0]
	if len(first) != 1000 || first[0].Name != "read_file" || first[0].Deferred || first[1].Name != "ext__srv__tool_0" {
		t.Fatalf("offered %d tools, starting %+v", len(first), first[:2])
	}
	for _, s := range first[1:] {
		if !s.Deferred || s.Name == denied || s.Name == gateway.SearchToolName || s.Name == gateway.CallToolName {
			t.Fatalf("offered %+v: want every allowed extra tool deferred, and no acpgate search", s)
		}
	}
	for i, specs := range model.specs {
		if !slices.EqualFunc(specs, first, func(a, b gateway.ToolSpec) bool {
			return a.Name == b.Name && a.Deferred == b.Deferred && string(a.Parameters) == string(b.Parameters)
		}) {
			t.Fatalf("request %d offered other tools than the first", i+1)
		}
	}
	if !slices.Equal(called, []string{"ext__srv__tool_7"}) || !slices.Equal(approved, []string{"ext__srv__tool_7/ext__srv__tool_7"}) {
		t.Fatalf("called %v, approved %v; want tool_7 by its name", called, approved)
	}
	if c := ev.kinds(gateway.EventToolCallStarted)[0].Call; c.Name != "ext__srv__tool_7" || c.Title != "title of ext__srv__tool_7" {
		t.Fatalf("card %+v, want tool_7's", c)
	}
	for _, m := range res.Messages {
		if m.ToolCallID == "c2" && (m.Result == nil || !strings.Contains(resultText(*m.Result), "not allowed by policy")) {
			t.Fatalf("the denied tool's call: %+v", m.Result)
		}
	}

	few := &deferring{}
	acc.Tools = gateway.NewToolset([]gateway.Tool{native}, manyTools(10, &called))
	if _, err := r.Run(context.Background(), gateway.RunOptions{Model: few, Input: userInput("go"), ToolAccess: acc, SearchThreshold: 40}); err != nil {
		t.Fatal(err)
	}
	for _, s := range few.specs[0] {
		if s.Deferred {
			t.Fatalf("below the threshold %s was deferred", s.Name)
		}
	}
}
