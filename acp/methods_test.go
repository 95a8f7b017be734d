package acp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/gateway"
)

// TestInitialize: the agent names itself and advertises what it serves.
func TestInitialize(t *testing.T) {
	t.Parallel()
	h := newHarness(t, acp.Options{Name: "acpgate-test", Version: "9.9.9"}, nil)
	resp, err := h.conn.Initialize(h.ctx(), acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber})
	if err != nil {
		t.Fatal(err)
	}
	c := resp.AgentCapabilities
	switch {
	case resp.ProtocolVersion != acpsdk.ProtocolVersionNumber:
		t.Errorf("protocol %d", resp.ProtocolVersion)
	case resp.AgentInfo == nil || resp.AgentInfo.Name != "acpgate-test" || resp.AgentInfo.Version != "9.9.9":
		t.Errorf("agentInfo %+v", resp.AgentInfo)
	case len(resp.AuthMethods) != 0:
		t.Errorf("auth methods %+v", resp.AuthMethods)
	case !c.LoadSession || !c.McpCapabilities.Http || !c.McpCapabilities.Sse || !c.McpCapabilities.Acp:
		t.Errorf("capabilities %+v", c)
	case !c.PromptCapabilities.Image || !c.PromptCapabilities.EmbeddedContext || c.PromptCapabilities.Audio:
		t.Errorf("prompt capabilities %+v", c.PromptCapabilities)
	case c.SessionCapabilities.List == nil || c.SessionCapabilities.Close == nil || c.SessionCapabilities.Resume == nil:
		t.Errorf("session capabilities %+v", c.SessionCapabilities)
	}
}

// TestMethodErrors: every method answers a request it cannot serve with
// invalid params (-32602), never -32000 ("authentication required").
func TestMethodErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t, acp.Options{}, nil)
	ctx := h.ctx()
	live := h.newSession().SessionId
	cwd := t.TempDir()
	const missing = acpsdk.SessionId("sess_doesnotexist")
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"authenticate", func() error {
			_, err := h.conn.Authenticate(ctx, acpsdk.AuthenticateRequest{MethodId: "oauth"})
			return err
		}},
		{"set_config_option", func() error {
			_, err := h.conn.SetSessionConfigOption(ctx, acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{SessionId: live, ConfigId: "model", Value: "x"}})
			return err
		}},
		{"new, relative cwd", func() error {
			_, err := h.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: "relative/dir", McpServers: []acpsdk.McpServer{}})
			return err
		}},
		{"new, unknown profile", func() error {
			_, err := h.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}, Meta: map[string]any{"profile": "nope"}})
			return err
		}},
		{"load, unknown session", func() error {
			_, err := h.conn.LoadSession(ctx, acpsdk.LoadSessionRequest{SessionId: missing, Cwd: cwd, McpServers: []acpsdk.McpServer{}})
			return err
		}},
		{"load, relative cwd", func() error {
			_, err := h.conn.LoadSession(ctx, acpsdk.LoadSessionRequest{SessionId: live, Cwd: "x", McpServers: []acpsdk.McpServer{}})
			return err
		}},
		{"load, already open", func() error {
			_, err := h.conn.LoadSession(ctx, acpsdk.LoadSessionRequest{SessionId: live, Cwd: cwd, McpServers: []acpsdk.McpServer{}})
			return err
		}},
		{"resume, unknown session", func() error {
			_, err := h.conn.ResumeSession(ctx, acpsdk.ResumeSessionRequest{SessionId: missing, Cwd: cwd, McpServers: []acpsdk.McpServer{}})
			return err
		}},
		{"resume, already open", func() error {
			_, err := h.conn.ResumeSession(ctx, acpsdk.ResumeSessionRequest{SessionId: live, Cwd: cwd, McpServers: []acpsdk.McpServer{}})
			return err
		}},
		{"close, unknown session", func() error {
			_, err := h.conn.CloseSession(ctx, acpsdk.CloseSessionRequest{SessionId: missing})
			return err
		}},
		{"set_mode, unknown mode", func() error {
			_, err := h.conn.SetSessionMode(ctx, acpsdk.SetSessionModeRequest{SessionId: live, ModeId: "yolo"})
			return err
		}},
		{"set_mode, unknown session", func() error {
			_, err := h.conn.SetSessionMode(ctx, acpsdk.SetSessionModeRequest{SessionId: missing, ModeId: "auto"})
			return err
		}},
		{"prompt, unknown session", func() error {
			_, err := h.conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: missing, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("hi")}})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code := reqCode(tc.call()); code != -32602 {
				t.Errorf("code %d, want -32602", code)
			}
		})
	}
}

// TestNewSessionResponse: a new session starts in ask mode, offers both
// modes, and its _meta lists its servers, connecting (session/new does not
// wait for them); a session_info_update reports them ready with their
// tools, and the announcement lists the slash commands, then the servers'
// prompts too.
func TestNewSessionResponse(t *testing.T) {
	t.Parallel()
	h := newHarness(t, acp.Options{}, nil)
	resp := h.newSession(stdioServer("alpha"))
	if !strings.HasPrefix(string(resp.SessionId), "sess_") {
		t.Errorf("session id %q", resp.SessionId)
	}
	if resp.Modes == nil || resp.Modes.CurrentModeId != "ask" || len(resp.Modes.AvailableModes) != 2 ||
		resp.Modes.AvailableModes[0].Id != "ask" || resp.Modes.AvailableModes[1].Id != "auto" {
		t.Errorf("modes %+v", resp.Modes)
	}
	servers := serversOf(resp.Meta)
	if len(servers) != 1 || servers[0]["name"] != "alpha" || servers[0]["state"] != "connecting" || servers[0]["transport"] != "stdio" {
		t.Errorf("_meta servers %+v", servers)
	}
	if wired := h.answeredServers(resp.SessionId); mustJSON(wired) != mustJSON(servers) {
		t.Errorf("servers of the answer on the wire %v, want %v", wired, servers)
	}
	servers = h.settledServers(resp.SessionId)
	if alpha := servers[0]; len(servers) != 1 || alpha["name"] != "alpha" || alpha["state"] != "ready" || alpha["tools"].(float64) < 10 {
		t.Errorf("servers after they settled %+v", servers)
	}
	names := func(u acpsdk.SessionUpdate) string {
		var names []string
		for _, c := range u.AvailableCommandsUpdate.AvailableCommands {
			names = append(names, c.Name)
		}
		return strings.Join(names, ",")
	}
	if first := h.fc.rec.waitFor(t, 0, resp.SessionId, "commands", isCommands); !strings.HasPrefix(names(first), "mcp,tools,call,resources,reload") {
		t.Errorf("commands %v", names(first))
	}
	h.fc.rec.waitFor(t, 0, resp.SessionId, "the prompts as commands", func(u acpsdk.SessionUpdate) bool {
		return isCommands(u) && names(u) == "mcp,tools,call,resources,reload,compact,skills,context,alpha.greet,alpha.plain"
	})
}

// TestSetMode: set_mode answers with current_mode_update, and the mode is
// kept with the session (load restores it).
func TestSetMode(t *testing.T) {
	t.Parallel()
	h := newHarness(t, acp.Options{}, nil)
	sid := h.newSession().SessionId
	from := h.fc.rec.len()
	if _, err := h.conn.SetSessionMode(h.ctx(), acpsdk.SetSessionModeRequest{SessionId: sid, ModeId: "auto"}); err != nil {
		t.Fatal(err)
	}
	ups := h.fc.rec.since(from, sid)
	// current_mode_update, then config_option_update (see TestConfigOptionsModeInStep).
	if len(ups) != 2 || ups[0].CurrentModeUpdate == nil || ups[0].CurrentModeUpdate.CurrentModeId != "auto" || ups[1].ConfigOptionUpdate == nil {
		t.Fatalf("updates %s", dump(ups))
	}
	h.closeSession(sid)
	resp, err := h.conn.LoadSession(h.ctx(), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err != nil || resp.Modes == nil || resp.Modes.CurrentModeId != "auto" {
		t.Errorf("load: %+v %v", resp.Modes, err)
	}
}

func (h *harness) closeSession(sid acpsdk.SessionId) {
	h.t.Helper()
	if _, err := h.conn.CloseSession(h.ctx(), acpsdk.CloseSessionRequest{SessionId: sid}); err != nil {
		h.t.Fatalf("session/close: %v", err)
	}
}

// TestListSessions: list names every session with its cwd and the title
// of its first prompt, filters by cwd, and refuses a cursor it did not
// issue.
func TestListSessions(t *testing.T) {
	t.Parallel()
	h := newHarness(t, acp.Options{Provider: scripted(says("ok"))}, nil)
	first := h.newSession().SessionId
	second := h.newSession().SessionId
	h.prompt(second, "  Summarise   the\nrepository  ")
	resp, err := h.conn.ListSessions(h.ctx(), acpsdk.ListSessionsRequest{})
	if err != nil || len(resp.Sessions) != 2 || resp.NextCursor != nil {
		t.Fatalf("list: %+v %v", resp, err)
	}
	byID := map[acpsdk.SessionId]acpsdk.SessionInfo{}
	for _, s := range resp.Sessions {
		byID[s.SessionId] = s
		if s.UpdatedAt == nil || *s.UpdatedAt == "" {
			t.Errorf("session %s without updatedAt", s.SessionId)
		}
	}
	if s := byID[second]; s.Title == nil || *s.Title != "Summarise the repository" {
		t.Errorf("title %v", s.Title)
	}
	if s := byID[first]; s.Title != nil {
		t.Errorf("a session without prompts has title %q", *s.Title)
	}
	cwd := byID[first].Cwd
	resp, err = h.conn.ListSessions(h.ctx(), acpsdk.ListSessionsRequest{Cwd: &cwd})
	if err != nil || len(resp.Sessions) != 1 || resp.Sessions[0].SessionId != first {
		t.Errorf("list by cwd: %+v %v", resp, err)
	}
	bad := "not-a-cursor"
	if _, err := h.conn.ListSessions(h.ctx(), acpsdk.ListSessionsRequest{Cursor: &bad}); reqCode(err) != -32602 {
		t.Errorf("bad cursor: %v", err)
	}
}

// TestCloseEndsTurnAndSession: closing a session cancels its running
// turn (stopReason cancelled) and the session is gone.
func TestCloseEndsTurnAndSession(t *testing.T) {
	t.Parallel()
	m := &blockingModel{started: make(chan struct{}, 1), release: make(chan struct{})}
	h := newHarness(t, acp.Options{Provider: m}, nil)
	sid := h.newSession(stdioServer("alpha")).SessionId
	done := make(chan acpsdk.PromptResponse, 1)
	go func() {
		resp, _ := h.conn.Prompt(h.ctx(), acpsdk.PromptRequest{SessionId: sid, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("hi")}})
		done <- resp
	}()
	<-m.started
	h.closeSession(sid)
	if resp := <-done; resp.StopReason != acpsdk.StopReasonCancelled {
		t.Errorf("stop reason %q", resp.StopReason)
	}
	_, err := h.conn.Prompt(h.ctx(), acpsdk.PromptRequest{SessionId: sid, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("again")}})
	if reqCode(err) != -32602 {
		t.Errorf("prompt after close: %v", err)
	}
}

// TestCancel: session/cancel ends the running turn with cancelled, and
// the session takes the next prompt.
func TestCancel(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 1)
	m := &fakeModel{}
	m.CompleteFunc = func(ctx context.Context, req gateway.ModelRequest, onDelta func(gateway.Delta)) (gateway.ModelResponse, error) {
		if gateway.PlainText(req.Messages[len(req.Messages)-1].Content) == "wait" {
			started <- struct{}{}
			<-ctx.Done()
			return gateway.ModelResponse{}, ctx.Err()
		}
		return says("fine")(req, onDelta)
	}
	h := newHarness(t, acp.Options{Provider: m}, nil)
	sid := h.newSession().SessionId
	done := make(chan acpsdk.PromptResponse, 1)
	go func() {
		resp, _ := h.conn.Prompt(h.ctx(), acpsdk.PromptRequest{SessionId: sid, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("wait")}})
		done <- resp
	}()
	<-started
	if err := h.conn.Cancel(h.ctx(), acpsdk.CancelNotification{SessionId: sid}); err != nil {
		t.Fatal(err)
	}
	if resp := <-done; resp.StopReason != acpsdk.StopReasonCancelled {
		t.Errorf("stop reason %q", resp.StopReason)
	}
	// A cancel for an unknown session is harmless. (One for this session
	// with no turn running is not sent: notifications are handled
	// concurrently with requests, so it could reach the next prompt.)
	_ = h.conn.Cancel(h.ctx(), acpsdk.CancelNotification{SessionId: "sess_unknown"})
	resp, ups := h.prompt(sid, "next")
	if resp.StopReason != acpsdk.StopReasonEndTurn || agentText(ups) != "fine" {
		t.Errorf("next prompt: %q %q", resp.StopReason, agentText(ups))
	}
}

// TestLoadReplaysAndResumeRestores: load replays the stored session
// (the user's prompt, the agent's merged text, each tool call in its
// final state) before answering, and the model gets the history back;
// resume restores the history without a replay.
func TestLoadReplaysAndResumeRestores(t *testing.T) {
	t.Parallel()
	m := scripted(calls("c1", "mcp__alpha__echo", `{"text":"from the tool"}`), says("the end"))
	h := newHarness(t, acp.Options{Provider: m}, nil)
	sid := h.newSession(stdioServer("alpha")).SessionId
	h.prompt(sid, "use echo")
	h.closeSession(sid)

	from := h.fc.rec.len()
	resp, err := h.conn.LoadSession(h.ctx(), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("alpha")}})
	if err != nil {
		t.Fatal(err)
	}
	ups := h.fc.rec.since(from, sid)
	if len(ups) < 4 || ups[0].UserMessageChunk == nil || ups[0].UserMessageChunk.Content.Text.Text != "use echo" {
		t.Fatalf("replay: %s", dump(ups))
	}
	if got := toolUpdates(ups, "c1"); len(got) != 1 || got[0].ToolCall == nil || got[0].ToolCall.Status != acpsdk.ToolCallStatusCompleted || toolText(ups, "c1") != "from the tool" {
		t.Errorf("replayed tool call: %s", dump(got))
	}
	if agentText(ups) != "the end" {
		t.Errorf("replayed text %q", agentText(ups))
	}
	if !isCommands(ups[len(ups)-1]) {
		t.Errorf("load did not announce the commands: %s", dump(ups))
	}
	if servers := resp.Meta["acpgate"].(map[string]any)["mcpServers"].([]any); len(servers) != 1 {
		t.Errorf("load _meta %+v", resp.Meta)
	}

	// The history reaches the model on the next turn.
	h.prompt(sid, "again")
	reqs := m.requests()
	if last := reqs[len(reqs)-1]; len(last.Messages) != 5 || last.Messages[0].Content[0].Text != "use echo" || last.Messages[2].Role != gateway.RoleTool {
		t.Errorf("history after load: %+v", last.Messages)
	}

	h.closeSession(sid)
	from = h.fc.rec.len()
	if _, err := h.conn.ResumeSession(h.ctx(), acpsdk.ResumeSessionRequest{SessionId: sid, Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	ups = h.fc.rec.since(from, sid)
	if len(ups) != 1 || !isCommands(ups[0]) {
		t.Errorf("resume sent more than the announcement: %s", dump(ups))
	}
	h.prompt(sid, "third")
	reqs = m.requests()
	if last := reqs[len(reqs)-1]; len(last.Messages) != 7 {
		t.Errorf("history after resume: %d messages", len(last.Messages))
	}
}

// TestEveryRequestAnsweredBeforeExit: requests a client sends just before
// closing its end (stdin EOF) are all answered before Serve returns:
// initialize, session/new (with a server that never initializes),
// session/list and two unknown methods, twenty times over.
func TestEveryRequestAnsweredBeforeExit(t *testing.T) {
	t.Parallel()
	batch := func(cwd string) string {
		stuck, _ := json.Marshal(stdioServer("stuck", "-init-hang").Stdio)
		return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}
{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":` + mustJSON(cwd) + `,"mcpServers":[` + string(stuck) + `]}}
{"jsonrpc":"2.0","id":"three","method":"session/list","params":{}}
{"jsonrpc":"2.0","id":4,"method":"no/such/method","params":{}}
{"jsonrpc":"2.0","id":5,"method":"_acpgate/unknown","params":{}}
`
	}
	for i := range 20 {
		p := startAgent(t, acp.Options{})
		var out bytes.Buffer
		read := make(chan error, 1)
		go func() { _, err := io.Copy(&out, p.out); read <- err }()
		if _, err := io.WriteString(p.in, batch(t.TempDir())); err != nil {
			t.Fatal(err)
		}
		p.stop(t)
		if err := <-read; err != nil {
			t.Fatal(err)
		}
		answered := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal([]byte(line), &msg) == nil && msg.ID != nil && msg.Method == "" {
				answered[string(msg.ID)] = true
			}
		}
		for _, id := range []string{`1`, `2`, `"three"`, `4`, `5`} {
			if !answered[id] {
				t.Fatalf("run %d: request %s was not answered; output:\n%s", i, id, out.String())
			}
		}
	}
}
