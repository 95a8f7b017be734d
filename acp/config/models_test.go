package config_test

import (
	"reflect"
	"testing"

	"github.com/acpgate/acpgate/acp/config"
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

// TestCachedInputPrice: input tokens served from a prompt cache cost
// cachedInputPerMTok, parsed from the file; without it they cost the
// input price.
func TestCachedInputPrice(t *testing.T) {
	c, _, err := config.Parse([]byte(`{"model": {"pricing": {"inputPerMTok": 2, "outputPerMTok": 8, "cachedInputPerMTok": 0.5}}}`), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Model.Pricing.CachedInputCost(800_000); got != 0.4 {
		t.Errorf("cost of cached input with a cached price: %v, want 0.4", got)
	}
	if got := (config.Pricing{InputPerMTok: 2, OutputPerMTok: 8}).CachedInputCost(800_000); got != 1.6 {
		t.Errorf("cost of cached input without a cached price: %v, want 1.6 (the input price)", got)
	}
}
