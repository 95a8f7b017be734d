package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/gateway"
)

// scripted is a Provider that answers with the next of its responses and
// records the tools each request offered.
type scripted struct {
	answers []gateway.ModelResponse
	offered [][]string
}

func (s *scripted) Complete(_ context.Context, req gateway.ModelRequest, _ func(gateway.Delta)) (gateway.ModelResponse, error) {
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Name)
	}
	s.offered = append(s.offered, names)
	if len(s.answers) == 0 {
		return gateway.ModelResponse{Message: gateway.Message{Content: userInput("done")}, Stop: gateway.StopEndTurn}, nil
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	return a, nil
}

func calls(cs ...gateway.ToolCall) gateway.ModelResponse {
	return gateway.ModelResponse{Message: gateway.Message{ToolCalls: cs}, Stop: gateway.StopToolUse}
}

// manyTools returns n extra tools as a tool server's; tool i is
// "ext__srv__tool_i" (short name "tool_i") about topic i, and records its
// calls in called.
func manyTools(n int, called *[]string) []gateway.Tool {
	out := make([]gateway.Tool, n)
	for i := range out {
		name := fmt.Sprintf("ext__srv__tool_%d", i)
		t := namedTool(name)
		t.ShortName = fmt.Sprintf("tool_%d", i)
		t.Description = fmt.Sprintf("Handles topic%d requests.", i)
		t.Execute = func(context.Context, json.RawMessage, func(gateway.Progress)) (gateway.Result, error) {
			*called = append(*called, name)
			return gateway.TextResult("ok"), nil
		}
		out[i] = t
	}
	return out
}

// TestToolSearchDefersTools: with 1000 tools and a threshold of 40 the
// model is offered the native tools, search_tools and call_tool, the
// same on every request of the session: a search lists its matches with
// their parameters and does not change the list; the model calls a found
// tool through call_tool (the card and the approval are the tool's) or by
// its name; the policy hides denied tools from the search and denies them
// through call_tool; a malformed call_tool call fails alone. With fewer
// tools than the threshold, or tool search off, every tool is offered.
func TestToolSearchDefersTools(t *testing.T) {
	var called []string
	native := namedTool("read_file")
	all := manyTools(1000, &called)
	denied := "ext__srv__tool_8"
	var approved []string
	acc := gateway.ToolAccess{
		Tools:  gateway.NewToolset([]gateway.Tool{native}, all),
		Policy: func(tl gateway.Tool) bool { return tl.Name != denied },
		Approver: func(_ context.Context, c gateway.CallInfo, tl gateway.Tool) (gateway.Decision, error) {
			if tl.Name != gateway.SearchToolName {
				approved = append(approved, c.Name+"/"+tl.Name)
			}
			return gateway.Allow, nil
		},
	}
	via := func(id, args string) gateway.ToolCall {
		return gateway.ToolCall{ID: id, Name: gateway.CallToolName, Arguments: json.RawMessage(args)}
	}
	model := &scripted{answers: []gateway.ModelResponse{
		calls(gateway.ToolCall{ID: "s1", Name: gateway.SearchToolName, Arguments: json.RawMessage(`{"query":"topic7 requests","limit":3}`)}),
		calls(via("c1", `{"name":"ext__srv__tool_7","arguments":{"x":1}}`)),
		calls(gateway.ToolCall{ID: "s2", Name: gateway.SearchToolName, Arguments: json.RawMessage(`{"query":"ext__srv__tool_8"}`)}),
		calls(via("c2", `{"name":"ext__srv__tool_8"}`), via("c3", `{"arguments":{}}`), via("c4", `{"name":"ext__srv__tool_9","arguments":"{\"y\":2}"}`)),
		calls(gateway.ToolCall{ID: "c5", Name: "ext__srv__tool_10", Arguments: json.RawMessage(`{}`)}),
	}}
	ev := &events{}
	r := gateway.NewRunner(gateway.RunnerOptions{})
	res, err := r.Run(context.Background(), gateway.RunOptions{Model: model, Input: userInput("go"), ToolAccess: acc, Sink: ev.sink, SearchThreshold: 40})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background(), gateway.RunOptions{Model: model, History: res.Messages, Input: userInput("again"), ToolAccess: acc, SearchThreshold: 40}); err != nil {
		t.Fatal(err)
	}
	want := []string{"read_file", gateway.SearchToolName, gateway.CallToolName}
	if len(model.offered) != 7 {
		t.Fatalf("%d requests, want 7", len(model.offered))
	}
	for i, offered := range model.offered {
		if !slices.Equal(offered, want) {
			t.Fatalf("request %d offered %v, want %v", i+1, offered, want)
		}
	}
	if !slices.Equal(called, []string{"ext__srv__tool_7", "ext__srv__tool_9", "ext__srv__tool_10"}) {
		t.Fatalf("called %v, want tool_7, tool_9 and tool_10", called)
	}
	if want := []string{"ext__srv__tool_7/ext__srv__tool_7", "ext__srv__tool_9/ext__srv__tool_9", "ext__srv__tool_10/ext__srv__tool_10"}; !slices.Equal(approved, want) {
		t.Fatalf("approved %v, want %v", approved, want)
	}
	outputs := map[string]string{}
	for _, m := range res.Messages {
		if m.Result != nil {
			outputs[m.ToolCallID] = resultText(*m.Result)
		}
	}
	if found := outputs["s1"]; !strings.Contains(found, "## ext__srv__tool_7\nHandles topic7 requests.\nParameters: {\"type\":\"object\",\"properties\":{}}\n") {
		t.Fatalf("search result %q: want tool_7 with its description and parameters", found)
	}
	if strings.Contains(outputs["s2"], "## "+denied) || !strings.Contains(outputs["c2"], "not allowed by policy") {
		t.Fatalf("the denied tool was found (%q) or called (%q)", outputs["s2"], outputs["c2"])
	}
	if !strings.Contains(outputs["c3"], gateway.CallToolName+` needs {"name"`) {
		t.Fatalf("call_tool without a name: %q", outputs["c3"])
	}
	started := ev.kinds(gateway.EventToolCallStarted)
	if len(started) != 7 || started[0].Call.Kind != gateway.KindSearch {
		t.Fatalf("cards %v: want a search card first", started)
	}
	if c := started[1].Call; c.ID != "c1" || c.Name != "ext__srv__tool_7" || c.Title != "title of ext__srv__tool_7" || string(c.RawInput) != `{"x":1}` {
		t.Fatalf("card of the call through call_tool: %+v, want tool_7's", c)
	}
	if c := started[5].Call; c.ID != "c4" || c.Name != "ext__srv__tool_9" || string(c.RawInput) != `{"y":2}` {
		t.Fatalf("card of the call with quoted arguments: %+v, want tool_9's with the object", c)
	}

	few := &scripted{}
	acc.Tools = gateway.NewToolset([]gateway.Tool{native}, all[:40])
	if _, err := r.Run(context.Background(), gateway.RunOptions{Model: few, Input: userInput("go"), ToolAccess: acc}); err != nil {
		t.Fatal(err)
	}
	if len(few.offered[0]) != 40 || slices.Contains(few.offered[0], gateway.SearchToolName) {
		t.Fatalf("with 39 allowed tools the request offered %d (search: %v), want all 40 without search", len(few.offered[0]), slices.Contains(few.offered[0], gateway.SearchToolName))
	}

	acc.Tools = gateway.NewToolset([]gateway.Tool{native}, all)
	every := &scripted{}
	if _, err := r.Run(context.Background(), gateway.RunOptions{Model: every, Input: userInput("go"), ToolAccess: acc, SearchThreshold: gateway.NoToolSearch}); err != nil {
		t.Fatal(err)
	}
	if len(every.offered[0]) != 1000 {
		t.Fatalf("with tool search off the request offered %d tools, want 1000 (999 allowed + read_file)", len(every.offered[0]))
	}
}

// TestToolSearchContextWindow: a few tools with large schemas switch
// search on when they would fill over a tenth of the context window.
func TestToolSearchContextWindow(t *testing.T) {
	var called []string
	big := manyTools(5, &called)
	for i := range big {
		big[i].InputSchema = json.RawMessage(`{"type":"object","description":"` + strings.Repeat("x", 4000) + `"}`)
	}
	acc := gateway.ToolAccess{Tools: gateway.NewToolset(nil, big)}
	r := gateway.NewRunner(gateway.RunnerOptions{})
	m := &scripted{}
	if _, err := r.Run(context.Background(), gateway.RunOptions{Model: m, Input: userInput("go"), ToolAccess: acc, ContextWindow: 32000}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.offered[0], []string{gateway.SearchToolName, gateway.CallToolName}) {
		t.Fatalf("offered %v, want search_tools and call_tool only (5 × 4 KB schemas > 10 %% of 32k tokens)", m.offered[0])
	}
	m = &scripted{}
	if _, err := r.Run(context.Background(), gateway.RunOptions{Model: m, Input: userInput("go"), ToolAccess: acc, ContextWindow: 200000}); err != nil {
		t.Fatal(err)
	}
	if len(m.offered[0]) != 5 {
		t.Fatalf("offered %v, want all 5 tools with a 200k window", m.offered[0])
	}
}

// resultText is the text of a result's content.
func resultText(r gateway.Result) string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// TestToolSearchIndexFollowsPolicy: the index a session's tools keep
// between turns is rebuilt when the policy lets other tools through: a
// tool denied since the last turn is no longer found, one allowed since
// is.
func TestToolSearchIndexFollowsPolicy(t *testing.T) {
	var called []string
	tools := gateway.NewToolset(nil, manyTools(100, &called))
	search := calls(gateway.ToolCall{ID: "s", Name: gateway.SearchToolName, Arguments: json.RawMessage(`{"query":"topic7 requests","limit":1}`)})
	r := gateway.NewRunner(gateway.RunnerOptions{})
	found := func(deny string) string {
		t.Helper()
		acc := gateway.ToolAccess{Tools: tools, Policy: func(tl gateway.Tool) bool { return tl.Name != deny }}
		res, err := r.Run(context.Background(), gateway.RunOptions{Model: &scripted{answers: []gateway.ModelResponse{search}}, Input: userInput("go"), ToolAccess: acc})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range res.Messages {
			if m.Result != nil {
				return resultText(*m.Result)
			}
		}
		t.Fatal("no search result")
		return ""
	}
	if got := found("ext__srv__tool_7"); strings.Contains(got, "## ext__srv__tool_7\n") {
		t.Fatalf("with tool_7 denied the search found it: %q", got)
	}
	if got := found(""); !strings.Contains(got, "## ext__srv__tool_7\n") {
		t.Fatalf("after the policy allowed tool_7 the search found %q, want tool_7", got)
	}
	if got := found("ext__srv__tool_7"); strings.Contains(got, "## ext__srv__tool_7\n") {
		t.Fatalf("after the policy denied tool_7 again the search found it: %q", got)
	}
}

// TestToolSearchShortName: a search for a tool's ShortName (case aside)
// finds that tool first, though by its words another tool matches better.
func TestToolSearchShortName(t *testing.T) {
	var called []string
	get, getAll := namedTool("ext__db__get"), namedTool("ext__db__get_all")
	get.ShortName, get.Description = "get", "Fetches one record."
	getAll.Description = "Get them all: get every record, get the lot."
	acc := gateway.ToolAccess{Tools: gateway.NewToolset(nil, append(manyTools(100, &called), getAll, get))}
	search := calls(gateway.ToolCall{ID: "s", Name: gateway.SearchToolName, Arguments: json.RawMessage(`{"query":"GET","limit":1}`)})
	res, err := gateway.NewRunner(gateway.RunnerOptions{}).Run(context.Background(), gateway.RunOptions{Model: &scripted{answers: []gateway.ModelResponse{search}}, Input: userInput("go"), ToolAccess: acc})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Messages {
		if m.Result != nil {
			if got := resultText(*m.Result); !strings.Contains(got, "## ext__db__get\n") {
				t.Errorf("the search for GET found %q", got)
			}
			return
		}
	}
	t.Fatal("no search result")
}
