package main_test

import (
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// TestKillAfterCall: acpgate is killed (SIGKILL, no shutdown) as soon as
// the client sees a /call complete; a new acpgate loading the session
// replays that call, completed.
func TestKillAfterCall(t *testing.T) {
	t.Parallel()
	state, cwd := t.TempDir(), t.TempDir()
	a := startAgent(t, state)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{stdioServer("s")}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	go func() {
		// The prompt's answer may never come: acpgate is killed first.
		_, _ = a.conn.Prompt(ctx30(t), acpsdk.PromptRequest{SessionId: sid, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(`/call mcp__s__echo {"text":"survives"}`)}})
	}()
	done := a.client.waitUpdate(t, "the call completed", func(u acpsdk.SessionUpdate) bool {
		return u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == acpsdk.ToolCallStatusCompleted
	})
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-a.exited
	id := done.ToolCallUpdate.ToolCallId

	b := startAgent(t, state)
	if _, err := b.conn.LoadSession(ctx30(t), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: cwd, McpServers: []acpsdk.McpServer{stdioServer("s")}}); err != nil {
		t.Fatal(err)
	}
	for _, n := range b.client.all() {
		if c := n.Update.ToolCall; c != nil && c.ToolCallId == id {
			if c.Status != acpsdk.ToolCallStatusCompleted || !containsFields(mustJSON(c.Content), `"text":"survives"`) {
				t.Errorf("replayed call: %s", mustJSON(c))
			}
			return
		}
	}
	t.Errorf("call %s not replayed after the kill; replay: %s", id, mustJSON(b.client.all()))
}
