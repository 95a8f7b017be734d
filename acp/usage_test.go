package acp_test

import (
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/gateway"
)

// TestUsageAndTitleUpdates: after a model response the client gets a
// usage_update (tokens of the response out of model.contextWindow), and
// the first prompt's title reaches it as a session_info_update; without a
// known context window no usage_update is sent.
func TestUsageAndTitleUpdates(t *testing.T) {
	m := scripted(func(_ gateway.ModelRequest, onDelta func(gateway.Delta)) (gateway.ModelResponse, error) {
		onDelta(gateway.Delta{Text: "hi"})
		return gateway.ModelResponse{Message: assistant("hi"), Stop: gateway.StopEndTurn, Usage: gateway.Usage{InputTokens: 1200, OutputTokens: 34}}, nil
	})
	for _, c := range []struct {
		name   string
		config string
		usage  bool
	}{
		{"window known", `{"model": {"contextWindow": 128000}}`, true},
		{"window unknown", `{}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, acp.Options{Provider: m, Config: configOf(t, c.config)}, nil)
			s := h.newSession()
			_, ups := h.prompt(s.SessionId, "explain   the build")
			var title *string
			var usage *acpsdk.SessionUsageUpdate
			for _, u := range ups {
				if u.SessionInfoUpdate != nil {
					title = u.SessionInfoUpdate.Title
				}
				if u.UsageUpdate != nil {
					usage = u.UsageUpdate
				}
			}
			if title == nil || *title != "explain the build" {
				t.Errorf("session_info_update title %v, want %q", title, "explain the build")
			}
			switch {
			case c.usage && (usage == nil || usage.Used != 1234 || usage.Size != 128000):
				t.Errorf("usage_update %+v, want used 1234 of 128000", usage)
			case !c.usage && usage != nil:
				t.Errorf("usage_update %+v without a known context window", usage)
			}
		})
	}
}

// TestUsageCountsTheCache: the prompt cache's reads and writes count in
// used, and the cost prices them at the cache prices (by default 1.25 and
// 0.1 times the input price; set ones win).
func TestUsageCountsTheCache(t *testing.T) {
	m := scripted(func(_ gateway.ModelRequest, onDelta func(gateway.Delta)) (gateway.ModelResponse, error) {
		return gateway.ModelResponse{Message: assistant("hi"), Stop: gateway.StopEndTurn,
			Usage: gateway.Usage{InputTokens: 100, CacheWriteTokens: 2000, CacheReadTokens: 10000, OutputTokens: 50}}, nil
	})
	for _, c := range []struct {
		name, pricing string
		cost          float64
	}{
		{"default cache prices", `{"inputPerMTok": 3, "outputPerMTok": 15}`, (100*3 + 2000*3.75 + 10000*0.3 + 50*15) / 1e6},
		{"set cache prices", `{"inputPerMTok": 3, "outputPerMTok": 15, "cacheWritePerMTok": 6, "cacheReadPerMTok": 0}`, (100*3 + 2000*6 + 50*15) / 1e6},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, acp.Options{Provider: m, Config: configOf(t, `{"model": {"contextWindow": 200000, "pricing": `+c.pricing+`}}`)}, nil)
			_, ups := h.prompt(h.newSession().SessionId, "hello")
			var usage *acpsdk.SessionUsageUpdate
			for _, u := range ups {
				if u.UsageUpdate != nil {
					usage = u.UsageUpdate
				}
			}
			if usage == nil || usage.Used != 12150 || usage.Cost == nil || usage.Cost.Amount-c.cost > 1e-12 || c.cost-usage.Cost.Amount > 1e-12 {
				t.Errorf("usage_update %s, want used 12150 and cost %v", dump([]acpsdk.SessionUpdate{{UsageUpdate: usage}}), c.cost)
			}
		})
	}
}
