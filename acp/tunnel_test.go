package acp_test

// MCP over ACP through the in-process harness: the client serves an MCP
// server (mcptunnel), request-scoped: each MCP request one mcp/message.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/internal/testsupport/mcptunnel"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/mcpclient"
)

// newTunnelHarness is newHarness with the client's side of MCP over ACP
// around the connection; the client has initialized with form
// elicitation (acp servers are taken only once initialize advertised
// them).
func newTunnelHarness(t *testing.T, opts acp.Options, fc *fakeClient) (*harness, *mcptunnel.Client) {
	t.Helper()
	if fc == nil {
		fc = &fakeClient{}
	}
	var tc *mcptunnel.Client
	h := newHarnessWrapped(t, opts, fc, fc, func(in io.Writer, out io.Reader) (io.Writer, io.Reader) {
		tc = mcptunnel.NewClient(in)
		return tc.Input(), tc.Output(out)
	})
	h.initialize(true, false)
	return h, tc
}

// acpServer is an mcpServers entry of type acp.
func acpServer(name, serverID string) acpsdk.McpServer {
	return acpsdk.McpServer{Acp: &acpsdk.McpServerAcpInline{Type: "acp", Name: name, Id: acpsdk.McpServerAcpId(serverID)}}
}

// acpServerRaw is the same entry as the schema spells it (serverId), for
// requests sent with raw params.
func acpServerRaw(name, serverID string) map[string]any {
	return map[string]any{"type": "acp", "name": name, "serverId": serverID}
}

// newRawSession sends session/new with raw mcpServers (the SDK would
// spell an acp server's serverId as id) and returns the session id.
func newRawSession(t *testing.T, h *harness, tc *mcptunnel.Client, servers ...any) (acpsdk.SessionId, error) {
	t.Helper()
	raw, err := tc.Call(h.ctx(), acpsdk.AgentMethodSessionNew, map[string]any{"cwd": t.TempDir(), "mcpServers": servers})
	if err != nil {
		return "", err
	}
	var resp acpsdk.NewSessionResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatal(err)
	}
	h.fc.rec.waitFor(t, 0, resp.SessionId, "available_commands_update", isCommands)
	return resp.SessionId, nil
}

// TestMCPOverACP: a server of the client's, reached through the ACP
// connection in the request-scoped shape, is a session's server like any
// other: each MCP request one mcp/message naming the schema's serverId
// and a fresh requestId (server/discover first, no mcp/connect), its
// tools listed and called, its elicitation and roots asked as multi
// round-trip input, its tools/list_changed honoured through the listen
// stream's mcp/message notifications; when the session closes, no
// request of it is left at the client; session/resume reaches it again.
func TestMCPOverACP(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{RequestPermissionFunc: allowTools(nil)}
	fc.ElicitFunc = func(_ context.Context, p acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
		return acpsdk.UnstableCreateElicitationResponse{Accept: &acpsdk.UnstableCreateElicitationAccept{Action: "accept", Content: map[string]any{"answer": "yes to " + p.Form.Message}}}, nil
	}
	// The sessions' MCP events, once the session has taken them in.
	sixTools := make(chan struct{})
	var once sync.Once
	opts := acp.Options{}
	opts.MCP.OnEvent = func(e mcpclient.Event) {
		if e.Kind == mcpclient.EventToolsChanged && e.Status.Tools == 6 {
			once.Do(func() { close(sixTools) })
		}
	}
	h, tc := newTunnelHarness(t, opts, fc)
	srv := mcptunnel.NewServer("client-tools")
	tc.Serve("srv-1", srv)
	sid, err := newRawSession(t, h, tc, acpServerRaw("tools", "srv-1"))
	if err != nil {
		t.Fatal(err)
	}
	servers := h.settledServers(sid)
	if len(servers) != 1 || servers[0]["state"] != "ready" || servers[0]["transport"] != "acp" {
		t.Fatalf("servers: %v", servers)
	}
	// server/discover first, no initialize; the probe's fence (a ping)
	// may be written before it on a loaded machine.
	first, err := tc.WaitEvent(h.ctx(), func(e mcptunnel.Event) bool { return e.Kind == "message" && e.Method != "ping" })
	if err != nil || first.Server != "srv-1" || first.Method != "server/discover" || first.ID == "" {
		t.Errorf("the first mcp/message but pings: %+v %v", first, err)
	}
	if wire := h.wire.String(); strings.Contains(wire, "mcp/connect") || strings.Contains(wire, "connectionId") {
		t.Errorf("the retired shape reached the client:\n%s", wire)
	}
	_, ups := h.prompt(sid, "/tools")
	if text := agentText(ups); !strings.Contains(text, "mcp__tools__echo") || !strings.Contains(text, "mcp__tools__ask") {
		t.Errorf("/tools said:\n%s", text)
	}
	if text, status, _ := h.callResult(sid, "mcp__tools__echo", `{"text":"through ACP"}`); text != "through ACP" || status != acpsdk.ToolCallStatusCompleted {
		t.Errorf("echo: %q (%s)", text, status)
	}
	if text, _, _ := h.callResult(sid, "mcp__tools__ask", `{"message":"proceed?"}`); text != "accept: yes to proceed?" {
		t.Errorf("ask: %q", text)
	}
	if text, _, _ := h.callResult(sid, "mcp__tools__roots", `{}`); !strings.HasPrefix(text, "file:///") {
		t.Errorf("roots: %q", text)
	}
	// Every requestId was fresh.
	ids := map[string]bool{}
	for _, e := range tc.Events() {
		if e.Kind == "message" {
			if ids[e.ID] {
				t.Errorf("requestId %q used twice", e.ID)
			}
			ids[e.ID] = true
		}
	}

	srv.AddTool(mcp.NewTool("late", mcp.WithDescription("Added later")), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("late"), nil
	})
	select {
	case <-sixTools:
	case <-h.ctx().Done():
		t.Fatal("the late tool was not listed")
	}
	if text, _, _ := h.callResult(sid, "mcp__tools__late", `{}`); text != "late" {
		t.Errorf("late: %q", text)
	}

	if _, err := h.conn.CloseSession(h.ctx(), acpsdk.CloseSessionRequest{SessionId: sid}); err != nil {
		t.Fatal(err)
	}
	testbin.WaitFor(t, "no request of the closed session left at the client", func() bool { return tc.Active() == 0 })
	// The listen stream, open until then, was cancelled at the client.
	listen := map[string]bool{}
	for _, e := range tc.Events() {
		if e.Kind == "message" && e.Method == "subscriptions/listen" {
			listen[e.ID] = true
		}
	}
	if _, err := tc.WaitEvent(h.ctx(), func(e mcptunnel.Event) bool { return e.Kind == "cancel" }); err != nil || len(listen) == 0 {
		t.Errorf("no $/cancel_request of the listen stream (%v): %v", listen, tc.Events())
	}

	// session/resume takes acp servers too.
	from := h.fc.rec.len()
	if _, err := tc.Call(h.ctx(), acpsdk.AgentMethodSessionResume, map[string]any{"sessionId": sid, "cwd": t.TempDir(),
		"mcpServers": []any{acpServerRaw("tools", "srv-1")}}); err != nil {
		t.Fatal(err)
	}
	h.fc.rec.waitFor(t, from, sid, "the server ready again", func(u acpsdk.SessionUpdate) bool {
		if u.SessionInfoUpdate == nil {
			return false
		}
		list := serversOf(u.SessionInfoUpdate.Meta)
		return len(list) == 1 && list[0]["state"] == "ready"
	})
	if text, _, _ := h.callResult(sid, "mcp__tools__echo", `{"text":"resumed"}`); text != "resumed" {
		t.Errorf("echo after resume: %q", text)
	}
}

// TestMCPOverACPFailures: a server the client does not carry (an ACP
// error answer to mcp/message) is a failed server showing the client's
// error; the client's own mcp/message requests are -33001 (acpgate
// provides no server) or -32602 naming the member; a notification for no
// request in flight is dropped.
func TestMCPOverACPFailures(t *testing.T) {
	t.Parallel()
	h, tc := newTunnelHarness(t, acp.Options{}, &fakeClient{RequestPermissionFunc: allowTools(nil)})
	tc.Refuse("gone", &mcptunnel.Error{Code: mcptunnel.CodeUnknownServer, Message: "no server gone here"})
	tc.Serve("srv-1", mcptunnel.NewServer("client-tools"))
	sid, err := newRawSession(t, h, tc, acpServerRaw("refused", "gone"), acpServerRaw("good", "srv-1"))
	if err != nil {
		t.Fatal(err)
	}
	card := h.fc.rec.waitFor(t, 0, sid, "failure card", func(u acpsdk.SessionUpdate) bool {
		return u.ToolCall != nil && strings.Contains(u.ToolCall.Title, "refused")
	})
	if card.ToolCall.Status != acpsdk.ToolCallStatusFailed || !strings.Contains(dump([]acpsdk.SessionUpdate{card}), "no server gone here") {
		t.Errorf("card: %s", dump([]acpsdk.SessionUpdate{card}))
	}
	h.settledServers(sid)

	for _, tc2 := range []struct {
		params map[string]any
		code   int
		says   string
	}{
		{map[string]any{"serverId": "x", "requestId": "r1", "method": "ping"}, -33001, `unknown MCP server "x"`},
		{map[string]any{"serverId": "x", "method": "ping"}, -32602, "requestId"},
		{map[string]any{"serverId": "x", "requestId": 7, "method": "ping"}, -32602, "requestId"},
	} {
		_, err = tc.Call(h.ctx(), "mcp/message", tc2.params)
		var e *mcptunnel.Error
		if !errors.As(err, &e) || e.Code != tc2.code || !strings.Contains(e.Message, tc2.says) {
			t.Errorf("mcp/message %v: %v, want %d saying %q", tc2.params, err, tc2.code, tc2.says)
		}
	}
	tc.Notify("mcp/message", map[string]any{"serverId": "srv-1", "requestId": "none", "method": "notifications/progress", "params": map[string]any{"progress": 1}})
	if text, _, _ := h.callResult(sid, "mcp__good__echo", `{"text":"still here"}`); text != "still here" {
		t.Errorf("echo after a stray notification: %q", text)
	}
}

// TestMCPOverACPValidation: acp servers are taken once initialize has
// advertised mcpCapabilities.acp, and need a name and a serverId.
func TestMCPOverACPValidation(t *testing.T) {
	t.Parallel()
	// Before initialize.
	var tc *mcptunnel.Client
	h := newHarnessWrapped(t, acp.Options{}, &fakeClient{}, &fakeClient{}, func(in io.Writer, out io.Reader) (io.Writer, io.Reader) {
		tc = mcptunnel.NewClient(in)
		return tc.Input(), tc.Output(out)
	})
	check := func(what string, entry map[string]any, path, says string) {
		t.Helper()
		_, err := newRawSession(t, h, tc, entry)
		var e *mcptunnel.Error
		if !errors.As(err, &e) || e.Code != -32602 || !strings.Contains(e.Message, path) || !strings.Contains(e.Message, says) {
			t.Errorf("%s: %v, want -32602 at %s saying %q", what, err, path, says)
		}
	}
	check("before initialize", acpServerRaw("t", "x"), "mcpServers[0].type", "mcpCapabilities.acp")
	resp, err := h.conn.Initialize(h.ctx(), acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber})
	if err != nil || !resp.AgentCapabilities.McpCapabilities.Acp {
		t.Fatalf("initialize: %+v %v", resp.AgentCapabilities.McpCapabilities, err)
	}
	check("no serverId", map[string]any{"type": "acp", "name": "t"}, "mcpServers[0].serverId", "missing")
	check("empty serverId", acpServerRaw("t", ""), "mcpServers[0].serverId", "must not be empty")
	check("no name", map[string]any{"type": "acp", "serverId": "x"}, "mcpServers[0].name", "missing")
	check("empty name", acpServerRaw("", "x"), "mcpServers[0].name", "must not be empty")
	// The SDK's own client spells serverId as id: refused, saying so.
	_, err = h.conn.NewSession(h.ctx(), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{acpServer("t", "x")}})
	if reqCode(err) != -32602 || !strings.Contains(err.Error(), "old name") {
		t.Errorf("the SDK's id: %v", err)
	}
}
