package gateway

import "strings"

// The model APIs' default endpoints, and the one rule for an Anthropic
// base URL. They live here, not in the providers' packages, so that what
// only names an endpoint (setup, the provider list, flags' help) does not
// build the model SDKs.
const (
	// OpenAIBaseURL is OpenAI's API, the OpenAI-compatible provider's
	// default base URL.
	OpenAIBaseURL = "https://api.openai.com/v1"
	// AnthropicBaseURL is Anthropic's API root, the Anthropic provider's
	// default.
	AnthropicBaseURL = "https://api.anthropic.com"
)

// AnthropicRootURL is the API root of Anthropic base URL u:
// AnthropicBaseURL for "", and u without trailing slashes and without a
// final /v1 (the OpenAI-compatible habit of ending a base URL so).
func AnthropicRootURL(u string) string {
	if u == "" {
		return AnthropicBaseURL
	}
	u = strings.TrimRight(u, "/")
	return strings.TrimRight(strings.TrimSuffix(u, "/v1"), "/")
}
