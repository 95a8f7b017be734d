package acp_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/anthropic"
	"github.com/acpgate/acpgate/gateway/openaicompat"
	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/internal/inputs/secrets"
	"github.com/acpgate/acpgate/internal/testsupport/fake/fakeanthropic"
	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// providerList is the result of providers/list as the ACP schema has it.
type providerList struct {
	Providers []struct {
		ProviderID string   `json:"providerId"`
		Supported  []string `json:"supported"`
		Required   *bool    `json:"required"`
		Current    *struct {
			APIType string         `json:"apiType"`
			BaseURL string         `json:"baseUrl"`
			Meta    map[string]any `json:"_meta"`
		} `json:"current"`
	} `json:"providers"`
}

// listProviders calls providers/list and decodes its one provider.
func listProviders(t *testing.T, h *harness) providerList {
	t.Helper()
	r := h.call("providers/list", map[string]any{})
	var l providerList
	if r.Error != nil || json.Unmarshal(r.Result, &l) != nil || len(l.Providers) != 1 {
		t.Fatalf("providers/list: %s", r.Raw)
	}
	if p := l.Providers[0]; p.ProviderID != "main" || strings.Join(p.Supported, ",") != "openai,anthropic" || p.Required == nil || *p.Required {
		t.Errorf("provider %s", r.Raw)
	}
	return l
}

// TestProviders: providers/list shows the configured endpoint; set
// sends every session's next turn to another endpoint with the given
// headers and without the configured key (a turn in progress finishes on
// the old one), a header value is redacted from the client, the log and
// the session log, and list names the header with its value redacted;
// bad params are invalid params naming the member, never quoting a
// header value; disable leaves sessions without a model (prompts say how
// to set one up) and list shows null; set brings the model back. Without
// models built from settings, the methods are not found.
func TestProviders(t *testing.T) {
	t.Parallel()
	held, started := make(chan struct{}), make(chan struct{})
	one := fakellm.Start(fakellm.Turn{Text: "from one"}, fakellm.Turn{Text: "one, held", Started: started, Hold: held})
	defer one.Close()
	const secret = "team-token-7f3a9c2e"
	two := fakellm.Start(fakellm.Turn{Text: "from two"}, fakellm.Turn{Text: "the token is " + secret}, fakellm.Turn{Text: "back"})
	defer two.Close()
	redactor := secrets.NewRedactor()
	logs := &testbin.SyncBuffer{}
	h := newHarness(t, acp.Options{
		Models:         newEndpointModels(),
		Config:         configOf(t, `{"model": {"baseUrl": "`+one.URL+`", "model": "`+fakellm.DefaultModel+`", "apiKey": "sk-configured-key", "headers": {"X-Conf": "c"}}}`),
		Secrets:        &secrets.Resolver{Redactor: redactor},
		Logger:         slog.New(redactor.Handler(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
		NoModelMessage: "Set up a model first.",
	}, nil)
	sid := h.newSession().SessionId
	if _, ups := h.prompt(sid, "hello"); agentText(ups) != "from one" {
		t.Fatalf("first turn: %q", agentText(ups))
	}
	l := listProviders(t, h)
	if c := l.Providers[0].Current; c == nil || c.APIType != "openai" || c.BaseURL != one.URL || mustJSON(c.Meta) != `{"acpgate":{"headers":{"X-Conf":"[REDACTED]"}}}` {
		t.Errorf("configured provider: %s", mustJSON(l))
	}

	// A turn in progress when the endpoint changes finishes on the old one.
	done := make(chan []acpsdk.SessionUpdate, 1)
	go func() { _, ups := h.prompt(sid, "slow"); done <- ups }()
	<-started
	if r := h.call("providers/set", map[string]any{"providerId": "main", "apiType": "openai", "baseUrl": two.URL, "headers": map[string]string{"X-Team-Token": secret}}); r.Error != nil || string(r.Result) != "{}" {
		t.Fatalf("providers/set: %s", r.Raw)
	}
	close(held)
	if ups := <-done; agentText(ups) != "one, held" {
		t.Errorf("the turn in progress: %q", agentText(ups))
	}
	if _, ups := h.prompt(sid, "hello again"); agentText(ups) != "from two" {
		t.Errorf("the next turn: %q", agentText(ups))
	}
	got := two.Requests()[0].Header
	if got.Get("X-Team-Token") != secret || strings.Contains(got.Get("Authorization"), "sk-configured-key") || got.Get("X-Conf") != "" {
		t.Errorf("the new endpoint got headers %v", got)
	}
	l = listProviders(t, h)
	if c := l.Providers[0].Current; c == nil || c.BaseURL != two.URL || mustJSON(c.Meta) != `{"acpgate":{"headers":{"X-Team-Token":"[REDACTED]"}}}` {
		t.Errorf("provider after set: %s", mustJSON(l))
	}
	// A new session is routed the same way; the model repeating the
	// header value is redacted.
	other := h.newSession().SessionId
	if _, ups := h.prompt(other, "what is the token?"); agentText(ups) != "the token is [REDACTED]" {
		t.Errorf("a new session's turn: %q", agentText(ups))
	}

	for _, tc := range []struct {
		params map[string]any
		path   string
	}{
		{map[string]any{"apiType": "openai", "baseUrl": two.URL}, "providerId"},
		{map[string]any{"providerId": "other", "apiType": "openai", "baseUrl": two.URL}, "providerId"},
		{map[string]any{"providerId": "main", "baseUrl": two.URL}, "apiType"},
		{map[string]any{"providerId": "main", "apiType": "azure", "baseUrl": two.URL}, "apiType"},
		{map[string]any{"providerId": "main", "apiType": "openai"}, "baseUrl"},
		{map[string]any{"providerId": "main", "apiType": "openai", "baseUrl": "ftp://127.0.0.1/v1"}, "baseUrl"},
		{map[string]any{"providerId": "main", "apiType": "openai", "baseUrl": "http://example.com/v1"}, "baseUrl"},
		{map[string]any{"providerId": "main", "apiType": "openai", "baseUrl": "https://user:pw-9d8e7f@example.com/v1"}, "baseUrl"},
		{map[string]any{"providerId": "main", "apiType": "openai", "baseUrl": two.URL, "headers": "X: y"}, "headers"},
		{map[string]any{"providerId": "main", "apiType": "openai", "baseUrl": two.URL, "headers": map[string]any{"X-N": 1}}, "headers.X-N"},
		{map[string]any{"providerId": "main", "apiType": "openai", "baseUrl": two.URL, "headers": map[string]any{"bad name": "v"}}, "headers"},
		{map[string]any{"providerId": "main", "apiType": "openai", "baseUrl": two.URL, "headers": map[string]any{"X-L": "line-one\nline-two-9d8e"}}, "headers.X-L"},
		{map[string]any{"providerId": "main", "apiType": "openai", "baseUrl": two.URL, "headers": map[string]any{"X-E": "Bearer ${HOME}"}}, "headers.X-E"},
		{map[string]any{"providerId": "main", "apiType": "openai", "baseUrl": two.URL, "headers": map[string]any{"X-S": "secret://env/HOME"}}, "headers.X-S"},
	} {
		r := h.call("providers/set", tc.params)
		if r.Error == nil || r.Error.Code != -32602 || r.Error.Data.Path != tc.path {
			t.Errorf("set %s: %s, want -32602 at %s", mustJSON(tc.params), r.Raw, tc.path)
		}
		for _, leak := range []string{"pw-9d8e7f", "line-two-9d8e", "${HOME}", "secret://env"} {
			if strings.Contains(r.Raw, leak) {
				t.Errorf("the error quotes %q: %s", leak, r.Raw)
			}
		}
	}
	if c := listProviders(t, h).Providers[0].Current; c == nil || c.BaseURL != two.URL {
		t.Errorf("a refused set changed the endpoint: %+v", c)
	}

	// Disable: no model until the next set.
	for _, id := range []string{"not-ours", "main"} {
		if r := h.call("providers/disable", map[string]any{"providerId": id}); r.Error != nil || string(r.Result) != "{}" {
			t.Fatalf("providers/disable %s: %s", id, r.Raw)
		}
	}
	if r := h.call("providers/disable", map[string]any{}); r.Error == nil || r.Error.Data.Path != "providerId" {
		t.Errorf("disable without providerId: %s", r.Raw)
	}
	if l := listProviders(t, h); l.Providers[0].Current != nil {
		t.Errorf("current after disable: %s", mustJSON(l))
	}
	if _, ups := h.prompt(sid, "anyone?"); !strings.Contains(agentText(ups), "Set up a model first.") {
		t.Errorf("a prompt after disable: %q", agentText(ups))
	}
	if len(two.Requests()) != 2 {
		t.Errorf("the disabled endpoint got %d requests, want 2", len(two.Requests()))
	}
	h.call("providers/set", map[string]any{"providerId": "main", "apiType": "openai", "baseUrl": two.URL})
	if _, ups := h.prompt(sid, "back?"); agentText(ups) != "back" {
		t.Errorf("after set again: %q", agentText(ups))
	}
	if got := two.Requests()[2].Header.Get("X-Team-Token"); got != "" {
		t.Errorf("a set without headers still sends X-Team-Token %q", got)
	}

	// The header value reached neither the client, the log nor the disk.
	if strings.Contains(h.wire.String(), secret) || strings.Contains(logs.String(), secret) {
		t.Errorf("the header value leaked: wire %v, log %v", strings.Contains(h.wire.String(), secret), strings.Contains(logs.String(), secret))
	}
	for _, s := range []acpsdk.SessionId{sid, other} {
		if b, _ := os.ReadFile(filepath.Join(h.opts.Store.Dir(), "sessions", string(s), "log.jsonl")); strings.Contains(string(b), secret) {
			t.Errorf("the header value is in session %s's log", s)
		}
	}

	// Without models built from settings there is nothing to route.
	plain := newHarness(t, acp.Options{Provider: scripted(says("x"))}, nil)
	for _, m := range []string{"providers/list", "providers/set", "providers/disable"} {
		if r := plain.call(m, map[string]any{"providerId": "main"}); r.Error == nil || r.Error.Code != -32601 {
			t.Errorf("%s without Models: %s", m, r.Raw)
		}
	}
}

// TestProvidersAnthropic: providers/list reports apiType anthropic for a
// model configured on api.anthropic.com (and its default base URL), and
// providers/set with apiType anthropic sends the next turn to an
// Anthropic Messages endpoint, without the configured key.
func TestProvidersAnthropic(t *testing.T) {
	t.Parallel()
	claude := fakeanthropic.Start(fakeanthropic.Turn{Blocks: []fakeanthropic.Block{fakeanthropic.Text("from claude")}})
	defer claude.Close()
	built := func(_ context.Context, m config.Model) (gateway.Provider, error) {
		if m.ResolvedProvider() == config.ProviderAnthropic {
			return anthropic.New(anthropic.Config{BaseURL: m.BaseURL, APIKey: m.APIKey, Model: m.Model, Headers: m.Headers, MaxRetries: anthropic.NoRetries})
		}
		return openaicompat.New(openaicompat.Config{BaseURL: m.BaseURL, APIKey: m.APIKey, Model: m.Model, Headers: m.Headers, MaxRetries: openaicompat.NoRetries})
	}
	h := newHarness(t, acp.Options{Providers: built,
		Config: configOf(t, `{"model": {"baseUrl": "https://api.anthropic.com/v1", "model": "`+fakeanthropic.DefaultModel+`", "apiKey": "sk-ant-configured"}}`)}, nil)
	if c := listProviders(t, h).Providers[0].Current; c == nil || c.APIType != "anthropic" || c.BaseURL != "https://api.anthropic.com" {
		t.Errorf("configured provider: %+v", c)
	}
	if r := h.call("providers/set", map[string]any{"providerId": "main", "apiType": "anthropic", "baseUrl": claude.URL, "headers": map[string]string{"X-Api-Key": "sk-ant-client"}}); r.Error != nil {
		t.Fatalf("providers/set: %s", r.Raw)
	}
	if c := listProviders(t, h).Providers[0].Current; c == nil || c.APIType != "anthropic" || c.BaseURL != claude.URL {
		t.Errorf("provider after set: %+v", c)
	}
	sid := h.newSession().SessionId
	if _, ups := h.prompt(sid, "hello"); agentText(ups) != "from claude" {
		t.Fatalf("turn: %q", agentText(ups))
	}
	got := claude.Requests()[0].Header
	if got.Get("X-Api-Key") != "sk-ant-client" || got.Get("Authorization") != "" {
		t.Errorf("the endpoint got headers %v", got)
	}
}
