package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/internal/inputs/secrets"
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

// TestModelsProviderAndKeys: the provider in force decides which
// environment key the settings carry (an OpenAI key never goes to an
// Anthropic endpoint, nor the other way), --provider wins over the file
// and an Anthropic base URL infers it; the provider built is the
// provider's; the environment's keys and commands stay apart.
func TestModelsProviderAndKeys(t *testing.T) {
	t.Parallel()
	c, err := parseFlags(nil, envMap{"OPENAI_API_KEY": "sk-openai", "ANTHROPIC_API_KEY": "sk-ant"}.get)
	if err != nil {
		t.Fatal(err)
	}
	m := newModels(c, &secrets.Resolver{Redactor: secrets.NewRedactor()}, slog.New(slog.DiscardHandler))
	for _, tc := range []struct {
		file      config.Model
		key, kind string
	}{
		{config.Model{Model: "gpt", APIKey: "sk-file"}, "sk-openai", "*openaicompat.Provider"},
		{config.Model{Model: "claude", BaseURL: "https://api.anthropic.com"}, "sk-ant", "*anthropic.Provider"},
		{config.Model{Model: "claude", Provider: config.ProviderAnthropic, BaseURL: "http://127.0.0.1:9"}, "sk-ant", "*anthropic.Provider"},
	} {
		s := m.settings(tc.file)
		p, err := m.Provider(context.Background(), s)
		if s.APIKey != tc.key || err != nil || fmt.Sprintf("%T", p) != tc.kind {
			t.Errorf("%+v: key %q, %T, %v; want %q, %s", tc.file, s.APIKey, p, err, tc.key, tc.kind)
		}
	}
	c, _ = parseFlags([]string{"--provider", "anthropic"}, func(string) string { return "" })
	if s := newModels(c, nil, slog.New(slog.DiscardHandler)).settings(config.Model{Provider: config.ProviderOpenAI, APIKey: "sk-file"}); s.ResolvedProvider() != config.ProviderAnthropic || s.APIKey != "sk-file" {
		t.Errorf("--provider over the file: %+v", s)
	}
	if _, err := parseFlags([]string{"--provider", "gemini"}, func(string) string { return "" }); err == nil {
		t.Error("--provider gemini accepted")
	}
	env := commandEnv([]string{"PATH=/bin", "OPENAI_API_KEY=a", "ANTHROPIC_API_KEY=b", "ANTHROPIC_API_KEY_HINT=c"})
	if !slices.Equal(env, []string{"PATH=/bin", "ANTHROPIC_API_KEY_HINT=c"}) {
		t.Errorf("command environment %v", env)
	}
}

// envMap is an environment; get looks a variable up in it.
type envMap map[string]string

func (e envMap) get(k string) string { return e[k] }
