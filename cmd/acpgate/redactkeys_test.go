package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

// uEscape spells every character of s as a JSON \uXXXX escape (s is
// ASCII).
func uEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		fmt.Fprintf(&b, `\u%04X`, c)
	}
	return b.String()
}

// secretLeaks returns where secret appears in text, one JSON text a line:
// in the raw bytes, or — decoded — in a member name or a string value, or
// in JSON text held in a string (decoded in turn), whatever the escapes.
func secretLeaks(text, secret string) []string {
	var leaks []string
	var walk func(where string, v any)
	walk = func(where string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if strings.Contains(k, secret) {
					leaks = append(leaks, where+": member name "+k)
				}
				walk(where+"."+k, x)
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s[%d]", where, i), x)
			}
		case string:
			if strings.Contains(v, secret) {
				leaks = append(leaks, where+": value")
			}
			var inner any
			if t := strings.TrimSpace(v); (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) && json.Unmarshal([]byte(t), &inner) == nil {
				walk(where+"(json)", inner)
			}
		}
	}
	for i, line := range strings.Split(text, "\n") {
		if strings.Contains(line, secret) {
			leaks = append(leaks, fmt.Sprintf("line %d: raw", i+1))
		}
		var v any
		if json.Unmarshal([]byte(line), &v) == nil {
			walk(fmt.Sprintf("line %d", i+1), v)
		}
	}
	return leaks
}

// TestSecretMemberNamesThroughTheBinary (issue 34, item 1): a registered
// secret used as a JSON member name — in the model's tool-call arguments
// (the card's rawInput), plain and \u-escaped, in a tool result's
// structuredContent, in an elicitation schema's property names — and
// \u-escaped in an argument's value (the session log's
// toolCalls[].arguments) reaches neither the editor, nor the session
// store, nor the log, nor what session/load replays. Every frame stays
// valid JSON.
func TestSecretMemberNamesThroughTheBinary(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, `{"mcpServers": {"base": {"command": "SERVER", "env": {"API_TOKEN": "secret://env/ACPGATE_E2E_SECRET"}}}}`)
	esc := uEscape(secretValue)
	args := `{"text":"say ` + esc + `","` + secretValue + `":1,"x-` + esc + `":2}`
	llm := fakellm.Start(fakellm.Turn{ToolCalls: []fakellm.ToolCall{{Name: "mcp__base__echo", Arguments: args}}}, fakellm.Turn{Text: "done"})
	defer llm.Close()
	state, logFile := t.TempDir(), filepath.Join(t.TempDir(), "acpgate.log")
	flags := []string{"--config", cfg, "--model", "fake-model", "--base-url", llm.URL, "--log-file", logFile, "--log-level", "debug"}
	env := []string{"ACPGATE_E2E_SECRET=" + secretValue}
	a := startAgentWith(t, state, agentSetup{env: env, noInit: true}, flags...)
	schemas := make(chan string, 1)
	a.client.mu.Lock()
	a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
	a.client.elicit = func(p acpsdk.UnstableCreateElicitationRequest) acpsdk.UnstableCreateElicitationResponse {
		schemas <- mustJSON(p)
		return acpsdk.NewUnstableCreateElicitationResponseDecline()
	}
	a.client.mu.Unlock()
	caps := acpsdk.ClientCapabilities{Elicitation: &acpsdk.ElicitationCapabilities{Form: &acpsdk.ElicitationFormCapabilities{}}}
	if _, err := a.conn.Initialize(ctx30(t), acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber, ClientCapabilities: caps}); err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	if meta := a.serversUntil(t, resp, "servers settled", settled); !containsFields(meta, `"name":"base","state":"ready"`) {
		t.Fatalf("servers: %s", meta)
	}
	prompt(t, a, sid, "call echo")
	callResult(t, a, sid, `/call mcp__base__mirror {"content":{"`+secretValue+`":1,"n":{"y-`+secretValue+`":{"`+secretValue+`-z":2}}}}`)
	callResult(t, a, sid, `/call mcp__base__elicit {"schema":{"type":"object","properties":{"`+secretValue+`":{"type":"string"},"plain":{"type":"string"}}}}`)
	if schema := <-schemas; !strings.Contains(schema, `"[REDACTED]":{`) || !strings.Contains(schema, `"plain":{`) {
		t.Errorf("the elicitation's schema: %s", schema)
	}
	_ = a.stdin.Close()
	<-a.exited

	b := startAgentEnv(t, state, env, flags...)
	if _, err := b.conn.LoadSession(ctx30(t), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: cwd, McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	_ = b.stdin.Close()
	<-b.exited
	logged, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	stored := sessionLog(t, state, sid)
	if !strings.Contains(stored, `"[REDACTED]"`) || !strings.Contains(b.stdout.String(), `"[REDACTED]"`) {
		t.Errorf("nothing redacted in the session log or the replay: is the test sending its secrets?")
	}
	for where, out := range map[string]string{"ACP frames": a.stdout.String(), "session/load's frames": b.stdout.String(), "session log": stored, "log file": string(logged)} {
		if leaks := secretLeaks(out, secretValue); leaks != nil {
			t.Errorf("the secret appears in the %s: %s", where, strings.Join(leaks, "; "))
		}
		for i, line := range bytes.Split([]byte(strings.TrimSpace(out)), []byte("\n")) {
			if where != "log file" && !json.Valid(line) {
				t.Errorf("%s line %d is not valid JSON: %s", where, i+1, line)
			}
		}
	}
}
