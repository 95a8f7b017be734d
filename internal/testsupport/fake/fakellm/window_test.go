package fakellm_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

// TestWindow: a request over the window is refused as OpenAI refuses it
// (400, code context_length_exceeded), consuming no turn; the others are
// answered with their size as prompt_tokens; Stats counts both.
func TestWindow(t *testing.T) {
	srv := fakellm.Start(fakellm.Turn{Text: "ok"})
	defer srv.Close()
	srv.SetWindow(100)
	small := map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
	large := map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": strings.Repeat("x", 1000)}}}

	res := post(t, context.Background(), srv.URL, large)
	body := decodeBody(t, res)
	e, _ := body["error"].(map[string]any)
	if res.StatusCode != http.StatusBadRequest || e["code"] != "context_length_exceeded" || e["type"] != "invalid_request_error" ||
		!strings.Contains(e["message"].(string), "maximum context length is 100 tokens") {
		t.Errorf("over the window: %d %v", res.StatusCode, body)
	}
	res = post(t, context.Background(), srv.URL, small)
	body = decodeBody(t, res)
	reqs := srv.Requests()
	usage, _ := body["usage"].(map[string]any)
	if res.StatusCode != http.StatusOK || usage["prompt_tokens"] != float64(reqs[1].Tokens) {
		t.Errorf("under the window: %d %v (request of %d tokens)", res.StatusCode, body, reqs[1].Tokens)
	}
	b, _ := json.Marshal(small)
	if reqs[1].Tokens != fakellm.Tokens(b) || !reqs[0].Refused || reqs[1].Refused {
		t.Errorf("requests %+v", reqs)
	}
	if st := srv.Stats(); st.Requests != 2 || st.Refused != 1 || st.MaxTokens != reqs[1].Tokens {
		t.Errorf("stats %+v", st)
	}
	srv.ForgetRequests()
	res = post(t, context.Background(), srv.URL, small)
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if len(srv.Requests()) != 2 || srv.Stats().Requests != 3 {
		t.Errorf("forgotten requests kept: %d, stats %+v", len(srv.Requests()), srv.Stats())
	}
}

// TestResponder: the responder answers first; what it leaves goes to the
// script.
func TestResponder(t *testing.T) {
	srv := fakellm.Start(fakellm.Turn{Text: "scripted"})
	defer srv.Close()
	srv.SetResponder(func(req fakellm.Request) (fakellm.Turn, bool) {
		if req.Messages[0].Content == "special" {
			return fakellm.Turn{Text: "responded"}, true
		}
		return fakellm.Turn{}, false
	})
	for _, c := range []struct{ in, want string }{{"special", "responded"}, {"plain", "scripted"}, {"special", "responded"}} {
		body := decodeBody(t, post(t, context.Background(), srv.URL, map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": c.in}}}))
		msg := body["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
		if msg["content"] != c.want {
			t.Errorf("%s: answered %v, want %s", c.in, msg["content"], c.want)
		}
	}
}
