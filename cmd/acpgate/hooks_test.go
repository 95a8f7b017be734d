package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

// projectHooks is a project's .acpgate/hooks.json, in Claude Code's
// format: a PreToolUse hook that blocks fail (exit 2), one that rewrites
// echo's input (and records what it was given, through
// $CLAUDE_PROJECT_DIR), a hung one on add (fail-open at its timeout), and
// a PostToolUse hook that adds context to add's result.
const projectHooks = `{"hooks": {
  "PreToolUse": [
    {"matcher": "mcp__s__fail", "hooks": [{"type": "command", "command": "echo 'fail is forbidden here' >&2; exit 2"}]},
    {"matcher": "mcp__s__echo", "hooks": [{"type": "command", "command": "cat > \"$CLAUDE_PROJECT_DIR/pre-input.json\"; echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\",\"updatedInput\":{\"text\":\"rewritten by a hook\"}}}'"}]},
    {"matcher": "mcp__s__add", "hooks": [{"type": "command", "command": "sleep 30", "timeout": 0.5}]}
  ],
  "PostToolUse": [
    {"matcher": "mcp__s__add", "hooks": [{"type": "command", "args": ["sh", "-c", "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PostToolUse\",\"additionalContext\":\"remember to double-check sums\"}}'"]}]}
  ]
}}`

// toolMessages are the tool messages of a model request, by call id.
func toolMessages(r fakellm.Request) map[string]string {
	out := map[string]string{}
	for _, m := range r.Messages {
		if m.Role == "tool" {
			out[m.ToolCallID] = m.Content
		}
	}
	return out
}

// TestProjectHooks: a project's hooks do not run until the user trusts
// them (asked through the client, once per project and hook files'
// digest, remembered across runs); trusted, a PreToolUse hook blocks an
// MCP call (the server never sees it, the model gets the framed reason),
// another rewrites a call's input, a hung one is reported at its timeout
// and the call goes on, and a PostToolUse hook adds framed context to a
// result. Every run is shown as a card.
func TestProjectHooks(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cwd, ".acpgate"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, ".acpgate", "hooks.json"), []byte(projectHooks), 0o644); err != nil {
		t.Fatal(err)
	}
	calls := fakellm.Turn{ToolCalls: []fakellm.ToolCall{
		{ID: "f1", Name: "mcp__s__fail", Arguments: `{}`},
		{ID: "e1", Name: "mcp__s__echo", Arguments: `{"text":"original"}`},
		{ID: "a1", Name: "mcp__s__add", Arguments: `{"a":2,"b":3}`},
	}}
	llm := fakellm.Start(calls, fakellm.Turn{Text: "untrusted done"}, calls, fakellm.Turn{Text: "trusted done"})
	defer llm.Close()
	state := t.TempDir()
	a := startAgent(t, state, "--model", "fake-model", "--base-url", llm.URL)
	var mu sync.Mutex
	trustAnswer := "reject_once"
	trustAsked := 0
	a.client.answer = func(p acpsdk.RequestPermissionRequest) string {
		if p.ToolCall.Title != nil && strings.Contains(*p.ToolCall.Title, "project's hooks") {
			mu.Lock()
			defer mu.Unlock()
			trustAsked++
			return trustAnswer
		}
		return "allow_once"
	}
	asked := func() int {
		mu.Lock()
		defer mu.Unlock()
		return trustAsked
	}
	rec, record := recordFile(t)
	session := func(a *agent) acpsdk.SessionId {
		t.Helper()
		resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{stdioServer("s", "-record", rec)}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.conn.SetSessionMode(ctx30(t), acpsdk.SetSessionModeRequest{SessionId: resp.SessionId, ModeId: "auto"}); err != nil {
			t.Fatal(err)
		}
		return resp.SessionId
	}
	hookCards := func(a *agent) []string {
		var out []string
		for _, n := range a.client.all() {
			if c := n.Update.ToolCall; c != nil && strings.HasPrefix(c.Title, "Hook ") {
				out = append(out, c.Title+" "+string(c.Status))
			}
		}
		return out
	}

	// Not trusted: nothing runs.
	prompt(t, a, session(a), "use the tools")
	if asked() != 1 {
		t.Fatalf("asked %d times whether to trust the project's hooks, want 1", asked())
	}
	untrusted := toolMessages(llm.Requests()[1])
	if !strings.Contains(untrusted["e1"], "original") || strings.Contains(untrusted["f1"], "forbidden") || len(hookCards(a)) != 0 {
		t.Errorf("untrusted hooks ran: results %q, cards %q", untrusted, hookCards(a))
	}
	if !strings.Contains(record(), "call fail") {
		t.Errorf("the untrusted project's hook blocked fail: %s", record())
	}

	// Trusted (and remembered).
	mu.Lock()
	trustAnswer = "allow_always"
	mu.Unlock()
	before := strings.Count(record(), "call fail")
	prompt(t, a, session(a), "use the tools again")
	if asked() != 2 {
		t.Fatalf("asked %d times, want 2 (a one-session answer is not remembered)", asked())
	}
	got := toolMessages(llm.Requests()[3])
	if f := got["f1"]; !strings.Contains(f, "fail is forbidden here") || !strings.Contains(f, `<hook_output event="PreToolUse"`) {
		t.Errorf("blocked call's result: %q", f)
	}
	if strings.Count(record(), "call fail") != before {
		t.Errorf("the server saw the blocked call: %s", record())
	}
	if e := got["e1"]; !strings.Contains(e, "rewritten by a hook") || strings.Contains(e, "original") {
		t.Errorf("rewritten call's result: %q", e)
	}
	if in, err := os.ReadFile(filepath.Join(cwd, "pre-input.json")); err != nil || !strings.Contains(string(in), `"tool_name":"mcp__s__echo"`) || !strings.Contains(string(in), `"tool_input":{"text":"original"}`) || !strings.Contains(string(in), `"hook_event_name":"PreToolUse"`) {
		t.Errorf("the hook's stdin: %s (%v)", in, err)
	}
	if ad := got["a1"]; !strings.Contains(ad, "5") || !strings.Contains(ad, "remember to double-check sums") || !strings.Contains(ad, `<hook_output event="PostToolUse"`) {
		t.Errorf("add's result: %q", ad)
	}
	cards := strings.Join(hookCards(a), "\n")
	if !strings.Contains(cards, "Hook PreToolUse: sleep 30 failed") || !strings.Contains(cards, "Hook PostToolUse: sh -c") || strings.Count(cards, "Hook ") != 4 {
		t.Errorf("hook cards:\n%s", cards)
	}
	if !strings.Contains(a.stderr.String(), "hook timed out") {
		t.Errorf("the hung hook is not logged")
	}
	_ = a.stdin.Close()
	<-a.exited

	// A new run remembers the answer: no question, the hooks run.
	llm.Push(fakellm.Turn{ToolCalls: []fakellm.ToolCall{{ID: "e2", Name: "mcp__s__echo", Arguments: `{"text":"original"}`}}}, fakellm.Turn{Text: "remembered"})
	b := startAgent(t, state, "--model", "fake-model", "--base-url", llm.URL)
	b.client.answer = a.client.answer
	prompt(t, b, session(b), "once more")
	reqs := llm.Requests()
	if asked() != 2 || !strings.Contains(toolMessages(reqs[len(reqs)-1])["e2"], "rewritten by a hook") {
		t.Errorf("after a restart: asked %d times, result %q", asked(), toolMessages(reqs[len(reqs)-1])["e2"])
	}

	// A changed hooks file is a new question.
	if err := os.WriteFile(filepath.Join(cwd, ".acpgate", "hooks.json"), []byte(strings.Replace(projectHooks, "forbidden", "not allowed", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	llm.Push(fakellm.Turn{Text: "changed"})
	prompt(t, b, session(b), "after the change")
	if asked() != 3 {
		t.Errorf("asked %d times after the file changed, want 3", asked())
	}
}

// TestConfiguredHooks: hooks of the configuration file run with no
// question: SessionStart and UserPromptSubmit add framed context before
// the prompt, a Stop hook that blocks once makes the turn go on with its
// reason, and a UserPromptSubmit hook that exits 2 keeps a prompt from the
// model. The hooks get the environment acpgate gives commands: no API key.
func TestConfiguredHooks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	marker := filepath.Join(dir, "stopped-once")
	env := filepath.Join(dir, "env.txt")
	cfg := `{"hooks": {
  "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo the project uses tabs"}]}],
  "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "env > ` + env + `; if grep -q forbidden; then echo 'no forbidden prompts' >&2; exit 2; fi; echo it is Tuesday"}]}],
  "Stop": [{"hooks": [{"type": "command", "command": "if [ -e ` + marker + ` ]; then exit 0; fi; touch ` + marker + `; echo '{\"decision\":\"block\",\"reason\":\"run the tests before you stop\"}'"}]}],
  "Notification": [{"hooks": [{"type": "command", "command": "true"}]}]
}}`
	llm := fakellm.Start(fakellm.Turn{Text: "first answer"}, fakellm.Turn{Text: "tests run"})
	defer llm.Close()
	a := startAgent(t, t.TempDir(), "--model", "fake-model", "--base-url", llm.URL, "--config", writeConfig(t, cfg))
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: dir, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if r := prompt(t, a, resp.SessionId, "hello"); r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop %s", r.StopReason)
	}
	reqs := llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2 (the Stop hook makes the turn go on once)", len(reqs))
	}
	var user []string
	for _, m := range reqs[0].Messages {
		if m.Role == "user" {
			user = append(user, m.Content)
		}
	}
	first := strings.Join(user, "\n")
	if !strings.Contains(first, `<hook_output event="SessionStart"`) || !strings.Contains(first, "the project uses tabs") ||
		!strings.Contains(first, `<hook_output event="UserPromptSubmit"`) || !strings.Contains(first, "it is Tuesday") || !strings.HasSuffix(first, "hello") {
		t.Errorf("first request's user text: %q", first)
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != "user" || !strings.Contains(last.Content, "run the tests before you stop") || !strings.Contains(last.Content, `<hook_output event="Stop"`) {
		t.Errorf("the Stop hook's reason reached the model as %+v", last)
	}
	if e, err := os.ReadFile(env); err != nil || strings.Contains(string(e), "OPENAI_API_KEY") || !strings.Contains(string(e), "CLAUDE_PROJECT_DIR="+dir) {
		t.Errorf("the hook's environment (%v): %s", err, e)
	}
	if text := agentText(a.client.all()); !strings.Contains(text, "first answer") || !strings.Contains(text, "tests run") {
		t.Errorf("answer %q", text)
	}

	// A blocked prompt never reaches the model; the user is told why.
	n := len(llm.Requests())
	prompt(t, a, resp.SessionId, "something forbidden")
	if len(llm.Requests()) != n {
		t.Errorf("the blocked prompt reached the model")
	}
	if text := agentText(a.client.all()); !strings.Contains(text, "A UserPromptSubmit hook blocked this prompt: no forbidden prompts") {
		t.Errorf("said %q", text)
	}
}

// TestHooksUnderCommandSandbox: a hook runs under the profile's
// commandSandbox, as the local run tool does: under workspace-write it
// writes in the session's cwd, is refused outside it, and its card says
// how it was confined.
func TestHooksUnderCommandSandbox(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	dir, outside := t.TempDir(), t.TempDir()
	cfg := `{"agents": {"defaults": {"commandSandbox": {"files": "workspace-write", "failIfUnavailable": true}}},
  "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "touch ` + outside + `/leak 2> err.txt; echo in > inside.txt; echo confined"}]}]}}`
	llm := fakellm.Start(fakellm.Turn{Text: "answer"})
	defer llm.Close()
	a := startAgent(t, t.TempDir(), "--model", "fake-model", "--base-url", llm.URL, "--config", writeConfig(t, cfg))
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: dir, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	prompt(t, a, resp.SessionId, "hello")
	if _, err := os.Stat(filepath.Join(outside, "leak")); err == nil {
		t.Error("the hook wrote outside the workspace")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "err.txt")); err != nil || !strings.Contains(string(b), "Permission denied") {
		t.Errorf("the refused write's error (%v): %q", err, b)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "inside.txt")); err != nil || string(b) != "in\n" {
		t.Errorf("the write inside the cwd (%v): %q", err, b)
	}
	if out := mustJSON(a.client.all()); !strings.Contains(out, "sandbox: workspace-write, enforced") {
		t.Errorf("no card says how the hook was confined: %s", out)
	}
}

// TestPermissionRequestHookRewrites: a PermissionRequest hook that allows
// a call with updatedInput answers for the user (who is not asked) and
// the call runs with the hook's input (2+3 becomes 40+2); one that
// denies keeps the call from running.
func TestPermissionRequestHookRewrites(t *testing.T) {
	t.Parallel()
	cfg := `{"hooks": {"PermissionRequest": [
  {"matcher": "mcp__s__add", "hooks": [{"type": "command", "command": "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PermissionRequest\",\"decision\":{\"behavior\":\"allow\",\"updatedInput\":{\"a\":40,\"b\":2}}}}'"}]},
  {"matcher": "mcp__s__mirror", "hooks": [{"type": "command", "command": "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PermissionRequest\",\"decision\":{\"behavior\":\"deny\",\"message\":\"no mirrors today\"}}}'"}]}
]}}`
	llm := fakellm.Start(fakellm.Turn{ToolCalls: []fakellm.ToolCall{
		{ID: "a1", Name: "mcp__s__add", Arguments: `{"a":2,"b":3}`},
		{ID: "m1", Name: "mcp__s__mirror", Arguments: `{"content":{"secret":"mirrored"}}`},
	}}, fakellm.Turn{Text: "done"})
	defer llm.Close()
	a := startAgent(t, t.TempDir(), "--model", "fake-model", "--base-url", llm.URL, "--config", writeConfig(t, cfg))
	var mu sync.Mutex
	asked := 0
	a.client.answer = func(acpsdk.RequestPermissionRequest) string {
		mu.Lock()
		defer mu.Unlock()
		asked++
		return "allow_once"
	}
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("s")}})
	if err != nil {
		t.Fatal(err)
	}
	a.serversUntil(t, resp, "s settles", settled)
	prompt(t, a, resp.SessionId, "add and mirror")
	reqs := llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	got := toolMessages(reqs[1])
	if r := got["a1"]; !strings.Contains(r, "42") {
		t.Errorf("add's result %q, want 42: the hook's input", r)
	}
	if r := got["m1"]; strings.Contains(r, "mirrored") || !strings.Contains(r, "rejected") {
		t.Errorf("mirror's result %q, want it not run", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked != 0 {
		t.Errorf("the user was asked %d times; the hooks answered", asked)
	}
}
