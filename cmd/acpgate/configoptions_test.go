package main_test

import (
	"slices"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// modelOption returns the current value and the values of the "model"
// config option of a session/new response.
func modelOption(t *testing.T, opts []acpsdk.SessionConfigOption) (string, []string) {
	t.Helper()
	for _, o := range opts {
		if o.Select != nil && o.Select.Id == "model" {
			var ids []string
			for _, v := range *o.Select.Options.Ungrouped {
				ids = append(ids, string(v.Value))
			}
			return string(o.Select.CurrentValue), ids
		}
	}
	t.Fatalf("no model option in %+v", opts)
	return "", nil
}

// TestModelPicker: through the binary, session/new offers the configured
// model, model.choices and the endpoint's GET /models list; a profile's
// model is its sessions' current model; set_config_option switches the
// model and the next chat request carries the new id, also over --model.
func TestModelPicker(t *testing.T) {
	t.Parallel()
	turns := make([]fakellm.Turn, 6)
	for i := range turns {
		turns[i] = fakellm.Turn{Text: "ok"}
	}
	llm := fakellm.Start(turns...)
	defer llm.Close()
	llm.SetModels("big-model", "default-model")
	cfg := writeConfig(t, `{
  "model": {"baseUrl": "`+llm.URL+`", "model": "default-model", "choices": ["choice-x"]},
  "agents": {"list": [{"id": "research", "model": {"model": "research-model"}}]}
}`)
	a := startAgent(t, t.TempDir(), "--config", cfg)
	set := func(a *agent, sid acpsdk.SessionId, model string) {
		t.Helper()
		resp, err := a.conn.SetSessionConfigOption(ctx30(t), acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{SessionId: sid, ConfigId: "model", Value: acpsdk.SessionConfigValueId(model)}})
		if err != nil {
			t.Fatal(err)
		}
		if cur, _ := modelOption(t, resp.ConfigOptions); cur != model {
			t.Errorf("after set_config_option: current %q, want %q", cur, model)
		}
	}

	// The endpoint's list is fetched in the background at start, each
	// fetch bounded by 2 s; on a machine loaded enough to miss that, a
	// later session gets it from the retry.
	var resp acpsdk.NewSessionResponse
	var cur string
	var values []string
	testbin.WaitFor(t, "the endpoint's models in the picker", func() bool {
		resp = openSession(t, a, "")
		cur, values = modelOption(t, resp.ConfigOptions)
		return slices.Contains(values, "big-model")
	})
	if want := []string{"default-model", "choice-x", "big-model"}; cur != "default-model" || !slices.Equal(values, want) {
		t.Fatalf("model option: current %q, values %v; want default-model, %v", cur, values, want)
	}
	set(a, resp.SessionId, "big-model")
	if model, _ := modelOf(t, a, llm, resp.SessionId); model != "big-model" {
		t.Errorf("after the switch the endpoint got model %q, want big-model", model)
	}

	// A profile's model is its sessions' model (and the picker's current).
	research := openSession(t, a, "research")
	if cur, _ := modelOption(t, research.ConfigOptions); cur != "research-model" {
		t.Errorf("profile research: current model %q", cur)
	}
	if model, _ := modelOf(t, a, llm, research.SessionId); model != "research-model" {
		t.Errorf("profile research: the endpoint got model %q", model)
	}

	// The session's choice wins over --model.
	b := startAgent(t, t.TempDir(), "--config", cfg, "--model", "flag-model")
	flagged := openSession(t, b, "")
	if cur, _ := modelOption(t, flagged.ConfigOptions); cur != "flag-model" {
		t.Errorf("with --model: current %q", cur)
	}
	set(b, flagged.SessionId, "choice-x")
	if model, _ := modelOf(t, b, llm, flagged.SessionId); model != "choice-x" {
		t.Errorf("with --model, after the switch the endpoint got model %q", model)
	}
}
