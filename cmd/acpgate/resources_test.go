package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

// TestReferenceServerPromptsAndResources drives the binary with the MCP
// reference server (testdata/everything): its prompts are advertised as
// slash commands with their arguments and run as the user's turn (the
// fake model gets the prompt's text), and a resource the user mentions
// reaches the model, read from the server and framed as untrusted.
func TestReferenceServerPromptsAndResources(t *testing.T) {
	t.Parallel()
	dist := everythingDist(t)
	doc, err := os.ReadFile(filepath.Join(dist, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	llm := fakellm.Start(fakellm.Turn{Text: "about the weather"}, fakellm.Turn{Text: "about the document"})
	defer llm.Close()
	a := launchAgent(t, t.TempDir(), nil, "--model", "fake-model", "--base-url", llm.URL, "--startup-budget", "20s")
	if _, err := a.conn.Initialize(ctx30(t), acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	sid := everythingSession(t, a, t.TempDir())

	a.client.waitUpdate(t, "e.args-prompt advertised", func(u acpsdk.SessionUpdate) bool {
		if u.AvailableCommandsUpdate == nil {
			return false
		}
		for _, c := range u.AvailableCommandsUpdate.AvailableCommands {
			if c.Name == "e.args-prompt" && c.Input != nil && c.Input.Unstructured != nil && c.Input.Unstructured.Hint == "city=… [state=…]" {
				return true
			}
		}
		return false
	})

	prompt(t, a, sid, "/e.args-prompt city=Paris")
	reqs := llm.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the model got %d requests, want 1", len(reqs))
	}
	if last := reqs[0].Messages[len(reqs[0].Messages)-1]; last.Role != "user" || !strings.Contains(last.Content, "What's weather in Paris?") {
		t.Fatalf("the model's user message: %+v", last)
	}

	if _, err := a.conn.Prompt(ctx30(t), acpsdk.PromptRequest{SessionId: sid, Prompt: []acpsdk.ContentBlock{
		acpsdk.TextBlock("summarise"), acpsdk.ResourceLinkBlock("architecture.md", "demo://resource/static/document/architecture.md"),
	}}); err != nil {
		t.Fatal(err)
	}
	reqs = llm.Requests()
	last := reqs[len(reqs)-1].Messages[len(reqs[len(reqs)-1].Messages)-1]
	firstLine, _, _ := strings.Cut(string(doc), "\n")
	if !strings.Contains(last.Content, firstLine) || !strings.Contains(last.Content, "<<<MCP_UNTRUSTED_CONTENT") {
		t.Fatalf("the model did not get the mentioned resource (want %q, framed):\n%s", firstLine, last.Content)
	}
}
