package gateway_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/gateway"
)

func namedTool(name string) gateway.Tool {
	return gateway.Tool{Name: name, Title: "title of " + name, InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
		Execute: func(context.Context, json.RawMessage, func(gateway.Progress)) (gateway.Result, error) {
			return gateway.TextResult(name), nil
		}}
}

func toolNames(ts []gateway.Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

// TestToolset pins a Toolset: natives first and never shadowed, the first
// of two same-named extra tools kept, lookup and filter by name or title.
func TestToolset(t *testing.T) {
	ts := gateway.NewToolset([]gateway.Tool{namedTool("native")},
		[]gateway.Tool{namedTool("b_tool"), namedTool("native"), namedTool("a_tool"), namedTool("b_tool")})
	if got := toolNames(ts.Tools()); !reflect.DeepEqual(got, []string{"native", "b_tool", "a_tool"}) {
		t.Errorf("tools %v", got)
	}
	if ts.Len() != 3 || ts.Current() != ts {
		t.Errorf("len %d; a fixed Toolset is its own view", ts.Len())
	}
	if tl, ok := ts.Lookup("a_tool"); !ok || tl.Name != "a_tool" {
		t.Error("a_tool not found")
	}
	if _, ok := ts.Lookup("c_tool"); ok {
		t.Error("found a tool that is not in the set")
	}
	if got := toolNames(ts.Filter("B_T")); !reflect.DeepEqual(got, []string{"b_tool"}) {
		t.Errorf("filter: %v", got)
	}
	if got := toolNames(ts.Filter("title of a")); !reflect.DeepEqual(got, []string{"a_tool"}) {
		t.Errorf("filter by title: %v", got)
	}
	var empty *gateway.Toolset
	if empty.Len() != 0 || len(empty.Tools()) != 0 || len(empty.Filter("")) != 0 {
		t.Error("a nil Toolset is not empty")
	}
	if _, ok := empty.Lookup("native"); ok {
		t.Error("a nil Toolset has a tool")
	}
}

func TestHistoryRoundTrip(t *testing.T) {
	size := int64(3)
	h := gateway.History{
		{Role: gateway.RoleUser, Content: []gateway.Content{{Type: gateway.ContentText, Text: "hi"}, {Type: gateway.ContentImage, Data: "aGk=", MIMEType: "image/png"}}},
		{Role: gateway.RoleAssistant, Thinking: "hmm", Content: []gateway.Content{{Type: gateway.ContentText, Text: "calling"}},
			ToolCalls: []gateway.ToolCall{{ID: "c1", Name: "ext__s__echo", Arguments: json.RawMessage(`{"text":"x","n":[1,2.5]}`)}}},
		{Role: gateway.RoleTool, ToolCallID: "c1", ToolName: "ext__s__echo", Result: &gateway.Result{
			Content:    []gateway.Content{{Type: gateway.ContentText, Text: "x"}, {Type: gateway.ContentResourceLink, URI: "file:///a", Name: "a", Size: &size}},
			Structured: json.RawMessage(`{"k":true}`), IsError: true, ForModel: "<<<framed>>>"}},
		{Role: gateway.RoleAssistant, Content: []gateway.Content{{Type: gateway.ContentText, Text: "done ✓"}}},
	}
	data, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var back gateway.History
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(h, back) {
		t.Errorf("round trip changed the history:\n%#v\n%#v", h, back)
	}
	again, _ := json.Marshal(back)
	if string(again) != string(data) {
		t.Errorf("re-encoding differs:\n%s\n%s", data, again)
	}
	if !strings.Contains(string(data), `"toolCallId":"c1"`) {
		t.Errorf("unexpected encoding %s", data)
	}
}
