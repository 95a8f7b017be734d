package main_test

import (
	"encoding/json"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

// steerReply sends _session/steering and returns its result's JSON (or
// fails the test on an error answer).
func steerReply(t *testing.T, a *agent, params map[string]any) string {
	t.Helper()
	r := a.call(t, "_session/steering", params)
	if r.Error != nil {
		t.Fatalf("_session/steering: %s", r.Raw)
	}
	return string(r.Result)
}

// steerText steers the text prompt text into session sid and returns the
// result's JSON (steerReply).
func steerText(t *testing.T, a *agent, sid acpsdk.SessionId, text string) string {
	t.Helper()
	return steerReply(t, a, map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}})
}

// userTexts are the texts of the user_message_chunk updates the client
// got, in order.
func userTexts(ns []acpsdk.SessionNotification) []string {
	var out []string
	for _, n := range ns {
		if u := n.Update.UserMessageChunk; u != nil && u.Content.Text != nil {
			out = append(out, u.Content.Text.Text)
		}
	}
	return out
}

// TestSteeringAdvertised: initialize advertises the extension as
// claude-agent-acp does (_meta.steering.supported, and
// agentCapabilities._meta.claudeCode.promptQueueing).
func TestSteeringAdvertised(t *testing.T) {
	t.Parallel()
	a := launchAgent(t, t.TempDir(), nil)
	r := a.call(t, "initialize", map[string]any{"protocolVersion": acpsdk.ProtocolVersionNumber, "clientCapabilities": map[string]any{}})
	var init struct {
		Meta struct {
			Steering struct {
				Supported *bool `json:"supported"`
			} `json:"steering"`
		} `json:"_meta"`
		AgentCapabilities struct {
			Meta struct {
				ClaudeCode struct {
					PromptQueueing *bool `json:"promptQueueing"`
				} `json:"claudeCode"`
			} `json:"_meta"`
		} `json:"agentCapabilities"`
	}
	if err := json.Unmarshal(r.Result, &init); err != nil || init.Meta.Steering.Supported == nil || !*init.Meta.Steering.Supported ||
		init.AgentCapabilities.Meta.ClaudeCode.PromptQueueing == nil || !*init.AgentCapabilities.Meta.ClaudeCode.PromptQueueing {
		t.Errorf("initialize: %s", r.Raw)
	}
}

// TestSteerDuringSlowTool: a prompt steered while a slow MCP tool runs
// is injected: the model's next request has it as a user message after
// the tool's result, the client sees it as the user's, and session/load
// replays it in place (and gives it to the model again). Idle, a steer
// with idleBehavior promptRequired is left to the client; without it, it
// starts a turn of its own. A prompt sent while a turn runs is queued and
// answered after it.
func TestSteerDuringSlowTool(t *testing.T) {
	t.Parallel()
	llm := fakellm.Start(
		fakellm.Turn{ToolCalls: []fakellm.ToolCall{{ID: "slow1", Name: "mcp__s__sleep", Arguments: `{"ms":1500}`}}},
		fakellm.Turn{Text: "done, and steered"},
	)
	defer llm.Close()
	state, cwd := t.TempDir(), t.TempDir()
	a := startAgent(t, state, "--model", "fake-model", "--base-url", llm.URL)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{stdioServer("s")}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	if _, err := a.conn.SetSessionMode(ctx30(t), acpsdk.SetSessionModeRequest{SessionId: sid, ModeId: "auto"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan acpsdk.PromptResponse, 1)
	go func() { done <- prompt(t, a, sid, "start the slow work") }()
	a.client.waitUpdate(t, "the slow call running", func(u acpsdk.SessionUpdate) bool {
		return u.ToolCallUpdate != nil && u.ToolCallUpdate.ToolCallId == "slow1" && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == acpsdk.ToolCallStatusInProgress
	})
	if got := steerText(t, a, sid, "also mention the weather"); got != `{"outcome":"injected"}` {
		t.Fatalf("steer during the call: %s", got)
	}
	if r := <-done; r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop %s", r.StopReason)
	}
	reqs := llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	msgs := reqs[1].Messages
	if last, tool := msgs[len(msgs)-1], msgs[len(msgs)-2]; last.Role != "user" || last.Content != "also mention the weather" || tool.Role != "tool" || tool.ToolCallID != "slow1" {
		t.Errorf("second request ends with %+v, %+v; want the tool result, then the steered prompt", tool, last)
	}
	if got := strings.Join(userTexts(a.client.all()), "|"); got != "also mention the weather" {
		t.Errorf("user messages shown: %q, want the steered one", got)
	}

	// Idle: promptRequired leaves the prompt with the client; a bad
	// idleBehavior is refused.
	params := map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "x"}}, "_meta": map[string]any{"steering": map[string]any{"idleBehavior": "promptRequired"}}}
	if got := steerReply(t, a, params); got != `{"outcome":"promptRequired","reason":"noRunningTurn"}` {
		t.Errorf("idle steer with promptRequired: %s", got)
	}
	params["_meta"] = map[string]any{"steering": map[string]any{"idleBehavior": "later"}}
	if r := a.call(t, "_session/steering", params); r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "idleBehavior") {
		t.Errorf("bad idleBehavior: %s", r.Raw)
	}
	if r := a.call(t, "_session/steering", map[string]any{"sessionId": sid, "prompt": []any{}}); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("empty prompt: %s", r.Raw)
	}

	// Idle, by default: a turn of its own, shown to the client.
	llm.Push(fakellm.Turn{Text: "a turn of its own"})
	if got := steerText(t, a, sid, "steer when idle"); got != `{"outcome":"startedNewTurn"}` {
		t.Errorf("idle steer: %s", got)
	}
	a.client.waitUpdate(t, "the idle steer shown", func(u acpsdk.SessionUpdate) bool {
		return u.UserMessageChunk != nil && u.UserMessageChunk.Content.Text != nil && u.UserMessageChunk.Content.Text.Text == "steer when idle"
	})

	// A prompt while a turn runs waits for it (behind the steered turn, if
	// it still runs), and is answered after it.
	hold, started := make(chan struct{}), make(chan struct{})
	llm.Push(fakellm.Turn{Text: "first", Started: started, Hold: hold}, fakellm.Turn{Text: "second"})
	first := make(chan acpsdk.PromptResponse, 1)
	go func() { first <- prompt(t, a, sid, "first prompt") }()
	<-started
	queuedShown := func() int {
		n := 0
		for _, x := range a.client.all() {
			if u := x.Update.SessionInfoUpdate; u != nil && strings.Contains(mustJSON(u.Meta), `"queuedPrompts":1`) {
				n++
			}
		}
		return n
	}
	before := queuedShown()
	second := make(chan acpsdk.PromptResponse, 1)
	go func() { second <- prompt(t, a, sid, "second prompt") }()
	a.client.waitUpdate(t, "the second prompt queued", func(acpsdk.SessionUpdate) bool { return queuedShown() > before })
	select {
	case r := <-second:
		t.Fatalf("the queued prompt was answered (%s) before the running one", r.StopReason)
	default:
	}
	close(hold)
	if r := <-first; r.StopReason != acpsdk.StopReasonEndTurn {
		t.Errorf("first: stop %s", r.StopReason)
	}
	if r := <-second; r.StopReason != acpsdk.StopReasonEndTurn {
		t.Errorf("second: stop %s", r.StopReason)
	}
	if reqs := llm.Requests(); !strings.Contains(reqs[len(reqs)-1].Messages[len(reqs[len(reqs)-1].Messages)-1].Content, "second prompt") {
		t.Errorf("last request: %+v", reqs[len(reqs)-1].Messages)
	}
	_ = a.stdin.Close()
	<-a.exited

	// session/load replays the steered prompt where it joined the turn,
	// and the model gets it again in its history.
	b := startAgent(t, state, "--model", "fake-model", "--base-url", llm.URL)
	if _, err := b.conn.LoadSession(ctx30(t), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: cwd, McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, n := range b.client.all() {
		switch u := n.Update; {
		case u.UserMessageChunk != nil && u.UserMessageChunk.Content.Text != nil:
			order = append(order, "user:"+u.UserMessageChunk.Content.Text.Text)
		case u.ToolCall != nil:
			order = append(order, "call:"+string(u.ToolCall.ToolCallId))
		}
	}
	if got := strings.Join(order, "|"); !strings.HasPrefix(got, "user:start the slow work|call:slow1|user:also mention the weather|user:steer when idle|") {
		t.Errorf("replay order %q", got)
	}
	llm.Push(fakellm.Turn{Text: "after load"})
	prompt(t, b, sid, "after load")
	reqs = llm.Requests()
	var roles []string
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == "tool" || m.Content == "also mention the weather" || m.Content == "done, and steered" {
			roles = append(roles, m.Role+":"+m.Content[:min(len(m.Content), 12)])
		}
	}
	if len(roles) < 3 || !strings.HasPrefix(roles[0], "tool:") || roles[1] != "user:also mention" || roles[2] != "assistant:done, and st" {
		t.Errorf("history after load: %q", roles)
	}
}

// TestSteerCarriedAfterModelError: a prompt steered while the model
// request is under way, into a turn that then ends without taking it (the
// endpoint refuses the request), is not lost: the same turn goes on with
// it, shown as the user's, and session/prompt is answered after it.
func TestSteerCarriedAfterModelError(t *testing.T) {
	t.Parallel()
	hold, started := make(chan struct{}), make(chan struct{})
	llm := fakellm.Start(
		fakellm.Turn{Status: 400, Started: started, Hold: hold},
		fakellm.Turn{Text: "carried on"},
	)
	defer llm.Close()
	a := startAgent(t, t.TempDir(), "--model", "fake-model", "--base-url", llm.URL)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	done := make(chan acpsdk.PromptResponse, 1)
	go func() { done <- prompt(t, a, sid, "first") }()
	<-started
	if got := steerText(t, a, sid, "and then this"); got != `{"outcome":"injected"}` {
		t.Fatalf("steer: %s", got)
	}
	close(hold)
	if r := <-done; r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop %s", r.StopReason)
	}
	reqs := llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2 (the refused one, then the steered prompt)", len(reqs))
	}
	if last := reqs[1].Messages[len(reqs[1].Messages)-1]; last.Role != "user" || last.Content != "and then this" {
		t.Errorf("the second request ends with %+v, want the steered prompt", last)
	}
	if got := strings.Join(userTexts(a.client.all()), "|"); got != "and then this" {
		t.Errorf("user messages shown: %q", got)
	}
	if text := agentText(a.client.all()); !strings.Contains(text, "carried on") {
		t.Errorf("answer %q", text)
	}
}

// TestSteerDuringSlashCommand: a prompt steered while a slash command
// runs (a `/call` of a slow tool: no model step takes it) is not lost:
// once the command is done the same turn goes on with it as a model
// request, and session/prompt is answered after that.
func TestSteerDuringSlashCommand(t *testing.T) {
	t.Parallel()
	llm := fakellm.Start(fakellm.Turn{Text: "after the command"})
	defer llm.Close()
	a := startAgent(t, t.TempDir(), "--model", "fake-model", "--base-url", llm.URL)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("s")}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	a.serversUntil(t, resp, "s settles", settled)
	if _, err := a.conn.SetSessionMode(ctx30(t), acpsdk.SetSessionModeRequest{SessionId: sid, ModeId: "auto"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan acpsdk.PromptResponse, 1)
	go func() { done <- prompt(t, a, sid, `/call mcp__s__sleep {"ms":1500}`) }()
	a.client.waitUpdate(t, "the slow call running", func(u acpsdk.SessionUpdate) bool {
		return u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == acpsdk.ToolCallStatusInProgress
	})
	if got := steerText(t, a, sid, "now summarise"); got != `{"outcome":"injected"}` {
		t.Fatalf("steer during the command: %s", got)
	}
	if r := <-done; r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop %s", r.StopReason)
	}
	reqs := llm.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1 (the steered prompt after the command)", len(reqs))
	}
	if last := reqs[0].Messages[len(reqs[0].Messages)-1]; last.Role != "user" || last.Content != "now summarise" {
		t.Errorf("the request ends with %+v, want the steered prompt", last)
	}
	if text := agentText(a.client.all()); !strings.Contains(text, "after the command") {
		t.Errorf("answer %q", text)
	}
}
