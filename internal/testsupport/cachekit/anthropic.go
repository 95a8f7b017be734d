package cachekit

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/anthropic"
	fake "github.com/acpgate/acpgate/internal/testsupport/fake/fakeanthropic"
)

// anthropicEP is the Endpoint of the Anthropic provider: fakeanthropic.
type anthropicEP struct {
	srv   *fake.Server
	calls int // numbers the tool calls and searches (one request at a time)
}

// Anthropic returns an Endpoint that is a fakeanthropic server driven by
// acpgate's Anthropic provider, closed when t ends. A request's Prompt is
// fakeanthropic.Request.CachePrefix (tools, system, messages, without the
// cache_control markers) and its Breakpoints where those markers were.
// With deferred tools the model searches them server-side: its search
// and the call of the tool found are one answer (server_tool_use,
// tool_search_tool_result with a tool_reference, tool_use), as the API
// answers.
func Anthropic(t testing.TB) Endpoint {
	srv := fake.Start()
	t.Cleanup(srv.Close)
	return &anthropicEP{srv: srv}
}

func (a *anthropicEP) Provider(t testing.TB) gateway.Provider {
	return a.srv.Provider(t, anthropic.Config{MaxRetries: anthropic.NoRetries})
}

func (a *anthropicEP) Answer(model func(Request) Answer) {
	a.srv.SetResponder(func(r fake.Request) (fake.Turn, bool) {
		q := anthropicRequest(r)
		var blocks []fake.Block
		for {
			ans := model(q)
			if len(ans.Calls) == 1 && ans.Calls[0].Name == gateway.SearchToolName && q.ServerSearch {
				var in struct{ Query string }
				_ = json.Unmarshal([]byte(ans.Calls[0].Args), &in)
				a.calls++
				id := fmt.Sprintf("srvtoolu_%d", a.calls)
				input, _ := json.Marshal(map[string]string{"query": in.Query})
				blocks = append(blocks, fake.ServerToolUse(id, fake.ToolSearch, string(input)), fake.ToolSearchResult(id, in.Query))
				continue
			}
			if ans.Text != "" {
				blocks = append(blocks, fake.Text(ans.Text))
			}
			for _, c := range ans.Calls {
				a.calls++
				blocks = append(blocks, fake.ToolUse(fmt.Sprintf("toolu_%d", a.calls), c.Name, c.Args))
			}
			return fake.Turn{Blocks: blocks}, true
		}
	})
}

func (a *anthropicEP) Requests(t testing.TB) []Request {
	var out []Request
	for i, r := range a.srv.Requests() {
		if r.DecodeError != "" {
			t.Fatalf("request %d: %s", i+1, r.DecodeError)
		}
		out = append(out, anthropicRequest(r))
	}
	return out
}

// anthropicRequest is what the kit needs of a fakeanthropic request.
func anthropicRequest(r fake.Request) Request {
	q := Request{Deferred: map[string]bool{}}
	q.Prompt, q.Breakpoints = r.CachePrefix()
	for _, raw := range r.Tools {
		var tl struct {
			Name         string `json:"name"`
			Type         string `json:"type"`
			DeferLoading bool   `json:"defer_loading"`
		}
		_ = json.Unmarshal(raw, &tl)
		q.Tools = append(q.Tools, tl.Name)
		switch {
		case tl.Name == fake.ToolSearch:
			q.ServerSearch = true
		case tl.DeferLoading:
			q.Deferred[tl.Name] = true
		}
	}
	return q
}
