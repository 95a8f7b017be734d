package main_test

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

// TestReferenceServerRequests drives the binary with the MCP reference
// server (testdata/everything) over stdio and a client with form and URL
// elicitation: the tools the server shows only to clients with roots,
// sampling and elicitation appear, and each works: get-roots-list lists
// the session's cwd, trigger-sampling-request gets the (fake) model's
// answer after the user's permission, trigger-elicitation-request gets the
// user's answer with the form's defaults.
func TestReferenceServerRequests(t *testing.T) {
	t.Parallel()
	llm := fakellm.Start(fakellm.Turn{Text: "the fake model's answer"})
	defer llm.Close()
	a := launchAgent(t, t.TempDir(), nil, "--model", "fake-model", "--base-url", llm.URL, "--startup-budget", "20s")
	a.client.mu.Lock()
	a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
	a.client.elicit = func(p acpsdk.UnstableCreateElicitationRequest) acpsdk.UnstableCreateElicitationResponse {
		if p.Form == nil {
			return acpsdk.NewUnstableCreateElicitationResponseDecline()
		}
		return acpsdk.UnstableCreateElicitationResponse{Accept: &acpsdk.UnstableCreateElicitationAccept{Action: "accept",
			Content: map[string]any{"name": "Ann Example", "check": true, "email": "ann@example.com"}}}
	}
	a.client.mu.Unlock()
	caps := acpsdk.ClientCapabilities{Elicitation: &acpsdk.ElicitationCapabilities{Form: &acpsdk.ElicitationFormCapabilities{}, Url: &acpsdk.ElicitationUrlCapabilities{}}}
	if _, err := a.conn.Initialize(ctx30(t), acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber, ClientCapabilities: caps}); err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	sid := everythingSession(t, a, cwd)

	prompt(t, a, sid, "/tools mcp__e__")
	tools := agentText(a.client.all())
	for _, want := range []string{"mcp__e__get-roots-list", "mcp__e__trigger-sampling-request", "mcp__e__trigger-elicitation-request", "mcp__e__trigger-url-elicitation"} {
		if !strings.Contains(tools, want) {
			t.Errorf("%s is not listed: %s", want, tools)
		}
	}

	if text := callText(t, a, sid, "mcp__e__get-roots-list", `{}`); !strings.Contains(text, "URI: file://"+cwd) {
		t.Errorf("get-roots-list: %s", text)
	}

	text := callText(t, a, sid, "mcp__e__trigger-sampling-request", `{"prompt":"say hi","maxTokens":50}`)
	if !strings.Contains(text, "the fake model's answer") {
		t.Errorf("trigger-sampling-request: %s", text)
	}
	if reqs := llm.Requests(); len(reqs) != 1 || !strings.Contains(reqs[0].Messages[len(reqs[0].Messages)-1].Content, "say hi") {
		t.Errorf("the model was sent %+v", reqs)
	}
	a.client.mu.Lock()
	askedSampling := false
	for _, p := range a.client.asked {
		askedSampling = askedSampling || strings.HasPrefix(string(p.ToolCall.ToolCallId), "mcp-sampling-")
	}
	a.client.mu.Unlock()
	if !askedSampling {
		t.Error("the user was not asked before the server used the model")
	}

	text = callText(t, a, sid, "mcp__e__trigger-elicitation-request", `{}`)
	for _, want := range []string{"Name: Ann Example", "Favorite Integer: 42", `"firstLine": "It was a dark and stormy night."`} {
		if !strings.Contains(text, want) {
			t.Errorf("trigger-elicitation-request lacks %q: %s", want, text)
		}
	}
	// The elicitation/create on the wire names the session and the call.
	sc := bufio.NewScanner(strings.NewReader(a.stdout.String()))
	sc.Buffer(nil, 16<<20)
	scoped := false
	for sc.Scan() {
		var m struct {
			Method string `json:"method"`
			Params struct {
				SessionID  string `json:"sessionId"`
				ToolCallID string `json:"toolCallId"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Method == "elicitation/create" {
			scoped = m.Params.SessionID == string(sid) && m.Params.ToolCallID != ""
		}
	}
	if !scoped {
		t.Error("elicitation/create does not name the session and call")
	}
}

// callText runs "/call tool args" and returns the text of the call's final
// update.
func callText(t *testing.T, a *agent, sid acpsdk.SessionId, tool, args string) string {
	t.Helper()
	from := len(a.client.all())
	prompt(t, a, sid, "/call "+tool+" "+args)
	return lastCallText(a.client.all()[from:], sid)
}
