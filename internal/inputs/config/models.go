package config

import (
	"encoding/json"
	"net/url"
	"strings"
)

// The providers, the APIs a model endpoint speaks (Model.Provider).
const (
	// ProviderOpenAI is OpenAI-compatible Chat Completions.
	ProviderOpenAI = "openai"
	// ProviderAnthropic is Anthropic's Messages API.
	ProviderAnthropic = "anthropic"
)

// anthropicHost is the host whose base URLs infer ProviderAnthropic.
const anthropicHost = "api.anthropic.com"

// ResolvedProvider returns Provider, or, when it is "", ProviderAnthropic
// for a BaseURL on api.anthropic.com and ProviderOpenAI otherwise.
func (m Model) ResolvedProvider() string {
	if m.Provider != "" {
		return m.Provider
	}
	if u, err := url.Parse(m.BaseURL); err == nil && strings.EqualFold(u.Hostname(), anthropicHost) {
		return ProviderAnthropic
	}
	return ProviderOpenAI
}

// DefaultCurrency is the currency of a [Pricing] that names none.
const DefaultCurrency = "USD"

// ModelChoice is one entry of model.choices: another model of the same
// endpoint (same baseUrl, apiKey and headers) that a session's model
// picker offers. In the file it is a model id, or an object with "id" and
// optional "name", "description", "contextWindow" and "pricing"; it is
// written back as the object. A ModelChoice is plain data: not safe for
// concurrent modification.
type ModelChoice struct {
	// ID is the model name sent to the endpoint (non-empty).
	ID string `json:"id"`
	// Name is what the picker shows ("": the ID).
	Name string `json:"name,omitzero"`
	// Description is the picker's hint for it.
	Description string `json:"description,omitzero"`
	// ContextWindow is this model's context window in tokens (0: the
	// model settings' contextWindow).
	ContextWindow int `json:"contextWindow,omitzero"`
	// Pricing is the price of this model's tokens (nil: unknown).
	Pricing *Pricing `json:"pricing,omitzero"`
}

// modelChoice is ModelChoice without its methods, for decoding.
type modelChoice ModelChoice

// UnmarshalJSON reads a choice as a model id or as an object. A value of
// neither kind leaves the choice empty without an error: [Parse] has
// reported it already (the schema), and an error here would stop
// encoding/json from decoding the rest of the file.
func (c *ModelChoice) UnmarshalJSON(data []byte) error {
	var id string
	if json.Unmarshal(data, &id) == nil {
		*c = ModelChoice{ID: id}
		return nil
	}
	var o modelChoice
	_ = json.Unmarshal(data, &o) // see above
	*c = ModelChoice(o)
	return nil
}

// Pricing is the price of a model's tokens, per million, in Currency.
// A Pricing value is plain data: not safe for concurrent modification.
type Pricing struct {
	// InputPerMTok is the price of a million input (prompt) tokens (>= 0).
	InputPerMTok float64 `json:"inputPerMTok"`
	// OutputPerMTok is the price of a million output tokens (>= 0).
	OutputPerMTok float64 `json:"outputPerMTok"`
	// CacheWritePerMTok and CacheReadPerMTok are the prices of a million
	// input tokens written to and read from the prompt cache (>= 0); nil:
	// DefaultCacheWrite times InputPerMTok, and for reads
	// CachedInputPerMTok, else CacheReadDefault(provider) times
	// InputPerMTok.
	CacheWritePerMTok *float64 `json:"cacheWritePerMTok,omitempty"`
	CacheReadPerMTok  *float64 `json:"cacheReadPerMTok,omitempty"`
	// CachedInputPerMTok is CacheReadPerMTok under OpenAI's name (the
	// price of its cached_tokens); CacheReadPerMTok wins when both are set.
	CachedInputPerMTok *float64 `json:"cachedInputPerMTok,omitempty"`
	// Currency is an ISO 4217 code; "" means DefaultCurrency.
	Currency string `json:"currency,omitzero"`
}

// Cost returns the price of input and output tokens.
func (p Pricing) Cost(input, output int) float64 {
	return (float64(input)*p.InputPerMTok + float64(output)*p.OutputPerMTok) / 1e6
}

// DefaultCacheWrite is the default price of a cache write, as a multiple
// of the input price (Anthropic's).
const DefaultCacheWrite = 1.25

// CacheReadDefault is the default price of a cache read, as a multiple of
// the input price, for a provider (Model.ResolvedProvider): Anthropic's
// 0.1; for an OpenAI-compatible endpoint, whose discount depends on the
// model and the server, 1 (priced as input unless a price is set).
func CacheReadDefault(provider string) float64 {
	if provider == ProviderAnthropic {
		return 0.1
	}
	return 1
}

// CacheCost returns the price of input tokens written to (write) and read
// from (read) the prompt cache of provider's endpoint (see the fields'
// defaults).
func (p Pricing) CacheCost(write, read int, provider string) float64 {
	w, r := p.InputPerMTok*DefaultCacheWrite, p.InputPerMTok*CacheReadDefault(provider)
	if p.CacheWritePerMTok != nil {
		w = *p.CacheWritePerMTok
	}
	switch {
	case p.CacheReadPerMTok != nil:
		r = *p.CacheReadPerMTok
	case p.CachedInputPerMTok != nil:
		r = *p.CachedInputPerMTok
	}
	return (float64(write)*w + float64(read)*r) / 1e6
}

// CurrencyCode returns Currency, or DefaultCurrency when it is "".
func (p Pricing) CurrencyCode() string {
	if p.Currency == "" {
		return DefaultCurrency
	}
	return p.Currency
}
