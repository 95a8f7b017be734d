package openaicompat

import (
	"context"

	"github.com/openai/openai-go/v3/option"

	"github.com/acpgate/acpgate/gateway"
)

var _ gateway.ModelLister = (*Provider)(nil)

// ListModels implements gateway.ModelLister: the models the endpoint lists
// (GET /models), in its order. It is not retried: a caller that must not
// wait long bounds it with ctx.
func (p *Provider) ListModels(ctx context.Context) ([]gateway.ModelInfo, error) {
	page, err := p.client.Models.List(ctx, option.WithMaxRetries(0))
	if err != nil {
		return nil, p.explain(err)
	}
	models := make([]gateway.ModelInfo, 0, len(page.Data))
	for _, m := range page.Data {
		if m.ID != "" {
			models = append(models, gateway.ModelInfo{ID: m.ID})
		}
	}
	return models, nil
}
