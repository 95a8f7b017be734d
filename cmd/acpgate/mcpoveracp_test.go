package main_test

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/mcptunnel"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// TestMCPOverACP runs acpgate with a client that serves an MCP server
// itself, request-scoped (each MCP request one mcp/message naming the
// serverId, server/discover first): initialize advertises it, /tools
// lists the server's tools, /call calls one, and closing the session
// leaves no request of it at the client.
func TestMCPOverACP(t *testing.T) {
	t.Parallel()
	var tc *mcptunnel.Client
	a := startAgentWith(t, t.TempDir(), agentSetup{pipes: func(in io.Writer, out io.Reader) (io.Writer, io.Reader) {
		tc = mcptunnel.NewClient(in)
		return tc.Input(), tc.Output(out)
	}})
	tc.Serve("srv-e2e", mcptunnel.NewServer("client-tools"))
	a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
	if !strings.Contains(a.stdout.String(), `"mcpCapabilities":{"acp":true`) {
		t.Errorf("initialize does not advertise mcpCapabilities.acp: %s", a.stdout.String())
	}
	// The schema spells the server's id serverId (the SDK still says id).
	raw, err := tc.Call(ctx30(t), acpsdk.AgentMethodSessionNew, map[string]any{"cwd": t.TempDir(),
		"mcpServers": []any{map[string]any{"type": "acp", "name": "tools", "serverId": "srv-e2e"}}})
	if err != nil {
		t.Fatal(err)
	}
	var resp acpsdk.NewSessionResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	a.serversUntil(t, resp, "the acp server ready", func(st map[string]string) bool { return st["tools"] == "ready" })
	// The connection starts with server/discover, no initialize; a ping
	// may go first (mcpclient's fence behind the probe is written first
	// when the probe's goroutine is slow to run: ping is allowed before
	// discovery in every revision).
	if first, err := tc.WaitEvent(ctx30(t), func(e mcptunnel.Event) bool { return e.Kind == "message" && e.Method != "ping" }); err != nil || first.Server != "srv-e2e" || first.Method != "server/discover" {
		t.Errorf("the first mcp/message but pings: %+v %v (events: %v)", first, err, tc.Events())
	}

	prompt(t, a, sid, "/mcp")
	if text := agentText(a.client.all()); !strings.Contains(text, "**tools** (acp): ready, 5 tools") {
		t.Errorf("/mcp said:\n%s", text)
	}
	before := len(a.client.all())
	prompt(t, a, sid, "/tools")
	if text := agentText(a.client.all()[before:]); !strings.Contains(text, "mcp__tools__echo") || !strings.Contains(text, "mcp__tools__big") {
		t.Errorf("/tools said:\n%s", text)
	}
	if r := prompt(t, a, sid, `/call mcp__tools__echo {"text":"via ACP"}`); r.StopReason != acpsdk.StopReasonEndTurn {
		t.Errorf("stop %s", r.StopReason)
	}
	a.client.waitUpdate(t, "echo completed", func(u acpsdk.SessionUpdate) bool {
		return u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == acpsdk.ToolCallStatusCompleted &&
			strings.Contains(mustJSON(u.ToolCallUpdate.Content), "via ACP")
	})

	if _, err := a.conn.CloseSession(ctx30(t), acpsdk.CloseSessionRequest{SessionId: sid}); err != nil {
		t.Fatal(err)
	}
	testbin.WaitFor(t, "no request of the closed session left at the client", func() bool { return tc.Active() == 0 })
	if out := a.stdout.String(); strings.Contains(out, "_acpgate/") || strings.Contains(out, "mcp/connect") {
		t.Error("a private method name or the retired mcp/connect reached the client")
	}
}
