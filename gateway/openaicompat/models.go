package openaicompat

import (
	"context"
	"encoding/json"

	"github.com/openai/openai-go/v3/option"

	"github.com/acpgate/acpgate/gateway"
)

var _ gateway.ModelLister = (*Provider)(nil)

// ListModels implements gateway.ModelLister: the models the endpoint lists
// (GET /models), in its order, with their context window where the entry
// carries one (see contextWindow). It is not retried: a caller that must
// not wait long bounds it with ctx.
func (p *Provider) ListModels(ctx context.Context) ([]gateway.ModelInfo, error) {
	page, err := p.client.Models.List(ctx, option.WithMaxRetries(0))
	if err != nil {
		return nil, p.explain(err)
	}
	models := make([]gateway.ModelInfo, 0, len(page.Data))
	for _, m := range page.Data {
		if m.ID != "" {
			models = append(models, gateway.ModelInfo{ID: m.ID, ContextWindow: contextWindow(m.RawJSON())})
		}
	}
	return models, nil
}

// windowFields are the fields of a GET /models entry that endpoints put
// a model's context window in, most specific first: LM Studio's
// loaded_context_length (the context the model is loaded with) before its
// max_context_length; OpenRouter's and Together's context_length; vLLM's
// max_model_len; Groq's context_window. Not llama.cpp's meta.n_ctx_train,
// the length the model was trained with, which the server may not run.
var windowFields = []string{"loaded_context_length", "context_length", "max_model_len", "context_window", "max_context_length"}

// contextWindow returns the context window a GET /models entry carries (0:
// none, or not a positive integer).
func contextWindow(entry string) int {
	var fields map[string]json.RawMessage
	if json.Unmarshal([]byte(entry), &fields) != nil {
		return 0
	}
	for _, name := range windowFields {
		var n float64
		if raw, ok := fields[name]; ok && json.Unmarshal(raw, &n) == nil && n >= 1 && n <= 1<<31-1 && n == float64(int(n)) {
			return int(n)
		}
	}
	return 0
}
