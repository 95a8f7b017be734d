package acp_test

import (
	"reflect"
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

// TestUsageCachedTokens: the input tokens a prompt cache served are in
// the usage_update's _meta.acpgate.usage (cachedReadTokens, next to the
// other inputTokens), counted in used and priced at
// pricing.cachedInputPerMTok, or at the input price when it is not set.
func TestUsageCachedTokens(t *testing.T) {
	m := scripted(func(gateway.ModelRequest, func(gateway.Delta)) (gateway.ModelResponse, error) {
		return gateway.ModelResponse{Message: assistant("hi"), Stop: gateway.StopEndTurn, Usage: gateway.Usage{InputTokens: 200, OutputTokens: 500, CacheReadTokens: 800}}, nil
	})
	for _, c := range []struct {
		name, pricing string
		cost          float64
	}{
		// 200 in at 2/M + 800 cached at 0.5/M + 500 out at 10/M.
		{"cached price", `"cachedInputPerMTok": 0.5, `, 0.0058},
		// 1000 in at 2/M + 500 out at 10/M.
		{"input price", ``, 0.007},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, acp.Options{Provider: m, Config: configOf(t, `{"model": {"contextWindow": 128000, "pricing": {`+c.pricing+`"inputPerMTok": 2, "outputPerMTok": 10}}}`)}, nil)
			_, ups := h.prompt(h.newSession().SessionId, "hello")
			var usage *acpsdk.SessionUsageUpdate
			for _, u := range ups {
				if u.UsageUpdate != nil {
					usage = u.UsageUpdate
				}
			}
			if usage == nil || usage.Used != 1500 || usage.Cost == nil || !near(usage.Cost.Amount, c.cost) {
				t.Fatalf("usage_update %+v, want used 1500 and cost %v", usage, c.cost)
			}
			want := map[string]any{"inputTokens": 200.0, "outputTokens": 500.0, "cachedReadTokens": 800.0, "cachedWriteTokens": 0.0} // as the client decodes it
			if got := usage.Meta["acpgate"].(map[string]any)["usage"]; !reflect.DeepEqual(got, want) {
				t.Errorf("_meta.acpgate.usage %v, want %v", got, want)
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
			h := newHarness(t, acp.Options{Provider: m, Config: configOf(t, `{"model": {"provider": "anthropic", "contextWindow": 200000, "pricing": `+c.pricing+`}}`)}, nil)
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
