package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// The test binary doubles as a tiny ACP agent when ACPCLI_TEST_FAKE_AGENT=1
// (see TestMain). Further environment variables steer it:
//
//	ACPCLI_FAKE_MODE=die       exit with status 7 in the middle of a prompt
//	ACPCLI_FAKE_MODE=servers   report MCP servers in _meta: connecting, then ready
//	ACPCLI_FAKE_MODE=servers-stuck  report them connecting, and never ready
//	ACPCLI_FAKE_RECORD=prefix  copy its stdin to prefix.in and stdout to prefix.out
//
// On a prompt it thinks, echoes the prompt text, starts a tool call, asks
// for permission once, completes (allowed) or fails (rejected) the tool call
// and ends the turn. The prompt "fail" gets a JSON-RPC error; "wait" waits
// for session/cancel.
type fakeAgent struct {
	conn *acp.AgentSideConnection
	mode string
}

// runFakeAgent serves ACP on stdin/stdout until stdin closes.
func runFakeAgent() int {
	var in io.Reader = os.Stdin
	var out io.Writer = os.Stdout
	if prefix := os.Getenv("ACPCLI_FAKE_RECORD"); prefix != "" {
		fin, err1 := os.Create(prefix + ".in")
		fout, err2 := os.Create(prefix + ".out")
		if err1 != nil || err2 != nil {
			fmt.Fprintln(os.Stderr, "fake agent:", err1, err2)
			return 1
		}
		defer fin.Close()
		defer fout.Close()
		in = io.TeeReader(in, fin)
		out = io.MultiWriter(out, fout)
	}
	fmt.Fprintln(os.Stderr, "fake agent: started")
	a := &fakeAgent{mode: os.Getenv("ACPCLI_FAKE_MODE")}
	// The SDK starts reading in the constructor, before a.conn is set and
	// before SetLogger: hold the input back until both are done.
	gate := make(chan struct{})
	a.conn = acp.NewAgentSideConnection(a, out, &lineTap{r: in, gate: gate})
	a.conn.SetLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	close(gate)
	<-a.conn.Done()
	return 0
}

func (a *fakeAgent) Initialize(context.Context, acp.InitializeRequest) (acp.InitializeResponse, error) {
	return acp.InitializeResponse{
		ProtocolVersion: 1,
		AgentInfo:       &acp.Implementation{Name: "fake-agent", Version: "1.2.3"},
		AgentCapabilities: acp.AgentCapabilities{
			LoadSession:     true,
			McpCapabilities: acp.McpCapabilities{Http: true, Sse: true},
		},
		AuthMethods: []acp.AuthMethod{},
	}, nil
}

func (a *fakeAgent) NewSession(context.Context, acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	resp := acp.NewSessionResponse{SessionId: "sess-1"}
	if a.mode != "servers" && a.mode != "servers-stuck" {
		return resp, nil
	}
	// As acpgate does: the response reports the servers connecting, a
	// session_info_update what they became.
	servers := func(state string, tools int) map[string]any {
		return map[string]any{"acpgate": map[string]any{"mcpServers": []any{
			map[string]any{"name": "demo", "transport": "stdio", "state": state, "tools": tools},
			map[string]any{"name": "web", "transport": "http", "state": "failed", "tools": 0, "error": "refused\x1b[31m"},
		}}}
	}
	resp.Meta = servers("connecting", 0)
	if a.mode == "servers" {
		go func() {
			_ = a.conn.SessionUpdate(context.Background(), acp.SessionNotification{SessionId: "sess-1",
				Update: acp.SessionUpdate{SessionInfoUpdate: &acp.SessionSessionInfoUpdate{SessionUpdate: "session_info_update", Meta: servers("ready", 3)}}})
		}()
	}
	return resp, nil
}

func (a *fakeAgent) LoadSession(ctx context.Context, p acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	for _, u := range []acp.SessionUpdate{acp.UpdateUserMessageText("earlier question"), acp.UpdateAgentMessageText("earlier answer")} {
		if err := a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: p.SessionId, Update: u}); err != nil {
			return acp.LoadSessionResponse{}, err
		}
	}
	return acp.LoadSessionResponse{}, nil
}

func (a *fakeAgent) Prompt(ctx context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	var text string
	for _, b := range p.Prompt {
		if b.Text != nil {
			text += b.Text.Text
		}
	}
	send := func(u acp.SessionUpdate) error {
		return a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: p.SessionId, Update: u})
	}
	switch {
	case text == "fail":
		return acp.PromptResponse{}, acp.NewInternalError(map[string]any{"details": "boom"})
	case text == "wait":
		if err := send(acp.UpdateAgentMessageText("waiting\n")); err != nil {
			return acp.PromptResponse{}, err
		}
		<-ctx.Done()
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	case a.mode == "die":
		_ = send(acp.UpdateAgentMessageText("about to die"))
		time.Sleep(100 * time.Millisecond)
		os.Exit(7)
	}
	if err := send(acp.UpdateAgentThoughtText("pondering")); err != nil {
		return acp.PromptResponse{}, err
	}
	if err := send(acp.UpdateAgentMessageText("echo: " + text)); err != nil {
		return acp.PromptResponse{}, err
	}
	if err := a.toolCall(ctx, p.SessionId, send); err != nil {
		return acp.PromptResponse{}, err
	}
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

// toolCall starts a tool call, asks for permission and finishes the call.
func (a *fakeAgent) toolCall(ctx context.Context, sid acp.SessionId, send func(acp.SessionUpdate) error) error {
	if err := send(acp.StartToolCall("t1", "Read file", acp.WithStartKind(acp.ToolKindRead), acp.WithStartStatus(acp.ToolCallStatusPending))); err != nil {
		return err
	}
	resp, err := a.conn.RequestPermission(ctx, acp.RequestPermissionRequest{
		SessionId: sid,
		ToolCall:  acp.ToolCallUpdate{ToolCallId: "t1", Title: acp.Ptr("Read file")},
		Options: []acp.PermissionOption{
			{OptionId: "always", Name: "Always allow", Kind: acp.PermissionOptionKindAllowAlways},
			{OptionId: "allow", Name: "Allow", Kind: acp.PermissionOptionKindAllowOnce},
			{OptionId: "reject", Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
		},
	})
	if err != nil {
		return err
	}
	status, out := acp.ToolCallStatusFailed, "denied by user\nsecond line"
	if resp.Outcome.Selected != nil && strings.HasPrefix(string(resp.Outcome.Selected.OptionId), "allow") {
		status, out = acp.ToolCallStatusCompleted, "line 1\nline 2"
	}
	return send(acp.SessionUpdate{ToolCallUpdate: &acp.SessionToolCallUpdate{
		ToolCallId: "t1",
		Status:     &status,
		Content:    []acp.ToolCallContent{acp.ToolContent(acp.TextBlock(out))},
	}})
}

func (a *fakeAgent) Cancel(context.Context, acp.CancelNotification) error { return nil }

func (a *fakeAgent) Authenticate(context.Context, acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	return acp.AuthenticateResponse{}, nil
}

func (a *fakeAgent) CloseSession(context.Context, acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	return acp.CloseSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionClose)
}

func (a *fakeAgent) ListSessions(context.Context, acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	return acp.ListSessionsResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionList)
}

func (a *fakeAgent) ResumeSession(context.Context, acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	return acp.ResumeSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionResume)
}

func (a *fakeAgent) SetSessionConfigOption(context.Context, acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	return acp.SetSessionConfigOptionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetConfigOption)
}

func (a *fakeAgent) SetSessionMode(context.Context, acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	return acp.SetSessionModeResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetMode)
}
