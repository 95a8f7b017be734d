package main_test

import (
	"fmt"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// TestNotificationBurst: 100,000 notifications written at once (an
// unknown method, mcp/message for a connection that does not exist,
// session/cancel of the open session) never end the agent: a request
// after the burst is answered, the session takes a prompt, and the agent
// exits only when the client closes its end. (With acp-go-sdk's
// connection, 2,000 were enough to close it and end every session.)
func TestNotificationBurst(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	const burst = 100_000
	var b strings.Builder
	for i := range burst {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"_acpgate/burst","params":{"n":%d}}`+"\n", i)
		case 1:
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"mcp/message","params":{"connectionId":"none-%d","method":"notifications/progress"}}`+"\n", i)
		default:
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`+"\n", resp.SessionId)
		}
	}
	if _, err := a.stdin.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	if r := a.call(t, "session/list", map[string]any{}); r.Error != nil || !strings.Contains(string(r.Result), string(resp.SessionId)) {
		t.Fatalf("session/list after the burst: %s", r.Raw)
	}
	if got := prompt(t, a, resp.SessionId, "/tools"); got.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("a prompt after the burst ended %q", got.StopReason)
	}
	select {
	case <-a.exited:
		t.Fatalf("the agent exited after the burst; stderr:\n%.2000s", a.stderr.String())
	default:
	}
}
