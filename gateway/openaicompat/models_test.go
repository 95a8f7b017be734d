package openaicompat_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/openaicompat"
	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
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

// TestListModelsContextWindow: an entry's context length, in whichever
// field its endpoint uses, is the model's context window; a value that is
// not a positive integer is none.
func TestListModelsContextWindow(t *testing.T) {
	srv := fakellm.Start()
	defer srv.Close()
	fields := map[string]map[string]any{
		"openrouter": {"context_length": 128000},
		"lmstudio":   {"max_context_length": 32768, "loaded_context_length": 8192},
		"vllm":       {"max_model_len": 4096},
		"groq":       {"context_window": 131072},
		"mistral":    {"max_context_length": 32000},
		"bad":        {"context_length": "big"},
		"fraction":   {"context_length": 1.5},
		"negative":   {"context_length": -1},
		"llamacpp":   {"meta": map[string]any{"n_ctx_train": 131072}},
		"plain":      nil,
	}
	want := map[string]int{"openrouter": 128000, "lmstudio": 8192, "vllm": 4096, "groq": 131072, "mistral": 32000}
	var ids []string
	for id, f := range fields {
		ids = append(ids, id)
		srv.SetModelFields(id, f)
	}
	srv.SetModels(ids...)
	models, err := srv.Provider(t, openaicompat.Config{}).(*openaicompat.Provider).ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range models {
		if m.ContextWindow != want[m.ID] {
			t.Errorf("%s: window %d, want %d", m.ID, m.ContextWindow, want[m.ID])
		}
	}
}
