// Package setup is `acpgate setup`: it picks a model provider, checks its
// endpoint and API key (GET /models; Anthropic's GET /v1/models), picks the default model from the
// endpoint's list, and writes the configuration file's model block with
// the key in a file of its own (mode 0600), referenced as secret://file/.
// It asks in a terminal and takes flags in scripts.
package setup

import (
	"strings"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/internal/inputs/config"
)

// Provider is one entry of the catalogue `acpgate setup` offers. It is
// plain data.
type Provider struct {
	// ID is the --provider value and the name of the key file.
	ID string
	// Name is what the list shows.
	Name string
	// BaseURL is the endpoint; "" for the custom entry, whose URL the
	// user gives.
	BaseURL string
	// API is the API the endpoint speaks, as model.provider names it:
	// "" for OpenAI-compatible, config.ProviderAnthropic for Anthropic's
	// Messages API.
	API string
	// NeedsKey: the endpoint wants an API key. Without it a key is
	// optional (local servers, and the custom entry).
	NeedsKey bool
	// Local: the server runs on this machine; setup finds it running by
	// probing BaseURL.
	Local bool
	// KeyURL is where to get an API key.
	KeyURL string
	// KeyPath, when set, is a path under BaseURL that checks the API key
	// (GET answers 401 to a bad one), for endpoints whose model list is
	// public.
	KeyPath string
}

// Custom is the ID of the catalogue's entry for any other
// OpenAI-compatible endpoint.
const Custom = "custom"

// Catalogue returns the providers setup offers, in the order of its list:
// every endpoint acpgate talks to. A new provider is one more entry here.
func Catalogue() []Provider {
	return []Provider{
		{ID: "openai", Name: "OpenAI", BaseURL: gateway.OpenAIBaseURL, NeedsKey: true, KeyURL: "https://platform.openai.com/api-keys"},
		{ID: "anthropic", Name: "Anthropic", BaseURL: gateway.AnthropicBaseURL, API: config.ProviderAnthropic, NeedsKey: true, KeyURL: "https://console.anthropic.com/settings/keys"},
		{ID: "openrouter", Name: "OpenRouter", BaseURL: "https://openrouter.ai/api/v1", NeedsKey: true, KeyURL: "https://openrouter.ai/keys", KeyPath: "/key"},
		{ID: "gemini", Name: "Google Gemini", BaseURL: "https://generativelanguage.googleapis.com/v1beta/openai", NeedsKey: true, KeyURL: "https://aistudio.google.com/apikey"},
		{ID: "ollama", Name: "Ollama", BaseURL: "http://127.0.0.1:11434/v1", Local: true},
		{ID: "lmstudio", Name: "LM Studio", BaseURL: "http://127.0.0.1:1234/v1", Local: true},
		{ID: Custom, Name: "Another OpenAI-compatible endpoint"},
	}
}

// find returns the provider with id.
func find(providers []Provider, id string) (Provider, bool) {
	for _, p := range providers {
		if p.ID == id {
			return p, true
		}
	}
	return Provider{}, false
}

// IDs lists the catalogue's IDs, for the usage.
func IDs() string { return ids(Catalogue()) }

// ids lists the providers' IDs, for messages.
func ids(providers []Provider) string {
	var s []string
	for _, p := range providers {
		s = append(s, p.ID)
	}
	return strings.Join(s, ", ")
}

// byURL returns the provider whose endpoint is baseURL; else the first
// that speaks api (a model.provider name; "" for OpenAI-compatible), and
// for an OpenAI-compatible one the custom entry.
func byURL(providers []Provider, baseURL, api string) Provider {
	for _, p := range providers {
		if p.BaseURL != "" && trimURL(p.BaseURL) == trimURL(baseURL) {
			return p
		}
	}
	if api != "" {
		for _, p := range providers {
			if p.API == api {
				return p
			}
		}
	}
	custom, _ := find(providers, Custom)
	return custom
}

// trimURL is a base URL without its trailing slashes.
func trimURL(u string) string { return strings.TrimRight(u, "/") }
