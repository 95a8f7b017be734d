package openaicompat_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/openaicompat"
	"github.com/acpgate/acpgate/testdata/fakellm"
)

// TestListModels: GET /models in the endpoint's order; an error status is
// a provider error, not retried.
func TestListModels(t *testing.T) {
	srv := fakellm.Start()
	defer srv.Close()
	srv.SetModels("m-one", "m-two")
	p := srv.Provider(t, openaicompat.Config{}).(*openaicompat.Provider)
	models, err := p.ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range models {
		ids = append(ids, m.ID)
	}
	if !slices.Equal(ids, []string{"m-one", "m-two"}) {
		t.Errorf("models %v", ids)
	}
	srv.FailModels(http.StatusInternalServerError)
	before := srv.ModelsRequests()
	if _, err := p.ListModels(context.Background()); !errors.Is(err, gateway.ErrProvider) {
		t.Errorf("failing /models: %v", err)
	}
	if n := srv.ModelsRequests() - before; n != 1 {
		t.Errorf("%d requests for a failing /models, want 1 (no retries)", n)
	}
}
