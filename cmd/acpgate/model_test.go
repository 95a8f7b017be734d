package main_test

import (
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

func TestModelTurnWithPermissions(t *testing.T) {
	t.Parallel()
	llm := fakellm.Start(
		// Turn 1: add (not read-only) is asked for and allowed.
		fakellm.Turn{Reasoning: "Adding.", ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "mcp__calc__add", Arguments: `{"a":2,"b":3}`}}},
		fakellm.Turn{Text: "2 + 3 = 5"},
		// Turn 2: fail is asked for and rejected; echo (read-only) just runs.
		fakellm.Turn{ToolCalls: []fakellm.ToolCall{{ID: "c2", Name: "mcp__calc__fail", Arguments: `{}`}, {ID: "c3", Name: "mcp__calc__echo", Arguments: `{"text":"ok"}`}}},
		fakellm.Turn{Text: "Understood."},
	)
	defer llm.Close()
	a := startAgent(t, t.TempDir(), "--model", "fake-model", "--base-url", llm.URL)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("calc")}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	a.client.answer = func(p acpsdk.RequestPermissionRequest) string {
		if strings.Contains(*p.ToolCall.Title, "add") {
			return "allow_once"
		}
		return "reject_once"
	}
	if r := prompt(t, a, sid, "what is 2+3?"); r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop %s", r.StopReason)
	}
	if text := agentText(a.client.all()); !strings.Contains(text, "2 + 3 = 5") {
		t.Errorf("answer %q", text)
	}
	a.client.waitUpdate(t, "thought", func(u acpsdk.SessionUpdate) bool {
		return u.AgentThoughtChunk != nil && u.AgentThoughtChunk.Content.Text != nil
	})
	done := a.client.waitUpdate(t, "add completed", func(u acpsdk.SessionUpdate) bool {
		return u.ToolCallUpdate != nil && u.ToolCallUpdate.ToolCallId == "c1" && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == acpsdk.ToolCallStatusCompleted
	})
	if out := mustJSON(done.ToolCallUpdate.RawOutput); !strings.Contains(out, `"structuredContent":{"sum":5}`) {
		t.Errorf("rawOutput %s", out)
	}
	// The model got the framed result.
	reqs := llm.Requests()
	if tm := reqs[1].Messages[len(reqs[1].Messages)-1]; tm.Role != "tool" || !strings.Contains(tm.Content, "MCP_UNTRUSTED_CONTENT") || !strings.Contains(tm.Content, "5") {
		t.Errorf("tool message to the model: %+v", tm)
	}
	var offered []string
	for _, tl := range reqs[0].Tools {
		offered = append(offered, tl.Name)
	}
	if !strings.Contains(strings.Join(offered, ","), "mcp__calc__add") {
		t.Errorf("tools offered: %v", offered)
	}

	prompt(t, a, sid, "try fail, then echo")
	if len(a.client.asked) != 2 {
		t.Errorf("%d permission requests, want 2 (echo is read-only)", len(a.client.asked))
	}
	opts := a.client.asked[0].Options
	if len(opts) != 4 || opts[0].Kind != acpsdk.PermissionOptionKindAllowOnce || opts[3].Kind != acpsdk.PermissionOptionKindRejectAlways {
		t.Errorf("options %+v", opts)
	}
	reqs = llm.Requests()
	last := reqs[3].Messages
	rejected, echoed := last[len(last)-2], last[len(last)-1]
	if rejected.ToolCallID != "c2" || !strings.Contains(rejected.Content, "rejected") {
		t.Errorf("rejected call reported as %+v", rejected)
	}
	if echoed.ToolCallID != "c3" || !strings.Contains(echoed.Content, "ok") {
		t.Errorf("echo reported as %+v", echoed)
	}
}

func TestNoModelMessage(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	prompt(t, a, resp.SessionId, "hello")
	if text := agentText(a.client.all()); !strings.Contains(text, "No model is set up") || !strings.Contains(text, "run `acpgate setup` in a terminal") || !strings.Contains(text, "--model") {
		t.Errorf("said %q", text)
	}
}

func TestPromptContentAndResume(t *testing.T) {
	t.Parallel()
	llm := fakellm.Start(fakellm.Turn{Text: "seen"}, fakellm.Turn{Text: "still here"})
	defer llm.Close()
	state, cwd := t.TempDir(), t.TempDir()
	args := []string{"--model", "fake-model", "--base-url", llm.URL}
	a := startAgent(t, state, args...)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	mime := "text/plain"
	_, err = a.conn.Prompt(ctx30(t), acpsdk.PromptRequest{SessionId: resp.SessionId, Prompt: []acpsdk.ContentBlock{
		acpsdk.TextBlock("look at these"),
		acpsdk.ImageBlock(tinyPNG, "image/png"),
		acpsdk.ResourceLinkBlock("notes", "file:///tmp/notes.md"),
		acpsdk.ResourceBlock(acpsdk.EmbeddedResourceResource{TextResourceContents: &acpsdk.TextResourceContents{Uri: "file:///a.go", Text: "package a", MimeType: &mime}}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	user := mustJSON(llm.Requests()[0].Messages)
	for _, want := range []string{"look at these", "data:image/png;base64," + tinyPNG, "file:///tmp/notes.md", "package a"} {
		if !strings.Contains(user, want) {
			t.Errorf("model input lacks %q: %s", want, user)
		}
	}
	_ = a.stdin.Close()
	<-a.exited

	b := startAgent(t, state, args...)
	if _, err := b.conn.ResumeSession(ctx30(t), acpsdk.ResumeSessionRequest{SessionId: resp.SessionId, Cwd: cwd}); err != nil {
		t.Fatal(err)
	}
	for _, n := range b.client.all() {
		if n.Update.UserMessageChunk != nil || n.Update.AgentMessageChunk != nil {
			t.Errorf("resume replayed history: %s", mustJSON(n.Update))
		}
	}
	prompt(t, b, resp.SessionId, "still there?")
	if msgs := llm.Requests()[1].Messages; len(msgs) < 3 || msgs[len(msgs)-2].Content != "seen" {
		t.Errorf("history not restored on resume: %s", mustJSON(msgs))
	}
	if _, err := b.conn.ResumeSession(ctx30(t), acpsdk.ResumeSessionRequest{SessionId: "sess_unknown", Cwd: cwd}); err == nil || !strings.Contains(err.Error(), "unknown session") {
		t.Errorf("resume of an unknown session: %v", err)
	}
}
