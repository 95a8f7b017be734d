package anthropic

import (
	"context"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/acpgate/acpgate/gateway"
)

var _ gateway.ModelLister = (*Provider)(nil)

// maxListedPages bounds the pages of one listing.
const maxListedPages = 10

// ListModels implements gateway.ModelLister: the models the API lists
// (GET /v1/models, every page up to maxListedPages), in its order, named
// by their display names. It is not retried: a caller that must not wait
// long bounds it with ctx.
func (p *Provider) ListModels(ctx context.Context) ([]gateway.ModelInfo, error) {
	page, err := p.client.Models.List(ctx, anthropic.ModelListParams{Limit: anthropic.Int(1000)}, option.WithMaxRetries(0))
	models := []gateway.ModelInfo{}
	for n := 0; err == nil && page != nil && n < maxListedPages; n++ {
		for _, m := range page.Data {
			if m.ID != "" {
				models = append(models, gateway.ModelInfo{ID: m.ID, Name: m.DisplayName})
			}
		}
		page, err = page.GetNextPage()
	}
	if err != nil {
		return nil, p.explain(err)
	}
	return models, nil
}
