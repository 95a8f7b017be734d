package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// forkResult is the result of session/fork as the ACP schema has it.
type forkResult struct {
	SessionID string `json:"sessionId"`
	Modes     struct {
		CurrentModeID string `json:"currentModeId"`
	} `json:"modes"`
	ConfigOptions []struct {
		ID           string `json:"id"`
		CurrentValue string `json:"currentValue"`
	} `json:"configOptions"`
}

// fork forks session src over raw ACP with one server of the test's.
func fork(t *testing.T, a *agent, src acpsdk.SessionId, servers ...acpsdk.McpServer) forkResult {
	t.Helper()
	r := a.call(t, "session/fork", map[string]any{"sessionId": src, "cwd": t.TempDir(), "mcpServers": nonNil(servers)})
	var res forkResult
	if r.Error != nil || json.Unmarshal(r.Result, &res) != nil || res.SessionID == "" {
		t.Fatalf("session/fork: %s", r.Raw)
	}
	return res
}

func nonNil(s []acpsdk.McpServer) []acpsdk.McpServer {
	if s == nil {
		return []acpsdk.McpServer{}
	}
	return s
}

// modelTalk renders the messages of a model request, one "role: text"
// line each.
func modelTalk(r fakellm.Request) string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(m.Role + ": " + m.Content + "\n")
	}
	return b.String()
}

// TestForkAndDeleteOverRawACP drives session/fork and session/delete as
// an editor sends them (raw JSON-RPC, the schema's field names) through
// the binary: initialize advertises both; the fork's model (a fake
// OpenAI-compatible endpoint) sees the source's conversation, with the
// source's model choice, "always" decision and mode, and the fork's own
// server, in a process of its own; the source is unchanged and usable;
// deleting the live fork stops its server and the server's child, and
// deleting the closed source removes its files; neither is listed or
// loadable after; an unknown id is -32602 naming it.
func TestForkAndDeleteOverRawACP(t *testing.T) {
	t.Parallel()
	llm := fakellm.Start(
		fakellm.Turn{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "mcp__calc__add", Arguments: `{"a":2,"b":3}`}}},
		fakellm.Turn{Text: "five"},
		fakellm.Turn{ToolCalls: []fakellm.ToolCall{{ID: "c2", Name: "mcp__calc__add", Arguments: `{"a":1,"b":1}`}}},
		fakellm.Turn{Text: "two"},
		fakellm.Turn{Text: "still here"},
	)
	defer llm.Close()
	llm.SetModels(fakellm.DefaultModel, "other-model")
	state := t.TempDir()
	a := startAgent(t, state, "--model", fakellm.DefaultModel, "--base-url", llm.URL)
	a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_always" }
	init := a.call(t, "initialize", map[string]any{"protocolVersion": 1})
	for _, want := range []string{`"delete":{}`, `"fork":{}`, `"providers":{}`} {
		if !strings.Contains(string(init.Result), want) {
			t.Errorf("initialize lacks %s: %s", want, init.Raw)
		}
	}

	recSrc, srcRecord := recordFile(t)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("calc", "-record", recSrc)}})
	if err != nil {
		t.Fatal(err)
	}
	src := resp.SessionId
	if _, err := a.conn.SetSessionConfigOption(ctx30(t), acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{SessionId: src, ConfigId: "model", Value: "other-model"}}); err != nil {
		t.Fatal(err)
	}
	prompt(t, a, src, "add 2 and 3")
	srcLog := filepath.Join(state, "sessions", string(src), "log.jsonl")
	before, err := os.ReadFile(srcLog)
	if err != nil {
		t.Fatal(err)
	}

	recFork, forkRecord := recordFile(t)
	f := fork(t, a, src, stdioServer("calc", "-record", recFork, "-grandchild"))
	if f.SessionID == string(src) || f.Modes.CurrentModeID != "ask" || !strings.Contains(mustJSON(f.ConfigOptions), `"currentValue":"other-model"`) {
		t.Errorf("fork: %+v", f)
	}
	forked := acpsdk.SessionId(f.SessionID)
	prompt(t, a, forked, "and 1 plus 1?")
	got := llm.Requests()[2]
	if talk := modelTalk(got); got.Model != "other-model" || !strings.Contains(talk, "user: add 2 and 3\n") || !strings.Contains(talk, "assistant: five\n") ||
		!strings.HasSuffix(talk, "user: and 1 plus 1?\n") {
		t.Errorf("the fork's model (%s) got:\n%s", got.Model, talk)
	}
	if len(a.client.asked) != 1 {
		t.Errorf("%d permission requests, want 1: the fork has the source's \"always allow\"", len(a.client.asked))
	}
	testbin.WaitFor(t, "the fork's server and its child", func() bool { return len(pids(forkRecord())) == 2 })
	srcPids, forkPids := pids(srcRecord()), pids(forkRecord())
	if len(srcPids) != 1 || srcPids[0] == forkPids[0] {
		t.Errorf("server processes: source %v, fork %v", srcPids, forkPids)
	}
	if after, _ := os.ReadFile(srcLog); string(after) != string(before) {
		t.Error("the fork changed the source's log")
	}
	prompt(t, a, src, "still there?")
	if talk := modelTalk(llm.Requests()[4]); strings.Contains(talk, "1 plus 1") || !strings.Contains(talk, "add 2 and 3") {
		t.Errorf("the source's history:\n%s", talk)
	}
	if _, err := a.conn.SetSessionMode(ctx30(t), acpsdk.SetSessionModeRequest{SessionId: src, ModeId: "auto"}); err != nil {
		t.Fatal(err)
	}
	second := fork(t, a, src)
	if second.Modes.CurrentModeID != "auto" {
		t.Errorf("second fork's mode %q", second.Modes.CurrentModeID)
	}

	// Delete the live fork: its server and the server's child go first.
	if r := a.call(t, "session/delete", map[string]any{"sessionId": forked}); r.Error != nil || string(r.Result) != "{}" {
		t.Fatalf("delete the live fork: %s", r.Raw)
	}
	for _, pid := range forkPids {
		if testbin.Alive(pid) {
			t.Errorf("pid %d of the deleted session is alive", pid)
		}
	}
	if !testbin.Alive(srcPids[0]) {
		t.Error("deleting the fork stopped the source's server")
	}
	// Delete the source once closed, and the second fork.
	if _, err := a.conn.CloseSession(ctx30(t), acpsdk.CloseSessionRequest{SessionId: src}); err != nil {
		t.Fatal(err)
	}
	for _, sid := range []string{string(src), second.SessionID} {
		if r := a.call(t, "session/delete", map[string]any{"sessionId": sid}); r.Error != nil {
			t.Fatalf("delete %s: %s", sid, r.Raw)
		}
	}
	if entries, err := os.ReadDir(filepath.Join(state, "sessions")); err != nil || len(entries) != 0 {
		t.Errorf("left in the state directory: %v %v", entries, err)
	}
	list, err := a.conn.ListSessions(ctx30(t), acpsdk.ListSessionsRequest{})
	if err != nil || len(list.Sessions) != 0 {
		t.Errorf("list after delete: %+v %v", list, err)
	}
	_, err = a.conn.LoadSession(ctx30(t), acpsdk.LoadSessionRequest{SessionId: src, Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err == nil || !strings.Contains(err.Error(), "unknown session") {
		t.Errorf("load of a deleted session: %v", err)
	}
	r := a.call(t, "session/delete", map[string]any{"sessionId": "sess_nope"})
	if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, `"sess_nope"`) {
		t.Errorf("delete of an unknown session: %s", r.Raw)
	}
	r = a.call(t, "session/fork", map[string]any{"sessionId": "sess_nope", "cwd": t.TempDir(), "mcpServers": []any{}})
	if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, `"sess_nope"`) {
		t.Errorf("fork of an unknown session: %s", r.Raw)
	}
}
