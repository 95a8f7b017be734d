package anthropic_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/anthropic"
	fake "github.com/acpgate/acpgate/internal/testsupport/fake/fakeanthropic"
)

// TestDeferredToolsAndServerSearch: deferred tools go with defer_loading
// and the BM25 tool search tool comes last, carrying the tools' cache
// breakpoint, the same on every request; an answer that searched
// server-side and called a found tool gives the gateway that call, and
// its blocks (server_tool_use, tool_search_tool_result with its
// tool_reference, tool_use) go back in the next request unchanged.
func TestDeferredToolsAndServerSearch(t *testing.T) {
	t.Parallel()
	srv := fake.Start(
		fake.Turn{Blocks: []fake.Block{
			fake.Text("Let me look for a tool."),
			fake.ServerToolUse("srvtoolu_1", fake.ToolSearch, `{"query":"weather"}`),
			fake.ToolSearchResult("srvtoolu_1", "get_weather"),
			fake.ToolUse("toolu_1", "get_weather", `{"city":"Oslo"}`),
		}},
		fake.Turn{Blocks: []fake.Block{fake.Text("Rain.")}},
	)
	defer srv.Close()
	p := srv.Provider(t, anthropic.Config{})
	if !p.DeferredTools() {
		t.Fatal("the provider does not declare deferred tools")
	}
	obj := json.RawMessage(`{"type":"object"}`)
	tools := []gateway.ToolSpec{{Name: "read_file", Parameters: obj}, {Name: "get_time", Parameters: obj, Deferred: true}, {Name: "get_weather", Description: "Weather.", Parameters: obj, Deferred: true}}
	conv := []gateway.Message{user("weather in Oslo?")}
	res, _ := mustComplete(t, p, gateway.ModelRequest{System: "sys", Tools: tools, Messages: conv})
	if len(res.Message.ToolCalls) != 1 || res.Message.ToolCalls[0].Name != "get_weather" || res.Stop != gateway.StopToolUse {
		t.Fatalf("answer %+v, stop %s; want one call of get_weather", res.Message.ToolCalls, res.Stop)
	}
	if res.Message.Native == nil {
		t.Fatal("the answer's server tool blocks were not kept")
	}
	conv = append(conv, res.Message, gateway.Message{Role: gateway.RoleTool, ToolCallID: "toolu_1", ToolName: "get_weather", Result: &gateway.Result{Content: []gateway.Content{{Type: gateway.ContentText, Text: "rain"}}}})
	mustComplete(t, p, gateway.ModelRequest{System: "sys", Tools: tools, Messages: conv})

	reqs := srv.Requests()
	for i, r := range reqs {
		if !slices.EqualFunc(r.Tools, reqs[0].Tools, func(a, b json.RawMessage) bool { return string(a) == string(b) }) {
			t.Errorf("request %d: tools differ from the first request's", i+1)
		}
		var got []struct {
			Name         string          `json:"name"`
			Type         string          `json:"type"`
			DeferLoading bool            `json:"defer_loading"`
			CacheControl json.RawMessage `json:"cache_control"`
		}
		if err := json.Unmarshal(mustJSON(t, r.Tools), &got); err != nil || len(got) != 4 {
			t.Fatalf("request %d: tools %s (%v)", i+1, mustJSON(t, r.Tools), err)
		}
		for j, want := range []struct {
			name, typ string
			deferred  bool
		}{{"read_file", "", false}, {"get_time", "", true}, {"get_weather", "", true}, {anthropic.ToolSearchName, "tool_search_tool_bm25_20251119", false}} {
			if g := got[j]; g.Name != want.name || g.Type != want.typ || g.DeferLoading != want.deferred {
				t.Errorf("request %d: tools[%d] = %+v, want %+v", i+1, j, g, want)
			}
		}
		if bp := r.Breakpoints(); len(bp) == 0 || bp[0] != "tools[3]" {
			t.Errorf("request %d: breakpoints %v; want the tool search tool's first", i+1, bp)
		}
	}
	sent := reqs[1].Messages[1]
	if sent.Role != "assistant" || len(sent.Content) != 4 {
		t.Fatalf("the answer went back as %+v", sent)
	}
	var back []json.RawMessage
	if err := json.Unmarshal(res.Message.Native.Content, &back); err != nil {
		t.Fatal(err)
	}
	for j := range back {
		if !jsonEqual(t, back[j], sent.Content[j]) {
			t.Errorf("block %d went back as %s, was returned as %s", j, sent.Content[j], back[j])
		}
	}
	blocks := sent.Blocks()
	if blocks[1]["type"] != "server_tool_use" || blocks[2]["type"] != "tool_search_tool_result" || blocks[3]["type"] != "tool_use" {
		t.Errorf("blocks sent back: %v", blocks)
	}
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	return string(mustJSON(t, decoded(t, a))) == string(mustJSON(t, decoded(t, b)))
}
