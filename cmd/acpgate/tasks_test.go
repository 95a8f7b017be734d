package main_test

import (
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// TestReferenceServerTask drives the binary with the MCP reference server
// (testdata/everything) over stdio: simulate-research-query (taskSupport
// required) completes as a task; on the way its card shows the task's
// stages, and its ambiguous query's clarification (an elicitation the
// server sends while the task waits for input) reaches the client and its
// answer the report.
func TestReferenceServerTask(t *testing.T) {
	t.Parallel()
	a := launchAgent(t, t.TempDir(), nil, "--startup-budget", "20s")
	a.client.mu.Lock()
	a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
	a.client.elicit = func(p acpsdk.UnstableCreateElicitationRequest) acpsdk.UnstableCreateElicitationResponse {
		return acpsdk.UnstableCreateElicitationResponse{Accept: &acpsdk.UnstableCreateElicitationAccept{Action: "accept",
			Content: map[string]any{"interpretation": "programming"}}}
	}
	a.client.mu.Unlock()
	caps := acpsdk.ClientCapabilities{Elicitation: &acpsdk.ElicitationCapabilities{Form: &acpsdk.ElicitationFormCapabilities{}}}
	if _, err := a.conn.Initialize(ctx30(t), acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber, ClientCapabilities: caps}); err != nil {
		t.Fatal(err)
	}
	sid := everythingSession(t, a, t.TempDir())
	from := len(a.client.all())
	text := callText(t, a, sid, "mcp__e__simulate-research-query", `{"topic":"python","ambiguous":true}`)
	if !strings.Contains(text, "Research Report: python (programming)") {
		t.Errorf("simulate-research-query: %s", text)
	}
	cards := progressCards(a.client.all()[from:])
	if len(cards) == 0 || !strings.HasPrefix(cards[0], "working") || !strings.Contains(cards[0], "(task ") {
		t.Errorf("card texts %q, want the task's status", cards)
	}
	if !strings.Contains(strings.Join(cards, "\n"), "Gathering sources") {
		t.Errorf("card texts %q, want the first stage", cards)
	}
}
