package acp_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/openaicompat"
	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
	"github.com/acpgate/acpgate/session"
)

// endpointModels is an acp.Models over real OpenAI-compatible providers:
// one per settings, the endpoints' lists in a gateway.Catalog by base URL.
type endpointModels struct {
	catalog *gateway.Catalog

	mu        sync.Mutex
	providers map[string]*openaicompat.Provider
}

// newEndpointModels lists endpoints' models through a catalog whose
// fetches may take a minute: session/new still waits at most 2 s for a
// list (acp's own bound), and a test that needs the list waits for it
// first (known).
func newEndpointModels() *endpointModels {
	return &endpointModels{catalog: gateway.NewCatalog(time.Minute), providers: map[string]*openaicompat.Provider{}}
}

// known fetches s's endpoint list and returns once it is in the catalog,
// so that a session opened next offers it whatever the machine's load.
func (e *endpointModels) known(t *testing.T, s config.Model) {
	t.Helper()
	p, err := e.build(s)
	if err != nil || p == nil {
		t.Fatalf("provider of %+v: %v", s, err)
	}
	<-e.catalog.Prefetch(context.Background(), s.BaseURL, p)
}

func (e *endpointModels) Settings(m config.Model) config.Model { return m }

func (e *endpointModels) Provider(_ context.Context, s config.Model) (gateway.Provider, error) {
	p, err := e.build(s)
	if p == nil {
		return nil, err // a typed nil must not become a non-nil interface
	}
	return p, err
}

func (e *endpointModels) build(s config.Model) (*openaicompat.Provider, error) {
	if s.Model == "" {
		return nil, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	key := s.BaseURL + " " + s.Model + " " + s.APIKey + " " + mustJSON(s.Headers)
	if p, ok := e.providers[key]; ok {
		return p, nil
	}
	p, err := openaicompat.New(openaicompat.Config{BaseURL: s.BaseURL, Model: s.Model, APIKey: s.APIKey, Headers: s.Headers, MaxRetries: openaicompat.NoRetries})
	if err != nil {
		return nil, err
	}
	e.providers[key] = p
	return p, nil
}

func (e *endpointModels) Listed(ctx context.Context, s config.Model) []gateway.ModelInfo {
	p, err := e.build(s)
	if err != nil || p == nil {
		return nil
	}
	return e.catalog.Models(ctx, s.BaseURL, p)
}

// selectOf returns the select config option id of opts.
func selectOf(t *testing.T, opts []acpsdk.SessionConfigOption, id string) *acpsdk.SessionConfigOptionSelect {
	t.Helper()
	for _, o := range opts {
		if o.Select != nil && string(o.Select.Id) == id {
			return o.Select
		}
	}
	t.Fatalf("no config option %q in %+v", id, opts)
	return nil
}

// valuesOf returns the values a select offers.
func valuesOf(s *acpsdk.SessionConfigOptionSelect) []string {
	var ids []string
	for _, o := range *s.Options.Ungrouped {
		ids = append(ids, string(o.Value))
	}
	return ids
}

// modelConfig is a configuration whose model is DefaultModel at llm, with
// two choices, the second priced.
func modelConfig(t *testing.T, llm *fakellm.Server, extra string) func() *config.Config {
	return configOf(t, `{"model": {"baseUrl": "`+llm.URL+`", "model": "`+fakellm.DefaultModel+`", "contextWindow": 100000`+extra+`,
  "choices": ["choice-x", {"id": "choice-y", "name": "Y", "description": "priced", "contextWindow": 500000, "pricing": {"inputPerMTok": 1000, "outputPerMTok": 2000, "currency": "EUR"}}]}}`)
}

// TestConfigOptionsModelPicker: session/new offers the configured model,
// model.choices and the endpoint's /models list, current value the
// session's model; set_config_option switches the model of the next
// prompt (the endpoint receives the new id), validates the id and the
// value, and is saved: a new Agent on the same store restores it on
// session/load and session/resume.
func TestConfigOptionsModelPicker(t *testing.T) {
	t.Parallel()
	llm := fakellm.Start(fakellm.Turn{Text: "one"}, fakellm.Turn{Text: "two"}, fakellm.Turn{Text: "three"}, fakellm.Turn{Text: "four"})
	defer llm.Close()
	llm.SetModels("listed-a", fakellm.DefaultModel, "choice-x", "listed-b")
	dir := t.TempDir()
	store, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	models := newEndpointModels()
	models.known(t, config.Model{BaseURL: llm.URL, Model: fakellm.DefaultModel})
	opts := acp.Options{Store: store, Models: models, Config: modelConfig(t, llm, "")}
	h := newHarness(t, opts, nil)
	resp := h.newSession()
	model := selectOf(t, resp.ConfigOptions, "model")
	want := []string{fakellm.DefaultModel, "choice-x", "choice-y", "listed-a", "listed-b"}
	if model.CurrentValue != fakellm.DefaultModel || !slices.Equal(valuesOf(model), want) || *model.Category != acpsdk.SessionConfigOptionCategoryModel {
		t.Fatalf("model option: current %q, values %v; want %q, %v", model.CurrentValue, valuesOf(model), fakellm.DefaultModel, want)
	}
	if mode := selectOf(t, resp.ConfigOptions, "mode"); mode.CurrentValue != "ask" || !slices.Equal(valuesOf(mode), []string{"ask", "auto"}) {
		t.Errorf("mode option: %q %v", mode.CurrentValue, valuesOf(mode))
	}
	sid := resp.SessionId

	set := func(id, value string) (acpsdk.SetSessionConfigOptionResponse, error) {
		return h.conn.SetSessionConfigOption(h.ctx(), acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{SessionId: sid, ConfigId: acpsdk.SessionConfigId(id), Value: acpsdk.SessionConfigValueId(value)}})
	}
	for _, bad := range []struct{ id, value string }{{"temperature", "1"}, {"model", "not-offered"}, {"mode", "yolo"}} {
		_, err := set(bad.id, bad.value)
		if reqCode(err) != -32602 {
			t.Errorf("set %s=%s: %v, want invalid params", bad.id, bad.value, err)
		}
	}
	if _, err := h.conn.SetSessionConfigOption(h.ctx(), acpsdk.SetSessionConfigOptionRequest{Boolean: &acpsdk.SetSessionConfigOptionBoolean{SessionId: sid, ConfigId: "mode", Value: true}}); reqCode(err) != -32602 {
		t.Errorf("boolean value: %v, want invalid params", err)
	}

	got, err := set("model", "listed-b")
	if err != nil {
		t.Fatal(err)
	}
	if m := selectOf(t, got.ConfigOptions, "model"); m.CurrentValue != "listed-b" {
		t.Errorf("after the switch: current %q", m.CurrentValue)
	}
	selectOf(t, got.ConfigOptions, "mode") // the response has every option
	h.prompt(sid, "hello")
	if reqs := llm.Requests(); reqs[len(reqs)-1].Model != "listed-b" {
		t.Errorf("the endpoint got model %q, want listed-b", reqs[len(reqs)-1].Model)
	}
	h.closeSession(sid)

	// A new Agent on the same store: load and resume restore the choice.
	store2, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	opts.Store = store2
	h2 := newHarness(t, opts, nil)
	loaded, err := h2.conn.LoadSession(h2.ctx(), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if m := selectOf(t, loaded.ConfigOptions, "model"); m.CurrentValue != "listed-b" {
		t.Errorf("after load: current %q", m.CurrentValue)
	}
	h2.prompt(sid, "again")
	if reqs := llm.Requests(); reqs[len(reqs)-1].Model != "listed-b" {
		t.Errorf("after load the endpoint got model %q", reqs[len(reqs)-1].Model)
	}
	// Back to the configured model: saved too.
	if _, err := h2.conn.SetSessionConfigOption(h2.ctx(), acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{SessionId: sid, ConfigId: "model", Value: fakellm.DefaultModel}}); err != nil {
		t.Fatal(err)
	}
	h2.closeSession(sid)
	resumed, err := h2.conn.ResumeSession(h2.ctx(), acpsdk.ResumeSessionRequest{SessionId: sid, Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if m := selectOf(t, resumed.ConfigOptions, "model"); m.CurrentValue != fakellm.DefaultModel {
		t.Errorf("after resume: current %q", m.CurrentValue)
	}
	h2.prompt(sid, "third")
	if reqs := llm.Requests(); reqs[len(reqs)-1].Model != fakellm.DefaultModel {
		t.Errorf("after resume the endpoint got model %q", reqs[len(reqs)-1].Model)
	}
}

// TestConfigOptionsModelsListLeftOut: an endpoint whose /models fails, or
// does not answer, is left out of the picker; session/new does not wait
// for it past the catalog's bound (the held request never answers).
func TestConfigOptionsModelsListLeftOut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup func(*fakellm.Server) func()
	}{
		{"failing", func(llm *fakellm.Server) func() { llm.FailModels(500); return func() {} }},
		{"hanging", func(llm *fakellm.Server) func() {
			release := make(chan struct{})
			llm.HoldModels(release)
			return func() { close(release) }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			llm := fakellm.Start()
			defer llm.Close()
			defer tc.setup(llm)()
			h := newHarness(t, acp.Options{Models: newEndpointModels(), Config: modelConfig(t, llm, "")}, nil)
			resp := h.newSession()
			if got := valuesOf(selectOf(t, resp.ConfigOptions, "model")); !slices.Equal(got, []string{fakellm.DefaultModel, "choice-x", "choice-y"}) {
				t.Errorf("values %v", got)
			}
		})
	}
}

// TestConfigOptionsModeInStep: the config option "mode" and ACP's modes
// stay in step both ways.
func TestConfigOptionsModeInStep(t *testing.T) {
	t.Parallel()
	h := newHarness(t, acp.Options{}, nil)
	resp := h.newSession()
	sid := resp.SessionId
	if _, ok := optionIDs(resp.ConfigOptions)["model"]; ok {
		t.Errorf("a model option without a model: %+v", resp.ConfigOptions)
	}
	from := h.fc.rec.len()
	got, err := h.conn.SetSessionConfigOption(h.ctx(), acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{SessionId: sid, ConfigId: "mode", Value: "auto"}})
	if err != nil {
		t.Fatal(err)
	}
	if m := selectOf(t, got.ConfigOptions, "mode"); m.CurrentValue != "auto" {
		t.Errorf("response: mode %q", m.CurrentValue)
	}
	ups := h.fc.rec.since(from, sid)
	if len(ups) != 1 || ups[0].CurrentModeUpdate == nil || ups[0].CurrentModeUpdate.CurrentModeId != "auto" {
		t.Errorf("updates after set_config_option: %s", dump(ups))
	}

	from = h.fc.rec.len()
	if _, err := h.conn.SetSessionMode(h.ctx(), acpsdk.SetSessionModeRequest{SessionId: sid, ModeId: "ask"}); err != nil {
		t.Fatal(err)
	}
	ups = h.fc.rec.since(from, sid)
	if len(ups) != 2 || ups[1].ConfigOptionUpdate == nil || selectOf(t, ups[1].ConfigOptionUpdate.ConfigOptions, "mode").CurrentValue != "ask" {
		t.Errorf("updates after set_mode: %s", dump(ups))
	}
	h.closeSession(sid)
	loaded, err := h.conn.LoadSession(h.ctx(), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err != nil || loaded.Modes.CurrentModeId != "ask" || selectOf(t, loaded.ConfigOptions, "mode").CurrentValue != "ask" {
		t.Errorf("load: %+v %v", loaded, err)
	}
}

func optionIDs(opts []acpsdk.SessionConfigOption) map[string]bool {
	ids := map[string]bool{}
	for _, o := range opts {
		if o.Select != nil {
			ids[string(o.Select.Id)] = true
		}
	}
	return ids
}

// TestUsageCost: with pricing, usage_update carries the session's cost so
// far, per the current model's pricing and window; it survives a load; a
// model without pricing reports no cost.
func TestUsageCost(t *testing.T) {
	t.Parallel()
	usage := &fakellm.Usage{PromptTokens: 1000, CompletionTokens: 500}
	llm := fakellm.Start(fakellm.Turn{Text: "a", Usage: usage}, fakellm.Turn{Text: "b", Usage: usage}, fakellm.Turn{Text: "c", Usage: usage}, fakellm.Turn{Text: "d", Usage: usage})
	defer llm.Close()
	dir := t.TempDir()
	store, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	opts := acp.Options{Store: store, Models: newEndpointModels(), Config: modelConfig(t, llm, `, "pricing": {"inputPerMTok": 2, "outputPerMTok": 10}`)}
	h := newHarness(t, opts, nil)
	sid := h.newSession().SessionId
	lastUsage := func(ups []acpsdk.SessionUpdate) *acpsdk.SessionUsageUpdate {
		var u *acpsdk.SessionUsageUpdate
		for _, up := range ups {
			if up.UsageUpdate != nil {
				u = up.UsageUpdate
			}
		}
		return u
	}
	// 1000 in at 2/M + 500 out at 10/M = 0.007 USD a response.
	_, ups := h.prompt(sid, "one")
	if u := lastUsage(ups); u == nil || u.Cost == nil || u.Cost.Currency != "USD" || !near(u.Cost.Amount, 0.007) || u.Size != 100000 || u.Used != 1500 {
		t.Fatalf("usage %+v", u)
	}
	_, ups = h.prompt(sid, "two")
	if u := lastUsage(ups); u == nil || u.Cost == nil || !near(u.Cost.Amount, 0.014) {
		t.Errorf("second usage %+v", u)
	}
	h.closeSession(sid)

	store2, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	opts.Store = store2
	h2 := newHarness(t, opts, nil)
	if _, err := h2.conn.ResumeSession(h2.ctx(), acpsdk.ResumeSessionRequest{SessionId: sid, Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	// The priced choice: its own window, pricing and currency.
	if _, err := h2.conn.SetSessionConfigOption(h2.ctx(), acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{SessionId: sid, ConfigId: "model", Value: "choice-y"}}); err != nil {
		t.Fatal(err)
	}
	_, ups = h2.prompt(sid, "three")
	if u := lastUsage(ups); u == nil || u.Cost == nil || u.Cost.Currency != "EUR" || !near(u.Cost.Amount, 2) || u.Size != 500000 {
		t.Errorf("usage of the priced choice %+v", u)
	}
	if _, err := h2.conn.SetSessionConfigOption(h2.ctx(), acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{SessionId: sid, ConfigId: "model", Value: fakellm.DefaultModel}}); err != nil {
		t.Fatal(err)
	}
	_, ups = h2.prompt(sid, "four")
	if u := lastUsage(ups); u == nil || u.Cost == nil || u.Cost.Currency != "USD" || !near(u.Cost.Amount, 0.021) {
		t.Errorf("usage after the load and back: %+v (the cost so far must survive the load)", u)
	}
	// choice-x has no pricing: no cost.
	if _, err := h2.conn.SetSessionConfigOption(h2.ctx(), acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{SessionId: sid, ConfigId: "model", Value: "choice-x"}}); err != nil {
		t.Fatal(err)
	}
	llm.Push(fakellm.Turn{Text: "e", Usage: usage})
	_, ups = h2.prompt(sid, "five")
	if u := lastUsage(ups); u == nil || u.Cost != nil {
		t.Errorf("usage of an unpriced model %+v", u)
	}
	if !strings.Contains(dump(ups), "usage_update") {
		t.Errorf("no usage_update: %s", dump(ups))
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
