package main_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

// sessionLog returns the session's stored log.
func sessionLog(t *testing.T, stateDir string, sid acpsdk.SessionId) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(stateDir, "sessions", string(sid), "log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// thoughtText is the concatenated agent thought text of the updates.
func thoughtText(ns []acpsdk.SessionNotification) string {
	var b strings.Builder
	for _, n := range ns {
		if u := n.Update.AgentThoughtChunk; u != nil && u.Content.Text != nil {
			b.WriteString(u.Content.Text.Text)
		}
	}
	return b.String()
}

// TestModelRepeatsSecretInChunks: the fake model streams a resolved secret
// back in 5-byte pieces, in its thoughts and its answer. The client sees
// [REDACTED] in the text it assembles, never the value; nor do the raw
// frames, the log file or the session log.
func TestModelRepeatsSecretInChunks(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, `{"mcpServers": {"keyed": {"command": "SERVER", "env": {"API_TOKEN": "secret://env/ACPGATE_E2E_SECRET"}}}}`)
	llm := fakellm.Start(fakellm.Turn{
		Reasoning: "The token is " + secretValue + ", I should not say it.",
		Text:      "Your token: " + secretValue + "; and again:" + secretValue,
	})
	defer llm.Close()
	state, logFile := t.TempDir(), filepath.Join(t.TempDir(), "acpgate.log")
	a := startAgentEnv(t, state, []string{"ACPGATE_E2E_SECRET=" + secretValue},
		"--config", cfg, "--model", "fake-model", "--base-url", llm.URL, "--log-file", logFile)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if meta := a.serversUntil(t, resp, "servers settled", settled); !containsFields(meta, `"name":"keyed","state":"ready"`) {
		t.Fatalf("servers: %s", meta)
	}
	prompt(t, a, resp.SessionId, "what is my token?")
	if got, want := agentText(a.client.all()), "Your token: [REDACTED]; and again:[REDACTED]"; got != want {
		t.Errorf("agent text %q, want %q", got, want)
	}
	if got, want := thoughtText(a.client.all()), "The token is [REDACTED], I should not say it."; got != want {
		t.Errorf("thought text %q, want %q", got, want)
	}
	_ = a.stdin.Close()
	<-a.exited
	logged, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	stored := sessionLog(t, state, resp.SessionId)
	if !strings.Contains(stored, "Your token: [REDACTED]; and again:[REDACTED]") {
		t.Errorf("session log:\n%s", stored)
	}
	for where, out := range map[string]string{"ACP frames": a.stdout.String(), "log file": string(logged), "session log": stored} {
		if strings.Contains(out, secretValue) {
			t.Errorf("the secret appears in the %s", where)
		}
	}
}

// callResult runs /call of a tool and returns the JSON of its completed
// content.
func callResult(t *testing.T, a *agent, sid acpsdk.SessionId, call string) string {
	t.Helper()
	before := len(a.client.all())
	a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
	prompt(t, a, sid, call)
	for _, n := range a.client.all()[before:] {
		if u := n.Update.ToolCallUpdate; u != nil && u.Status != nil && *u.Status == acpsdk.ToolCallStatusCompleted {
			return mustJSON(u.Content)
		}
	}
	t.Fatalf("%s: no result; agent said %q", call, agentText(a.client.all()[before:]))
	return ""
}

// TestClientServersTakenLiterally: secret references in the servers the
// client passes are not resolved (a project's MCP configuration forwarded
// by the editor must not read acpgate's credentials); the configured
// servers' are.
func TestClientServersTakenLiterally(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, `{"mcpServers": {
	  "conf": {"command": "SERVER", "args": ["-name", "conf"], "env": {"API_TOKEN": "secret://env/ACPGATE_E2E_SECRET"}},
	  "shadow": {"command": "SERVER", "args": ["-name", "shadow"], "env": {"X": "secret://env/ACPGATE_E2E_SECRET"}}}}`)
	auth := make(chan string, 16)
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case auth <- r.Header.Get("Authorization"):
		default:
		}
		http.Error(w, "not an MCP server", http.StatusBadRequest)
	}))
	defer remote.Close()
	a := startAgentEnv(t, t.TempDir(), []string{"ACPGATE_E2E_SECRET=" + secretValue}, "--config", cfg)
	// "shadow" replaces the configured server of that name.
	shadow := stdioServer("shadow")
	shadow.Stdio.Env = []acpsdk.EnvVariable{{Name: "X", Value: "secret://env/OPENAI_API_KEY"}, {Name: "Y", Value: "${OPENAI_API_KEY}"}}
	web := acpsdk.McpServer{Http: &acpsdk.McpServerHttpInline{Name: "web", Type: "http", Url: remote.URL + "/mcp",
		Headers: []acpsdk.HttpHeader{{Name: "Authorization", Value: "Bearer ${OPENAI_API_KEY}"}}}}
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{shadow, web}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	if got := callResult(t, a, sid, `/call mcp__shadow__env {"name":"X"}`); !strings.Contains(got, `"text":"secret://env/OPENAI_API_KEY"`) {
		t.Errorf("X of a client server: %s", got)
	}
	if got := callResult(t, a, sid, `/call mcp__shadow__env {"name":"Y"}`); !strings.Contains(got, `"text":"${OPENAI_API_KEY}"`) {
		t.Errorf("Y of a client server: %s", got)
	}
	select {
	case got := <-auth:
		if got != "Bearer ${OPENAI_API_KEY}" {
			t.Errorf("Authorization sent to a client's HTTP server: %q", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the client's HTTP server was never contacted")
	}
	// A configured server still gets its secret (redacted on the way out).
	if got := callResult(t, a, sid, `/call mcp__conf__env {"name":"API_TOKEN"}`); !strings.Contains(got, `"text":"[REDACTED]"`) {
		t.Errorf("API_TOKEN of a configured server: %s", got)
	}
}
