package openaicompat_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/openaicompat"
	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

func userInput(s string) []gateway.Content {
	return []gateway.Content{{Type: gateway.ContentText, Text: s}}
}

func TestProviderStreamingAssembly(t *testing.T) {
	calls := []fakellm.ToolCall{
		{ID: "c1", Name: "first", Arguments: `{"path":"/a/b","deep":{"x":[1,2,3]},"s":"ünïcode"}`},
		{ID: "c2", Name: "second", Arguments: `{"q":"a much longer argument string to split into many fragments"}`},
		{ID: "c3", Name: "third", Arguments: ``},
	}
	for _, tc := range []struct {
		name string
		turn fakellm.Turn
		cfg  openaicompat.Config
	}{
		{"interleaved", fakellm.Turn{ToolCalls: calls}, openaicompat.Config{}},
		{"sequential", fakellm.Turn{ToolCalls: calls, SequentialToolCalls: true, InlineFinish: true}, openaicompat.Config{}},
		{"non-streaming", fakellm.Turn{ToolCalls: calls}, openaicompat.Config{NoStream: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakellm.Start(tc.turn)
			defer srv.Close()
			tc.cfg.Headers = map[string]string{"X-Title": "acpgate-test"}
			tc.cfg.APIKey = "sk-test"
			p := srv.Provider(t, tc.cfg)
			resp, err := p.Complete(context.Background(), gateway.ModelRequest{Messages: []gateway.Message{{Role: gateway.RoleUser, Content: userInput("x")}}}, func(gateway.Delta) {})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Stop != gateway.StopToolUse || len(resp.Message.ToolCalls) != 3 {
				t.Fatalf("%+v", resp)
			}
			for i, c := range resp.Message.ToolCalls {
				want := calls[i].Arguments
				if want == "" {
					want = "{}"
				}
				if c.ID != calls[i].ID || c.Name != calls[i].Name || string(c.Arguments) != want {
					t.Errorf("call %d: %+v", i, c)
				}
			}
			h := srv.Requests()[0].Header
			if h.Get("X-Title") != "acpgate-test" || h.Get("Authorization") != "Bearer sk-test" {
				t.Errorf("headers %v", h)
			}
		})
	}
}

func TestProviderSendsImagesAndHistory(t *testing.T) {
	srv := fakellm.Start(fakellm.Turn{Text: "seen"})
	defer srv.Close()
	p := srv.Provider(t, openaicompat.Config{})
	hist := []gateway.Message{
		{Role: gateway.RoleUser, Content: []gateway.Content{{Type: gateway.ContentText, Text: "look"}, {Type: gateway.ContentImage, MIMEType: "image/png", Data: "aGk="}}},
	}
	if _, err := p.Complete(context.Background(), gateway.ModelRequest{Messages: hist}, func(gateway.Delta) {}); err != nil {
		t.Fatal(err)
	}
	parts := srv.Requests()[0].Messages[0].Parts
	if len(parts) != 2 || !strings.Contains(string(parts[1]), "data:image/png;base64,aGk=") {
		t.Errorf("parts %s", parts)
	}
}

func TestNewNeedsAModel(t *testing.T) {
	if _, err := openaicompat.New(openaicompat.Config{}); err == nil || !strings.Contains(err.Error(), "no model") {
		t.Errorf("New without a model: %v", err)
	}
	srv := fakellm.Start(fakellm.Turn{Text: "x"})
	defer srv.Close()
	if _, err := srv.Provider(t, openaicompat.Config{}).Complete(context.Background(), gateway.ModelRequest{
		Tools: []gateway.ToolSpec{{Name: "bad", Parameters: []byte(`[1,2]`)}},
	}, func(gateway.Delta) {}); err == nil || !strings.Contains(err.Error(), "tool bad: input schema is not a JSON object") {
		t.Errorf("bad schema: %v", err)
	}
}

// TestProviderSamplingSettings: max tokens, temperature, stop sequences and
// tool choice reach the endpoint; the answering model is reported.
func TestProviderSamplingSettings(t *testing.T) {
	for _, noStream := range []bool{false, true} {
		srv := fakellm.Start(fakellm.Turn{Text: "ok"})
		p := srv.Provider(t, openaicompat.Config{NoStream: noStream})
		temp := 0.25
		resp, err := p.Complete(context.Background(), gateway.ModelRequest{
			Messages:  []gateway.Message{{Role: gateway.RoleUser, Content: userInput("x")}},
			Tools:     []gateway.ToolSpec{{Name: "t", Parameters: []byte(`{"type":"object"}`)}},
			MaxTokens: 42, Temperature: &temp, Stop: []string{"END"}, ToolChoice: gateway.ToolChoiceRequired,
		}, func(gateway.Delta) {})
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.Model != fakellm.DefaultModel {
			t.Errorf("model %q, want %q", resp.Model, fakellm.DefaultModel)
		}
		var body struct {
			MaxTokens   int      `json:"max_tokens"`
			Temperature float64  `json:"temperature"`
			Stop        []string `json:"stop"`
			ToolChoice  string   `json:"tool_choice"`
		}
		if err := json.Unmarshal(srv.Requests()[0].Raw, &body); err != nil {
			t.Fatal(err)
		}
		if body.MaxTokens != 42 || body.Temperature != 0.25 || len(body.Stop) != 1 || body.Stop[0] != "END" || body.ToolChoice != "required" {
			t.Errorf("request %s", srv.Requests()[0].Raw)
		}
	}
}

// toFake is an http.RoundTripper that sends every request to a fake
// server instead of the host it names (so that a provider configured for
// api.openai.com talks to 127.0.0.1).
type toFake struct{ base *url.URL }

func (f toFake) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host = f.base.Scheme, f.base.Host
	return http.DefaultTransport.RoundTrip(r)
}

// TestProviderPromptCache: a request carries its CacheKey as
// prompt_cache_key to OpenAI's API by default, to another endpoint only
// when asked, never when told not to; the cached tokens of the usage
// (streamed or not) are read into CacheReadTokens.
func TestProviderPromptCache(t *testing.T) {
	for _, tc := range []struct {
		name     string
		baseURL  string // "": the fake's
		mode     openaicompat.CacheKeyMode
		noStream bool
		want     string
	}{
		{"openai auto", "https://api.openai.com/v1", openaicompat.CacheKeyAuto, false, "sess-1"},
		{"openai auto, whole responses", "https://api.openai.com/v1", openaicompat.CacheKeyAuto, true, "sess-1"},
		{"openai never", "https://api.openai.com/v1", openaicompat.CacheKeyNever, false, ""},
		{"other auto", "", openaicompat.CacheKeyAuto, false, ""},
		{"other always", "", openaicompat.CacheKeyAlways, true, "sess-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakellm.Start(fakellm.Turn{Text: "ok", Usage: &fakellm.Usage{PromptTokens: 2000, CachedTokens: 1536, CompletionTokens: 3}})
			defer srv.Close()
			base, err := url.Parse(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			cfg := openaicompat.Config{BaseURL: srv.URL, Model: fakellm.DefaultModel, CacheKey: tc.mode, NoStream: tc.noStream, MaxRetries: openaicompat.NoRetries}
			if tc.baseURL != "" {
				cfg.BaseURL, cfg.HTTPClient = tc.baseURL, &http.Client{Transport: toFake{base}}
			}
			p, err := openaicompat.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := p.Complete(context.Background(), gateway.ModelRequest{CacheKey: "sess-1", Messages: []gateway.Message{{Role: gateway.RoleUser, Content: userInput("x")}}}, func(gateway.Delta) {})
			if err != nil {
				t.Fatal(err)
			}
			if got := srv.Requests()[0].PromptCacheKey; got != tc.want {
				t.Errorf("prompt_cache_key %q, want %q", got, tc.want)
			}
			if want := (gateway.Usage{InputTokens: 2000 - 1536, OutputTokens: 3, CacheReadTokens: 1536}); resp.Usage != want {
				t.Errorf("usage %+v, want %+v", resp.Usage, want)
			}
		})
	}
}
