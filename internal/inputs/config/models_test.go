package config_test

import (
	"reflect"
	"testing"

	"github.com/acpgate/acpgate/internal/inputs/config"
)

// TestModelChoicesAndPricing: model.choices takes ids and objects, a
// profile's choices and pricing replace the file's whole, and both survive
// Effective's copy.
func TestModelChoicesAndPricing(t *testing.T) {
	c, _, err := config.Parse([]byte(`{
  "model": {"model": "a", "choices": ["b", {"id": "c", "name": "C", "description": "the big one", "contextWindow": 9, "pricing": {"inputPerMTok": 3, "outputPerMTok": 15}}],
            "pricing": {"inputPerMTok": 0.5, "outputPerMTok": 2, "currency": "EUR"}},
  "agents": {"list": [{"id": "p", "model": {"choices": ["d"]}}, {"id": "q", "model": {"pricing": {"inputPerMTok": 1, "outputPerMTok": 1}}}]}
}`), "config.json")
	if err != nil {
		t.Fatal(err)
	}
	def, _ := c.Effective("")
	want := []config.ModelChoice{{ID: "b"}, {ID: "c", Name: "C", Description: "the big one", ContextWindow: 9, Pricing: &config.Pricing{InputPerMTok: 3, OutputPerMTok: 15}}}
	if !reflect.DeepEqual(def.Model.Choices, want) {
		t.Errorf("choices %+v, want %+v", def.Model.Choices, want)
	}
	if p := def.Model.Pricing; p == nil || p.CurrencyCode() != "EUR" || p.Cost(1_000_000, 500_000) != 1.5 {
		t.Errorf("pricing %+v", p)
	}
	p, _ := c.Effective("p")
	if !reflect.DeepEqual(p.Model.Choices, []config.ModelChoice{{ID: "d"}}) || p.Model.Pricing == nil || p.Model.Pricing.Currency != "EUR" {
		t.Errorf("profile p: %+v", p.Model)
	}
	q, _ := c.Effective("q")
	if len(q.Model.Choices) != 2 || q.Model.Pricing.CurrencyCode() != config.DefaultCurrency {
		t.Errorf("profile q: %+v", q.Model)
	}
}

// TestOverDropsAnotherModelsFacts: the price and context window said of
// one model do not follow a switch to another (a profile's or a flag's
// model), unless the override sets its own; the same model keeps them.
func TestOverDropsAnotherModelsFacts(t *testing.T) {
	file := config.Model{Model: "big", ContextWindow: 1000, Pricing: &config.Pricing{InputPerMTok: 10, OutputPerMTok: 20}}
	if got := file.Over(config.Model{Model: "small"}); got.Pricing != nil || got.ContextWindow != 0 {
		t.Errorf("another model kept the file model's facts: %+v", got)
	}
	own := &config.Pricing{InputPerMTok: 1, OutputPerMTok: 2}
	if got := file.Over(config.Model{Model: "small", ContextWindow: 50, Pricing: own}); got.Pricing != own || got.ContextWindow != 50 {
		t.Errorf("the override's own facts were lost: %+v", got)
	}
	if got := file.Over(config.Model{Model: "big", APIKey: "k"}); got.Pricing != file.Pricing || got.ContextWindow != 1000 {
		t.Errorf("the same model lost its facts: %+v", got)
	}
}

// TestCachedInputPrice: input tokens read from a prompt cache cost
// cachedInputPerMTok (OpenAI's name for cacheReadPerMTok, which wins),
// parsed from the file; without either they cost the provider's default:
// the input price for openai, a tenth of it for anthropic.
func TestCachedInputPrice(t *testing.T) {
	c, _, err := config.Parse([]byte(`{"model": {"pricing": {"inputPerMTok": 2, "outputPerMTok": 8, "cachedInputPerMTok": 0.5}}}`), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Model.Pricing.CacheCost(0, 800_000, config.ProviderOpenAI); got != 0.4 {
		t.Errorf("cost of cached input with a cached price: %v, want 0.4", got)
	}
	one := 1.0
	both := c.Model.Pricing
	both.CacheReadPerMTok = &one
	if got := both.CacheCost(0, 800_000, config.ProviderOpenAI); got != 0.8 {
		t.Errorf("cacheReadPerMTok and cachedInputPerMTok: %v, want 0.8 (cacheReadPerMTok's)", got)
	}
	plain := config.Pricing{InputPerMTok: 2, OutputPerMTok: 8}
	if got := plain.CacheCost(0, 800_000, config.ProviderOpenAI); got != 1.6 {
		t.Errorf("cost of cached input without a cached price: %v, want 1.6 (the input price)", got)
	}
	if got := plain.CacheCost(0, 800_000, config.ProviderAnthropic); got < 0.16-1e-12 || got > 0.16+1e-12 {
		t.Errorf("cost of an Anthropic cache read without a price: %v, want 0.16 (a tenth of the input price)", got)
	}
}

// TestProviderAndCachePrices: the provider is inferred from a base URL on
// api.anthropic.com and said explicitly wins; a profile's provider and
// thinking settings override the file's; cache prices default to 1.25
// and 0.1 times the input price, and set ones win (0 included).
func TestProviderAndCachePrices(t *testing.T) {
	for _, tc := range []struct {
		m    config.Model
		want string
	}{
		{config.Model{}, config.ProviderOpenAI},
		{config.Model{BaseURL: "http://127.0.0.1:11434/v1"}, config.ProviderOpenAI},
		{config.Model{BaseURL: "https://api.anthropic.com"}, config.ProviderAnthropic},
		{config.Model{BaseURL: "https://API.anthropic.com:443/v1/"}, config.ProviderAnthropic},
		{config.Model{BaseURL: "https://api.anthropic.com.example.org/v1"}, config.ProviderOpenAI},
		{config.Model{Provider: config.ProviderOpenAI, BaseURL: "https://api.anthropic.com/v1"}, config.ProviderOpenAI},
		{config.Model{Provider: config.ProviderAnthropic, BaseURL: "http://127.0.0.1:9"}, config.ProviderAnthropic},
	} {
		if got := tc.m.ResolvedProvider(); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.m, got, tc.want)
		}
	}
	c, _, err := config.Parse([]byte(`{"model": {"provider": "openai", "model": "a", "thinking": "off"},
  "agents": {"list": [{"id": "c", "model": {"provider": "anthropic", "thinkingBudget": 4096}}]}}`), "config.json")
	if err != nil {
		t.Fatal(err)
	}
	eff, _ := c.Effective("c")
	if m := eff.Model; m.ResolvedProvider() != config.ProviderAnthropic || m.Thinking != "off" || m.ThinkingBudget != 4096 {
		t.Errorf("profile c: %+v", m)
	}
	p := config.Pricing{InputPerMTok: 3, OutputPerMTok: 15}
	if got := p.CacheCost(1_000_000, 1_000_000, config.ProviderAnthropic); got != 3*1.25+3*0.1 {
		t.Errorf("default cache prices: %v", got)
	}
	zero, four := 0.0, 4.0
	p.CacheReadPerMTok, p.CacheWritePerMTok = &zero, &four
	if got := p.CacheCost(1_000_000, 1_000_000, config.ProviderAnthropic); got != 4 {
		t.Errorf("set cache prices: %v", got)
	}
}
