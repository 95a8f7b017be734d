package setup

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/acpgate/acpgate/acp/config"
	"github.com/acpgate/acpgate/gateway/anthropic"
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
		u := anthropic.RootURL(baseURL) + "/v1/models?limit=1000"
		if after != "" {
			u += "&after_id=" + url.QueryEscape(after)
		}
		res, body, err := get(ctx, client, u, headers)
		if ee, ok := err.(*EndpointError); ok {
			ee.API = config.ProviderAnthropic
		}
		if err != nil {
			return nil, err
		}
		e := &EndpointError{URL: res.Request.URL.String(), Status: res.StatusCode, Detail: serverMessage(body), API: config.ProviderAnthropic}
		if err := e.classify(); err != nil {
			return nil, err
		}
		var list struct {
			Data *[]struct {
				ID string `json:"id"`
			} `json:"data"`
			HasMore bool   `json:"has_more"`
			LastID  string `json:"last_id"`
		}
		if err := json.Unmarshal(body, &list); err != nil || list.Data == nil {
			e.Kind, e.Detail = ErrWrongPath, "the answer is not a JSON object with a \"data\" list"
			return nil, e
		}
		for _, m := range *list.Data {
			if m.ID != "" {
				models = append(models, m.ID)
			}
		}
		if !list.HasMore || list.LastID == "" {
			break
		}
		after = list.LastID
	}
	return models, nil
}
