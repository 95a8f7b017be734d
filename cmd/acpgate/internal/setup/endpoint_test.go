package setup_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/cmd/acpgate/internal/setup"
	"github.com/acpgate/acpgate/internal/testsupport/fake/fakeanthropic"
)

// endpoint is a fake OpenAI-compatible endpoint on 127.0.0.1 whose
// handler the test sets per path.
func endpoint(t *testing.T, routes map[string]http.HandlerFunc) string {
	t.Helper()
	mux := http.NewServeMux()
	for p, h := range routes {
		mux.HandleFunc(p, h)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// modelList answers a model list with ids when the bearer token is key.
func modelList(key string, ids ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"message":"Incorrect API key provided: ` + r.Header.Get("Authorization") + `","code":"invalid_api_key"}}`))
			return
		}
		body := `{"object":"list","data":[`
		for i, id := range ids {
			if i > 0 {
				body += ","
			}
			body += `{"id":"` + id + `","object":"model"}`
		}
		_, _ = w.Write([]byte(body + `]}`))
	}
}

// closedURL is a base URL on 127.0.0.1 where nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return "http://" + addr + "/v1"
}

func status(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}
}

// TestCheck: each way an endpoint can fail is its own kind of error.
func TestCheck(t *testing.T) {
	t.Parallel()
	good := endpoint(t, map[string]http.HandlerFunc{"/v1/models": modelList("sk-good", "m1", "m2")})
	for _, tc := range []struct {
		name    string
		base    string
		key     string
		keyPath string
		kind    error
		status  int
	}{
		{"refused key", good, "sk-bad", "", setup.ErrKeyRefused, 401},
		{"forbidden", endpoint(t, map[string]http.HandlerFunc{"/v1/models": status(403, `{"error":"no access"}`)}), "k", "", setup.ErrKeyRefused, 403},
		{"closed port", closedURL(t), "k", "", setup.ErrUnreachable, 0},
		{"not found", endpoint(t, map[string]http.HandlerFunc{"/other": status(200, "")}), "", "", setup.ErrWrongPath, 404},
		{"an HTML page", endpoint(t, map[string]http.HandlerFunc{"/v1/models": status(200, "<html>LM Studio</html>")}), "", "", setup.ErrWrongPath, 200},
		{"JSON without data", endpoint(t, map[string]http.HandlerFunc{"/v1/models": status(200, `{"models":[]}`)}), "", "", setup.ErrWrongPath, 200},
		{"server error", endpoint(t, map[string]http.HandlerFunc{"/v1/models": status(500, `{"error":{"message":"overloaded"}}`)}), "", "", setup.ErrEndpoint, 500},
		{"public list, refused key", endpoint(t, map[string]http.HandlerFunc{"/v1/models": modelList("", "m"), "/v1/key": status(401, "{}")}), "sk-bad", "/key", setup.ErrKeyRefused, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := setup.Check(context.Background(), http.DefaultClient, tc.base, tc.key, tc.keyPath)
			var ee *setup.EndpointError
			if !errors.Is(err, tc.kind) || !errors.As(err, &ee) || ee.Status != tc.status {
				t.Fatalf("got %v, want %v with status %d", err, tc.kind, tc.status)
			}
			for _, other := range []error{setup.ErrKeyRefused, setup.ErrUnreachable, setup.ErrWrongPath, setup.ErrEndpoint} {
				if other != tc.kind && errors.Is(err, other) {
					t.Errorf("%v is also %v", err, other)
				}
			}
		})
	}
	models, err := setup.Check(context.Background(), http.DefaultClient, good+"/", "sk-good", "")
	if err != nil || !slices.Equal(models, []string{"m1", "m2"}) {
		t.Errorf("good endpoint: %v, %v", models, err)
	}
	// A server that never answers is unreachable once the context ends.
	hung := endpoint(t, map[string]http.HandlerFunc{"/v1/models": func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := setup.Check(ctx, http.DefaultClient, hung, "", ""); !errors.Is(err, setup.ErrUnreachable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hung endpoint: %v", err)
	}
}

// TestDetect: a local provider is running when its endpoint lists models.
func TestDetect(t *testing.T) {
	t.Parallel()
	up := endpoint(t, map[string]http.HandlerFunc{"/v1/models": modelList("", "llama")})
	running := setup.Detect(context.Background(), http.DefaultClient, []setup.Provider{
		{ID: "up", BaseURL: up, Local: true},
		{ID: "down", BaseURL: closedURL(t), Local: true},
		{ID: "remote", BaseURL: up},
	})
	if !running["up"] || running["down"] || running["remote"] {
		t.Errorf("running %v", running)
	}
}

// TestCheckAnthropic: an Anthropic API is checked at /v1/models with the
// key in x-api-key and an anthropic-version; every page is read; its
// failures are the same kinds, and a wrong URL says what an Anthropic
// base URL is.
func TestCheckAnthropic(t *testing.T) {
	t.Parallel()
	srv := fakeanthropic.Start()
	defer srv.Close()
	srv.RequireKey("sk-ant-good")
	srv.SetModels(fakeanthropic.Model{ID: "claude-a"}, fakeanthropic.Model{ID: "claude-b"})
	models, err := setup.CheckAnthropic(context.Background(), http.DefaultClient, srv.URL+"/v1/", "sk-ant-good")
	if err != nil || !slices.Equal(models, []string{"claude-a", "claude-b"}) {
		t.Fatalf("good key: %v, %v", models, err)
	}
	if h := srv.ModelsRequests()[0]; h.Get("X-Api-Key") != "sk-ant-good" || h.Get("Anthropic-Version") == "" {
		t.Errorf("headers %v", h)
	}
	_, err = setup.CheckAnthropic(context.Background(), http.DefaultClient, srv.URL, "sk-ant-bad")
	var ee *setup.EndpointError
	if !errors.Is(err, setup.ErrKeyRefused) || !errors.As(err, &ee) || ee.Status != 401 {
		t.Errorf("bad key: %v", err)
	}
	other := endpoint(t, map[string]http.HandlerFunc{"/v1/chat/completions": status(200, "{}")})
	if _, err := setup.CheckAnthropic(context.Background(), http.DefaultClient, other, ""); !errors.Is(err, setup.ErrWrongPath) || !strings.Contains(err.Error(), "not an Anthropic model list") {
		t.Errorf("not an Anthropic API: %v", err)
	}
	srv.RequireKey("")
	srv.FailModels(529)
	if _, err := setup.CheckAnthropic(context.Background(), http.DefaultClient, srv.URL, ""); !errors.Is(err, setup.ErrEndpoint) {
		t.Errorf("failing API: %v", err)
	}
	paged := endpoint(t, map[string]http.HandlerFunc{"/v1/models": func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("after_id") == "" {
			_, _ = w.Write([]byte(`{"data":[{"id":"one"}],"has_more":true,"last_id":"one"}`))
			return
		}
		_, _ = w.Write([]byte(`{"data":[{"id":"two"}],"has_more":false,"last_id":"two"}`))
	}})
	if models, err := setup.CheckAnthropic(context.Background(), http.DefaultClient, paged, ""); err != nil || !slices.Equal(models, []string{"one", "two"}) {
		t.Errorf("pages: %v, %v", models, err)
	}
}
