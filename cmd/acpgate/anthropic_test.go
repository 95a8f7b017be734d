package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/fake/fakeanthropic"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// toolResultText is the text the model was sent as the result of call id
// in request r ("" if none).
func toolResultText(r fakeanthropic.Request, id string) string {
	for _, m := range r.Messages {
		for _, b := range m.Blocks() {
			if b["type"] == "tool_result" && b["tool_use_id"] == id {
				return mustJSON(b["content"])
			}
		}
	}
	return ""
}

// TestAnthropicEndToEnd: with --provider anthropic and ANTHROPIC_API_KEY,
// a prompt's answer thinks (shown as thoughts) and makes two tool calls,
// whose results go back with the thinking block and its signature as
// returned; after a restart the resumed session sends the same blocks
// again; an MCP server's sampling request is answered by the Anthropic
// model. The key reaches the endpoint and nothing else: not the log, the
// ACP frames, the MCP server's environment or a workspace command's;
// OPENAI_API_KEY is not sent to the Anthropic endpoint.
func TestAnthropicEndToEnd(t *testing.T) {
	t.Parallel()
	const key = "sk-ant-e2e-5d1f0b7c9a"
	claude := fakeanthropic.Start(
		fakeanthropic.Turn{Blocks: []fakeanthropic.Block{
			fakeanthropic.Thinking("I should check the key stays hidden.", "sig-e2e-1=="),
			fakeanthropic.ToolUse("toolu_env", "mcp__s__env", `{"name":"ANTHROPIC_API_KEY"}`),
			fakeanthropic.ToolUse("toolu_cmd", "run_command", `{"command":"echo \"key=$ANTHROPIC_API_KEY\""}`),
		}, Usage: &fakeanthropic.Usage{InputTokens: 20, OutputTokens: 30, CacheCreationInputTokens: 1500}},
		fakeanthropic.Turn{Blocks: []fakeanthropic.Block{fakeanthropic.Text("Neither sees the key.")}},
		fakeanthropic.Turn{Blocks: []fakeanthropic.Block{fakeanthropic.Text("Still here.")}},
		fakeanthropic.Turn{Blocks: []fakeanthropic.Block{fakeanthropic.Text("sampled answer")}},
	)
	defer claude.Close()
	claude.RequireKey(key)
	state, cwd := t.TempDir(), t.TempDir()
	logFile := filepath.Join(t.TempDir(), "acpgate.log")
	env := []string{"ANTHROPIC_API_KEY=" + key}
	args := []string{"--provider", "anthropic", "--base-url", claude.URL, "--model", fakeanthropic.DefaultModel, "--workspace-tools", "local", "--log-file", logFile}
	allow := func(acpsdk.RequestPermissionRequest) string { return "allow_once" }

	a := startAgentEnv(t, state, env, args...)
	a.client.answer = allow
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{stdioServer("s")}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	if r := prompt(t, a, sid, "does anyone see the key?"); r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop %s", r.StopReason)
	}
	if got := agentText(a.client.all()); got != "Neither sees the key." {
		t.Errorf("answer %q", got)
	}
	if got := thoughtText(a.client.all()); got != "I should check the key stays hidden." {
		t.Errorf("thoughts %q", got)
	}
	reqs := claude.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if got := toolResultText(reqs[1], "toolu_env"); !strings.Contains(got, "(unset)") {
		t.Errorf("the MCP server's environment: %s", got)
	}
	if got := toolResultText(reqs[1], "toolu_cmd"); !strings.Contains(got, `key=\n`) || strings.Contains(got, key) {
		t.Errorf("the command's environment: %s", got)
	}
	returned := `[{"signature":"sig-e2e-1==","thinking":"I should check the key stays hidden.","type":"thinking"},` +
		`{"id":"toolu_env","input":{"name":"ANTHROPIC_API_KEY"},"name":"mcp__s__env","type":"tool_use"},` +
		`{"id":"toolu_cmd","input":{"command":"echo \"key=$ANTHROPIC_API_KEY\""},"name":"run_command","type":"tool_use"}]`
	sentBack := canonical(t, reqs[1].Messages[1].Content)
	if sentBack != canonical(t, json.RawMessage(returned)) {
		t.Errorf("the answer sent back:\n%s\nwant\n%s", sentBack, returned)
	}
	for _, r := range reqs {
		if h := r.Header; h.Get("Authorization") != "Bearer "+key && h.Get("X-Api-Key") != key || strings.Contains(mustJSON(h), "sk-test-key") {
			t.Errorf("request headers %v", h)
		}
	}
	_ = a.stdin.Close()
	<-a.exited

	b := startAgentEnv(t, state, env, args...)
	b.client.answer = allow
	if _, err := b.conn.ResumeSession(ctx30(t), acpsdk.ResumeSessionRequest{SessionId: sid, Cwd: cwd, McpServers: []acpsdk.McpServer{stdioServer("s")}}); err != nil {
		t.Fatal(err)
	}
	prompt(t, b, sid, "still there?")
	reqs = claude.Requests()
	if got := canonical(t, reqs[2].Messages[1].Content); got != sentBack {
		t.Errorf("the resumed session sent the thinking blocks as\n%s\nwant\n%s", got, sentBack)
	}
	if last := reqs[2].Messages[len(reqs[2].Messages)-1]; last.Text() != "still there?" {
		t.Errorf("the resumed request ends with %s", mustJSON(last))
	}

	// Sampling: the MCP server asks the session's model.
	text := callText(t, b, sid, "mcp__s__sample", `{"prompt":"say hi","max_tokens":50}`)
	if !strings.Contains(text, "sampled answer") || !strings.Contains(text, fakeanthropic.DefaultModel) {
		t.Errorf("sampling result %s", text)
	}
	if s := claude.Requests()[3]; len(s.Messages) != 1 || s.Messages[0].Text() != "say hi" || s.MaxTokens != 50 {
		t.Errorf("sampling request %s", s.Raw)
	}
	_ = b.stdin.Close()
	<-b.exited

	logged, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	for where, out := range map[string]string{"log file": string(logged), "stderr": a.stderr.String() + b.stderr.String(),
		"ACP frames": a.stdout.String() + b.stdout.String(), "session log": sessionLog(t, state, sid)} {
		if strings.Contains(out, key) {
			t.Errorf("the key is in the %s", where)
		}
	}
	if !strings.Contains(string(logged), `provider=anthropic`) {
		t.Errorf("the log does not name the provider:\n%s", logged)
	}
}

// canonical is a JSON value re-encoded by encoding/json (object keys
// sorted), for comparing what was sent with what was returned.
func canonical(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var g any
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(g)
	return string(out)
}

// TestAnthropicModelPicker: with an Anthropic model the picker lists GET
// /v1/models (asked with the key) with the display names, and a model
// picked there is the one the next request names.
func TestAnthropicModelPicker(t *testing.T) {
	t.Parallel()
	claude := fakeanthropic.Start(fakeanthropic.Turn{Blocks: []fakeanthropic.Block{fakeanthropic.Text("from claude-b")}})
	defer claude.Close()
	const key = "sk-ant-picker-3e9a"
	claude.RequireKey(key)
	claude.SetModels(fakeanthropic.Model{ID: "claude-a", DisplayName: "Claude A"}, fakeanthropic.Model{ID: "claude-b", DisplayName: "Claude B"})
	a := startAgentEnv(t, t.TempDir(), []string{"ANTHROPIC_API_KEY=" + key}, "--provider", "anthropic", "--base-url", claude.URL, "--model", "claude-a")
	var resp acpsdk.NewSessionResponse
	testbin.WaitFor(t, "the endpoint's models in the picker", func() bool {
		resp = openSession(t, a, "")
		_, values := modelOption(t, resp.ConfigOptions)
		return slices.Contains(values, "claude-b")
	})
	var names []string
	for _, o := range resp.ConfigOptions {
		if o.Select != nil && o.Select.Id == "model" {
			for _, v := range *o.Select.Options.Ungrouped {
				names = append(names, v.Name)
			}
		}
	}
	if !slices.Contains(names, "Claude B") {
		t.Errorf("picker names %v", names)
	}
	if _, err := a.conn.SetSessionConfigOption(ctx30(t), acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{SessionId: resp.SessionId, ConfigId: "model", Value: "claude-b"}}); err != nil {
		t.Fatal(err)
	}
	prompt(t, a, resp.SessionId, "hi")
	if got := claude.Requests()[0].Model; got != "claude-b" {
		t.Errorf("the request named model %q", got)
	}
}
