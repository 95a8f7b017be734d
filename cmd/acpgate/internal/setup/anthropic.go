package setup

import (
	"context"
	"net/http"
	"net/url"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/internal/inputs/config"
)

// This file checks an Anthropic API: its model list (GET /v1/models, the
// key in x-api-key, an anthropic-version header), in Anthropic's shape
// (data[].id, has_more, last_id).

// anthropicVersion is the anthropic-version the key check sends: the
// API's long-standing one, which every key and model list answers.
const anthropicVersion = "2023-06-01"

// maxModelPages bounds the pages of an Anthropic model list read.
const maxModelPages = 10

// checkAnthropic checks the Anthropic API whose root is baseURL (a final
// /v1 is dropped) with key ("": none) and returns its model ids, every
// page, in its order. A failure is an *EndpointError of API
// config.ProviderAnthropic. It is safe for concurrent use.
func checkAnthropic(ctx context.Context, client *http.Client, baseURL, key string) ([]string, error) {
	headers := map[string]string{"anthropic-version": anthropicVersion}
	if key != "" {
		headers["x-api-key"] = key
	}
	models := []string{}
	after := ""
	for range maxModelPages {
		u := gateway.AnthropicRootURL(baseURL) + "/v1/models?limit=1000"
		if after != "" {
			u += "&after_id=" + url.QueryEscape(after)
		}
		page, err := getModels(ctx, client, u, headers, config.ProviderAnthropic)
		if err != nil {
			return nil, err
		}
		models = append(models, page.ids...)
		if !page.hasMore || page.lastID == "" {
			break
		}
		after = page.lastID
	}
	return models, nil
}
