package main_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

// currentProvider calls providers/list and returns its one provider's
// current config as JSON ("null" when disabled).
func currentProvider(t *testing.T, a *agent) string {
	t.Helper()
	r := a.call(t, "providers/list", map[string]any{})
	var l struct {
		Providers []struct {
			ProviderID string          `json:"providerId"`
			Supported  []string        `json:"supported"`
			Required   *bool           `json:"required"`
			Current    json.RawMessage `json:"current"`
		} `json:"providers"`
	}
	if r.Error != nil || json.Unmarshal(r.Result, &l) != nil || len(l.Providers) != 1 || l.Providers[0].ProviderID != "main" ||
		mustJSON(l.Providers[0].Supported) != `["openai","anthropic"]` || l.Providers[0].Required == nil || *l.Providers[0].Required {
		t.Fatalf("providers/list: %s", r.Raw)
	}
	return string(l.Providers[0].Current)
}

// TestProvidersOverRawACP: through the binary, providers/list shows the
// endpoint of --base-url; providers/set sends the next turn to another
// endpoint with the given header and not the API key of the environment;
// the header's value never reaches the client (the model repeating it
// included), the log or the session log; a plain http endpoint off
// loopback is refused; providers/disable leaves the session without a
// model, and its prompt says how to set one up.
func TestProvidersOverRawACP(t *testing.T) {
	t.Parallel()
	const secret = "gw-token-41c7e9b0d2"
	one := fakellm.Start(fakellm.Turn{Text: "from one"})
	defer one.Close()
	two := fakellm.Start(fakellm.Turn{Text: "from two"}, fakellm.Turn{Text: "my header says " + secret})
	defer two.Close()
	state := t.TempDir()
	a := startAgent(t, state, "--model", fakellm.DefaultModel, "--base-url", one.URL)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	prompt(t, a, sid, "hello")
	if cur := currentProvider(t, a); cur != `{"apiType":"openai","baseUrl":"`+one.URL+`"}` {
		t.Errorf("current %s", cur)
	}

	r := a.call(t, "providers/set", map[string]any{"providerId": "main", "apiType": "openai", "baseUrl": two.URL, "headers": map[string]string{"X-Gateway-Token": secret}})
	if r.Error != nil || string(r.Result) != "{}" {
		t.Fatalf("providers/set: %s", r.Raw)
	}
	if cur := currentProvider(t, a); !strings.Contains(cur, `"baseUrl":"`+two.URL+`"`) || !strings.Contains(cur, `"X-Gateway-Token":"[REDACTED]"`) {
		t.Errorf("current after set %s", cur)
	}
	before := len(a.client.all())
	prompt(t, a, sid, "hello again")
	prompt(t, a, sid, "what does your header say?")
	if text := agentText(a.client.all()[before:]); text != "from twomy header says [REDACTED]" {
		t.Errorf("after set the agent said %q", text)
	}
	if len(one.Requests()) != 1 || len(two.Requests()) != 2 {
		t.Errorf("requests: %d to the first endpoint, %d to the second", len(one.Requests()), len(two.Requests()))
	}
	h := two.Requests()[0].Header
	if h.Get("X-Gateway-Token") != secret || strings.Contains(h.Get("Authorization"), "sk-test-key") {
		t.Errorf("the second endpoint got X-Gateway-Token %q, Authorization %q", h.Get("X-Gateway-Token"), h.Get("Authorization"))
	}

	r = a.call(t, "providers/set", map[string]any{"providerId": "main", "apiType": "openai", "baseUrl": "http://example.com/v1"})
	if r.Error == nil || r.Error.Code != -32602 || r.Error.Data.Path != "baseUrl" || !strings.Contains(r.Error.Message, "loopback") {
		t.Errorf("plain http off loopback: %s", r.Raw)
	}

	if r := a.call(t, "providers/disable", map[string]any{"providerId": "main"}); r.Error != nil {
		t.Fatalf("providers/disable: %s", r.Raw)
	}
	if cur := currentProvider(t, a); cur != "null" {
		t.Errorf("current after disable %s", cur)
	}
	before = len(a.client.all())
	prompt(t, a, sid, "anyone there?")
	if text := agentText(a.client.all()[before:]); !strings.Contains(text, "No model is set up") || !strings.Contains(text, "acpgate setup") {
		t.Errorf("after disable the agent said %q", text)
	}

	log, _ := os.ReadFile(filepath.Join(state, "sessions", string(sid), "log.jsonl"))
	for where, text := range map[string]string{"the client": a.stdout.String(), "the log": a.stderr.String(), "the session log": string(log)} {
		if strings.Contains(text, secret) {
			t.Errorf("the header value reached %s", where)
		}
	}
	if !strings.Contains(a.stderr.String(), "the client set the model endpoint") {
		t.Errorf("the change is not logged:\n%s", a.stderr.String())
	}
}

// TestHeaderValuesNeverRewriteMessages: header values that are protocol
// words (json, result, session, sessionId, echo, true), in an accepted
// providers/set and in a refused one, change no message acpgate sends
// afterwards: every later frame is valid JSON-RPC with its member names,
// its session id and the tool mcp__t__echo intact, and nothing in them is
// redacted; a value that could be a secret, set with them, is redacted in
// string values still.
func TestHeaderValuesNeverRewriteMessages(t *testing.T) {
	t.Parallel()
	const secret = "gw-secret-9d41c0"
	llm := fakellm.Start(fakellm.Turn{Text: "said json result session sessionId echo true, and " + secret})
	defer llm.Close()
	state := t.TempDir()
	a := startAgent(t, state, "--model", fakellm.DefaultModel, "--base-url", llm.URL)
	words := map[string]string{"X-A": "json", "X-B": "result", "X-C": "session", "X-D": "sessionId", "X-E": "echo", "X-F": "true"}
	refused := a.call(t, "providers/set", map[string]any{"providerId": "main", "apiType": "nope", "baseUrl": llm.URL, "headers": map[string]string{"X-G": "jsonrpc", "X-H": "params"}})
	if refused.Error == nil {
		t.Fatalf("providers/set with a bad apiType: %s", refused.Raw)
	}
	headers := map[string]string{"X-Token": secret}
	maps.Copy(headers, words)
	if r := a.call(t, "providers/set", map[string]any{"providerId": "main", "apiType": "openai", "baseUrl": llm.URL, "headers": headers}); r.Error != nil {
		t.Fatalf("providers/set: %s", r.Raw)
	}
	from := len(a.stdout.String())
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("t")}})
	if err != nil {
		t.Fatal(err)
	}
	a.serversUntil(t, resp, "the server ready", settled)
	prompt(t, a, resp.SessionId, `/call mcp__t__echo {"text":"json result session jsonrpc params true"}`)
	prompt(t, a, resp.SessionId, "hello")
	later := a.stdout.String()[from:]
	if strings.Contains(later, secret) || !strings.Contains(later, "[REDACTED]") {
		t.Errorf("the secret header value is not redacted from what the model said")
	}
	for _, line := range strings.Split(strings.TrimSpace(later), "\n") {
		var msg map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &msg); err != nil || string(msg["jsonrpc"]) != `"2.0"` {
			t.Fatalf("a frame is not JSON-RPC: %v\n%s", err, line)
		}
	}
	for _, want := range []string{`"sessionId":"` + string(resp.SessionId) + `"`, "mcp__t__echo", "json result session jsonrpc params true"} {
		if !strings.Contains(later, want) {
			t.Errorf("the frames lack %q", want)
		}
	}
	if text := agentText(a.client.all()); !strings.HasSuffix(text, "said json result session sessionId echo true, and [REDACTED]") {
		t.Errorf("the model's answer reached the editor as %q", text)
	}
	if n := strings.Count(later, "[REDACTED]"); n != 1 {
		t.Errorf("%d redactions, want the secret value's only:\n%s", n, later)
	}
	// The session log is redacted by the same rule.
	stored := sessionLog(t, state, resp.SessionId)
	for _, line := range strings.Split(strings.TrimSpace(stored), "\n") {
		if !json.Valid([]byte(line)) {
			t.Fatalf("a session log record is not JSON: %s", line)
		}
	}
	if strings.Contains(stored, secret) || !strings.Contains(stored, "mcp__t__echo") || !strings.Contains(stored, "json result session jsonrpc params true") {
		t.Errorf("session log:\n%s", stored)
	}
}

// TestKeyWithControlCharacter: an environment key with a CR pasted into
// it is reported as the key's fault when a prompt needs the model,
// naming the character, never as an endpoint that cannot be reached; the
// endpoint is not asked.
func TestKeyWithControlCharacter(t *testing.T) {
	t.Parallel()
	llm := fakellm.Start(fakellm.Turn{Text: "unreachable"})
	defer llm.Close()
	a := startAgentEnv(t, t.TempDir(), []string{"OPENAI_API_KEY=sk-abc\rdef"}, "--model", fakellm.DefaultModel, "--base-url", llm.URL)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	prompt(t, a, resp.SessionId, "hello")
	text := agentText(a.client.all())
	if !strings.Contains(text, "model API key: the key holds a control character (U+000D at byte 7)") || strings.Contains(text, "URL") || len(llm.Requests()) != 0 {
		t.Errorf("said %q; %d model requests", text, len(llm.Requests()))
	}
}
