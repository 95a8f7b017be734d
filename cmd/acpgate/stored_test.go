package main_test

import (
	"fmt"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// TestStoredResultIsBounded: with limits.maxStoredResultBytes set low, the
// client still gets a large result whole, the session log keeps a copy cut
// to the limit with a note of the full size, and a load replays that copy.
func TestStoredResultIsBounded(t *testing.T) {
	t.Parallel()
	const limit, size = 4096, 200_000
	cfg := writeConfig(t, fmt.Sprintf(`{"limits": {"maxStoredResultBytes": %d}}`, limit))
	state := t.TempDir()
	a := startAgent(t, state, "--config", cfg)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("s")}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	live := callResult(t, a, sid, fmt.Sprintf(`/call mcp__s__big {"bytes":%d}`, size))
	if !strings.Contains(live, strings.Repeat("a", size)) || strings.Contains(live, "stored copy truncated") {
		t.Errorf("the client did not get the whole result live (%d bytes of JSON)", len(live))
	}
	_ = a.stdin.Close()
	<-a.exited

	stored := sessionLog(t, state, sid)
	if len(stored) > limit+4096 {
		t.Errorf("session log is %d bytes for a %d-byte result (limit %d)", len(stored), size, limit)
	}
	note := fmt.Sprintf("[stored copy truncated: %d of %d bytes kept]", limit, size)
	if !strings.Contains(stored, note) || !strings.Contains(stored, fmt.Sprintf(`"truncated":{"fullBytes":%d,"keptBytes":%d}`, size, limit)) {
		t.Errorf("session log lacks the note:\n%.2000s", stored)
	}

	b := startAgent(t, state, "--config", cfg)
	if _, err := b.conn.LoadSession(ctx30(t), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	var replayed string
	for _, n := range b.client.all() {
		if u := n.Update.ToolCall; u != nil && u.Status == acpsdk.ToolCallStatusCompleted {
			replayed = mustJSON(u)
		}
	}
	if !strings.Contains(replayed, `"text":"`+strings.Repeat("a", limit)+`"`) || !strings.Contains(replayed, `"text":"\n`+note) {
		t.Errorf("replayed call: %.300s…", replayed)
	}
}
