package main_test

import (
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

// TestReferenceServerAsyncSampling: the reference server's
// trigger-sampling-request-async (a sampling request acpgate runs as a
// task the server polls) is listed, asks the user, and completes with the
// (fake) model's answer once the permission is granted.
func TestReferenceServerAsyncSampling(t *testing.T) {
	t.Parallel()
	llm := fakellm.Start(fakellm.Turn{Text: "the fake model's answer"})
	defer llm.Close()
	a := launchAgent(t, t.TempDir(), nil, "--model", "fake-model", "--base-url", llm.URL, "--startup-budget", "20s")
	a.client.mu.Lock()
	a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
	a.client.mu.Unlock()
	if _, err := a.conn.Initialize(ctx30(t), acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	sid := everythingSession(t, a, t.TempDir())

	prompt(t, a, sid, "/tools mcp__e__trigger-sampling")
	if tools := agentText(a.client.all()); !strings.Contains(tools, "mcp__e__trigger-sampling-request-async") {
		t.Fatalf("trigger-sampling-request-async is not listed: %s", tools)
	}
	text := callText(t, a, sid, "mcp__e__trigger-sampling-request-async", `{"prompt":"say hi","maxTokens":50}`)
	if !strings.Contains(text, "[COMPLETED]") || !strings.Contains(text, "the fake model's answer") {
		t.Errorf("trigger-sampling-request-async: %s", text)
	}
	a.client.mu.Lock()
	asked := false
	for _, p := range a.client.asked {
		asked = asked || strings.HasPrefix(string(p.ToolCall.ToolCallId), "mcp-sampling-")
	}
	a.client.mu.Unlock()
	if !asked {
		t.Error("the user was not asked before the server used the model")
	}
}
