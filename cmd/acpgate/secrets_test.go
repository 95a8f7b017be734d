package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/testdata/fakellm"
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
	if !containsFields(mustJSON(resp.Meta), `"name":"keyed","state":"ready"`) {
		t.Fatalf("servers: %s", mustJSON(resp.Meta))
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
