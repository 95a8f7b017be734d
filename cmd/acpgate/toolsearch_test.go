package main_test

import (
	"slices"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/testdata/fakellm"
)

// TestToolSearchWith1000Tools: a session whose server has 1000 tools
// offers the model search_tools instead of them; a search by name loads
// the tool into the next request, and the model calls it through the usual
// card path.
func TestToolSearchWith1000Tools(t *testing.T) {
	t.Parallel()
	llm := fakellm.Start(
		fakellm.Turn{ToolCalls: []fakellm.ToolCall{{ID: "s1", Name: "search_tools", Arguments: `{"query":"tool_777"}`}}},
		fakellm.Turn{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "mcp__big__tool_777", Arguments: `{}`}}},
		fakellm.Turn{Text: "found it"},
	)
	defer llm.Close()
	a := startAgent(t, t.TempDir(), "--model", "fake-model", "--base-url", llm.URL)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("big", "-tools", "1000")}})
	if err != nil {
		t.Fatal(err)
	}
	if r := prompt(t, a, resp.SessionId, "call tool 777"); r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop %s", r.StopReason)
	}
	reqs := llm.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	names := func(i int) []string {
		var out []string
		for _, tl := range reqs[i].Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	if first := names(0); !slices.Contains(first, "search_tools") || len(first) > 41 {
		t.Fatalf("first request offered %d tools (%v…), want search_tools and at most 41", len(first), first[:min(5, len(first))])
	}
	if !slices.Contains(names(1), "mcp__big__tool_777") {
		t.Fatalf("after the search the request offered %v, want mcp__big__tool_777", names(1))
	}
	if tm := reqs[1].Messages[len(reqs[1].Messages)-1]; !strings.Contains(tm.Content, "mcp__big__tool_777") {
		t.Errorf("search result to the model: %q", tm.Content)
	}
	if tm := reqs[2].Messages[len(reqs[2].Messages)-1]; tm.ToolCallID != "c1" || !strings.Contains(tm.Content, "tool_777") {
		t.Errorf("tool result to the model: %+v", tm)
	}
	a.client.waitUpdate(t, "search card", func(u acpsdk.SessionUpdate) bool {
		return u.ToolCall != nil && u.ToolCall.ToolCallId == "s1" && u.ToolCall.Kind == acpsdk.ToolKindSearch
	})
}
