package main_test

import (
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// TestExtTaskCard drives the binary with a 2026-07-28 server whose ext_job
// runs as a task of the io.modelcontextprotocol/tasks extension: /call
// completes with the task's result, and the card shows each step's status
// on the way.
func TestExtTaskCard(t *testing.T) {
	t.Parallel()
	a := launchAgent(t, t.TempDir(), nil)
	a.client.mu.Lock()
	a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
	a.client.mu.Unlock()
	sess, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{
		stdioServer("s", "-protocol", "2026-07-28", "-ext-tasks"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	from := len(a.client.all())
	if text := callText(t, a, sess.SessionId, "mcp__s__ext_job", `{"steps":2}`); text != "job done 2" {
		t.Errorf("ext_job: %q", text)
	}
	cards := progressCards(a.client.all()[from:])
	all := strings.Join(cards, "\n")
	if !strings.Contains(all, "step 1") || !strings.Contains(all, "step 2") || !strings.Contains(all, "(task ext-1") {
		t.Errorf("card texts %q, want the task's steps", cards)
	}
}
