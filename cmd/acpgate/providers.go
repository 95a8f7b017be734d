//go:build !nomodels

package main

import (
	"net/http"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/anthropic"
	"github.com/acpgate/acpgate/gateway/openaicompat"
	"github.com/acpgate/acpgate/internal/base/telemetry"
	"github.com/acpgate/acpgate/internal/inputs/config"
)

// This file is the one place the binary builds the model SDKs in: a build
// with the nomodels tag (make demo's) leaves it out for
// providers_nomodels.go, since the demo needs no model and the SDKs are
// most of a first build's time (docs/benchmarks.md).

// modelProviders reports whether this build can reach a model.
const modelProviders = true

// newProvider makes the provider of model settings s, whose API key and
// headers are resolved already.
func newProvider(s config.Model, apiKey string, headers map[string]string) (gateway.Provider, error) {
	switch s.ResolvedProvider() {
	case config.ProviderAnthropic:
		return anthropic.New(anthropic.Config{BaseURL: s.BaseURL, APIKey: apiKey, Model: s.Model, Headers: headers, Thinking: s.Thinking, ThinkingBudget: s.ThinkingBudget,
			NoImages: isFalse(s.Vision), HTTPClient: modelHTTPClient()})
	default:
		return openaicompat.New(openaicompat.Config{BaseURL: s.BaseURL, APIKey: apiKey, Model: s.Model, Headers: headers, CacheKey: cacheKeyMode(s.PromptCacheKey),
			NoImages: isFalse(s.Vision), Audio: s.Audio != nil && *s.Audio, HTTPClient: modelHTTPClient()})
	}
}

// isFalse reports whether an optional setting is set to false.
func isFalse(set *bool) bool { return set != nil && !*set }

// modelHTTPClient is the HTTP client of a model endpoint: the default
// transport, with the trace context of each request (the turn's, or the
// model request span's) in its traceparent header, and each retry an
// event of the request's span (telemetry.Transport).
func modelHTTPClient() *http.Client {
	return &http.Client{Transport: telemetry.Transport(nil)}
}

// cacheKeyMode is the provider's prompt_cache_key mode for
// model.promptCacheKey (nil: the provider's default).
func cacheKeyMode(set *bool) openaicompat.CacheKeyMode {
	switch {
	case set == nil:
		return openaicompat.CacheKeyAuto
	case *set:
		return openaicompat.CacheKeyAlways
	}
	return openaicompat.CacheKeyNever
}
