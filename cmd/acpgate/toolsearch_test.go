package main_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/testdata/fakellm"
)

// TestToolSearchWith1000Tools: a session whose server has 1000 tools
// offers the model search_tools and call_tool instead of them; a search
// by name lists the tool with its parameters; the model calls it through
// call_tool, with the real tool's card, and again at the next prompt
// without a search. Every request of the session carries the same tools,
// byte for byte, and the session id as prompt_cache_key (promptCacheKey
// on); each usage_update carries the cached input tokens, priced at
// cachedInputPerMTok.
func TestToolSearchWith1000Tools(t *testing.T) {
	t.Parallel()
	// 1000 prompt tokens, 800 of them cached, and 10 out: 200 at 2/M +
	// 800 at 0.5/M + 10 at 10/M = 0.0009 USD a response.
	usage := &fakellm.Usage{PromptTokens: 1000, CachedTokens: 800, CompletionTokens: 10}
	call := func(id, args string) fakellm.Turn {
		return fakellm.Turn{Usage: usage, ToolCalls: []fakellm.ToolCall{{ID: id, Name: "call_tool", Arguments: args}}}
	}
	llm := fakellm.Start(
		fakellm.Turn{Usage: usage, ToolCalls: []fakellm.ToolCall{{ID: "s1", Name: "search_tools", Arguments: `{"query":"tool_777"}`}}},
		call("c1", `{"name":"mcp__big__tool_777","arguments":{}}`),
		fakellm.Turn{Usage: usage, Text: "found it"},
		call("c2", `{"name":"mcp__big__tool_777"}`),
		fakellm.Turn{Usage: usage, Text: "called it again"},
	)
	defer llm.Close()
	cfg := writeConfig(t, `{"model": {"baseUrl": "`+llm.URL+`", "model": "fake-model", "contextWindow": 100000, "promptCacheKey": true,
  "pricing": {"inputPerMTok": 2, "outputPerMTok": 10, "cachedInputPerMTok": 0.5}}}`)
	a := startAgent(t, t.TempDir(), "--config", cfg)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("big", "-tools", "1000")}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	if r := prompt(t, a, sid, "call tool 777"); r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop %s", r.StopReason)
	}
	if r := prompt(t, a, sid, "once more"); r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop %s", r.StopReason)
	}
	reqs := llm.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d model requests, want 5", len(reqs))
	}
	var names []string
	for _, tl := range reqs[0].Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "search_tools") || !slices.Contains(names, "call_tool") || len(names) > 10 {
		t.Fatalf("first request offered %v, want search_tools and call_tool among a few", names)
	}
	first := toolsJSON(t, reqs[0])
	for i, r := range reqs {
		if !bytes.Equal(toolsJSON(t, r), first) {
			t.Errorf("request %d offered other tools than the first: %s", i+1, toolsJSON(t, r))
		}
		if r.PromptCacheKey != string(sid) {
			t.Errorf("request %d: prompt_cache_key %q, want the session id %q", i+1, r.PromptCacheKey, sid)
		}
	}
	if tm := reqs[1].Messages[len(reqs[1].Messages)-1]; !strings.Contains(tm.Content, "## mcp__big__tool_777\n") || !strings.Contains(tm.Content, "Parameters: {") {
		t.Errorf("search result to the model: %q", tm.Content)
	}
	for _, i := range []int{2, 4} {
		if tm := reqs[i].Messages[len(reqs[i].Messages)-1]; tm.Role != "tool" || !strings.Contains(tm.Content, "tool_777") {
			t.Errorf("request %d: tool result to the model: %+v", i+1, tm)
		}
	}
	a.client.waitUpdate(t, "search card", func(u acpsdk.SessionUpdate) bool {
		return u.ToolCall != nil && u.ToolCall.ToolCallId == "s1" && u.ToolCall.Kind == acpsdk.ToolKindSearch
	})
	a.client.waitUpdate(t, "the real tool's card for the call through call_tool", func(u acpsdk.SessionUpdate) bool {
		return u.ToolCall != nil && u.ToolCall.ToolCallId == "c2" && strings.Contains(u.ToolCall.Title, "tool_777")
	})
	a.client.waitUpdate(t, "usage_update with the cached tokens and the cost of five responses", func(u acpsdk.SessionUpdate) bool {
		up := u.UsageUpdate
		if up == nil || up.Cost == nil || up.Used != 1010 || !near(up.Cost.Amount, 5*0.0009) {
			return false
		}
		return strings.Contains(mustJSON(up.Meta), `"cachedReadTokens":800`)
	})
}

// toolsJSON is the "tools" array of r's body, as sent.
func toolsJSON(t *testing.T, r fakellm.Request) json.RawMessage {
	t.Helper()
	var body struct{ Tools json.RawMessage }
	if err := json.Unmarshal(r.Raw, &body); err != nil {
		t.Fatal(err)
	}
	return body.Tools
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
