package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/acpgate/acpgate/acp/config"
	"github.com/acpgate/acpgate/acp/secrets"
)

// TestModelsCache: one provider per distinct settings, shared; a failure
// is not cached; flags override the file field by field.
func TestModelsCache(t *testing.T) {
	t.Parallel()
	env := map[string]string{}
	res := &secrets.Resolver{Redactor: secrets.NewRedactor(), LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	m := newModels(cliConfig{baseURL: "http://127.0.0.1:1/v1"}, res, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx := context.Background()

	if p, err := m.provider(ctx, config.Model{}); p != nil || err != nil {
		t.Errorf("no model name: %v, %v; want no provider", p, err)
	}
	a1, err := m.provider(ctx, config.Model{Model: "a"})
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := m.provider(ctx, config.Model{Model: "a", BaseURL: "http://ignored.example/v1"}) // the flag wins
	b, _ := m.provider(ctx, config.Model{Model: "b"})
	if a1 != a2 || a1 == b {
		t.Errorf("same settings must share a provider, different ones not: %p %p %p", a1, a2, b)
	}
	if got := m.settings(config.Model{Model: "a", BaseURL: "http://file/v1"}); got.BaseURL != "http://127.0.0.1:1/v1" || got.Model != "a" {
		t.Errorf("settings %+v", got)
	}

	keyed := config.Model{Model: "k", APIKey: "secret://env/MODEL_KEY"}
	if _, err := m.provider(ctx, keyed); !errors.Is(err, secrets.ErrNotSet) {
		t.Fatalf("unresolvable key: %v", err)
	}
	env["MODEL_KEY"] = "sk-resolved-later-0123"
	if p, err := m.provider(ctx, keyed); p == nil || err != nil {
		t.Errorf("after the key is set: %v, %v (a failure must not be cached)", p, err)
	}
}
