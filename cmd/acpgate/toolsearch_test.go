package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/fake/fakeanthropic"
	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
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

// TestAnthropicToolSearchWith1000Tools: with the Anthropic provider a
// session whose server has 1000 tools offers every tool with
// defer_loading and the API's tool search tool last (the tools' cache
// breakpoint), no search_tools or call_tool, the same tools byte for byte
// on every request; the model searches server-side and calls the tool it
// found by its real name, with the real tool's card, and the answer's
// server_tool_use and tool_search_tool_result blocks go back unchanged;
// at the next prompt it calls the tool again without a search.
func TestAnthropicToolSearchWith1000Tools(t *testing.T) {
	t.Parallel()
	const found = "mcp__big__tool_777"
	claude := fakeanthropic.Start(
		fakeanthropic.Turn{Blocks: []fakeanthropic.Block{
			fakeanthropic.ServerToolUse("srvtoolu_1", fakeanthropic.ToolSearch, `{"query":"tool 777"}`),
			fakeanthropic.ToolSearchResult("srvtoolu_1", found),
			fakeanthropic.ToolUse("toolu_1", found, `{}`),
		}},
		fakeanthropic.Turn{Blocks: []fakeanthropic.Block{fakeanthropic.Text("found it")}},
		fakeanthropic.Turn{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("toolu_2", found, `{}`)}},
		fakeanthropic.Turn{Blocks: []fakeanthropic.Block{fakeanthropic.Text("called it again")}},
	)
	defer claude.Close()
	a := startAgent(t, t.TempDir(), "--provider", "anthropic", "--base-url", claude.URL, "--model", fakeanthropic.DefaultModel)
	a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("big", "-tools", "1000")}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	for _, p := range []string{"call tool 777", "once more"} {
		if r := prompt(t, a, sid, p); r.StopReason != acpsdk.StopReasonEndTurn {
			t.Fatalf("%s: stop %s", p, r.StopReason)
		}
	}
	reqs := claude.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests, want 4", len(reqs))
	}
	var tools []struct {
		Name         string `json:"name"`
		DeferLoading bool   `json:"defer_loading"`
	}
	if err := json.Unmarshal([]byte(mustJSON(reqs[0].Tools)), &tools); err != nil {
		t.Fatal(err)
	}
	deferred := 0
	for _, tl := range tools {
		if tl.DeferLoading {
			deferred++
		}
		if tl.Name == "search_tools" || tl.Name == "call_tool" || tl.DeferLoading != strings.HasPrefix(tl.Name, "mcp_") {
			t.Errorf("offered %+v: want every MCP tool (and the resource tools) deferred, no other, and no search_tools or call_tool", tl)
		}
	}
	if n := len(tools); deferred < 1000 || tools[n-1].Name != fakeanthropic.ToolSearch {
		t.Fatalf("%d tools, %d deferred, last %+v; want the MCP tools deferred and the tool search tool last", n, deferred, tools[n-1])
	}
	for i, r := range reqs {
		if mustJSON(r.Tools) != mustJSON(reqs[0].Tools) {
			t.Errorf("request %d offered other tools than the first", i+1)
		}
		if bp := r.Breakpoints(); len(bp) == 0 || bp[0] != fmt.Sprintf("tools[%d]", len(tools)-1) {
			t.Errorf("request %d: breakpoints %v, want the tool search tool's first", i+1, bp)
		}
	}
	for _, i := range []int{1, 3} {
		if got := toolResultText(reqs[i], fmt.Sprintf("toolu_%d", (i+1)/2)); !strings.Contains(got, "tool_777") {
			t.Errorf("request %d: the tool's result %s", i+1, got)
		}
	}
	back := reqs[1].Messages[1].Blocks()
	if len(back) != 3 || back[0]["type"] != "server_tool_use" || back[1]["type"] != "tool_search_tool_result" ||
		!strings.Contains(mustJSON(back[1]["content"]), `"tool_name":"`+found+`"`) || back[2]["name"] != found {
		t.Errorf("the answer went back as %s", mustJSON(back))
	}
	if mustJSON(reqs[3].Messages[1].Content) != mustJSON(reqs[1].Messages[1].Content) {
		t.Errorf("at the next prompt the answer went back as %s", mustJSON(reqs[3].Messages[1].Content))
	}
	a.client.waitUpdate(t, "the real tool's card for the call by name", func(u acpsdk.SessionUpdate) bool {
		return u.ToolCall != nil && u.ToolCall.ToolCallId == "toolu_2" && strings.Contains(u.ToolCall.Title, "tool_777")
	})
}
