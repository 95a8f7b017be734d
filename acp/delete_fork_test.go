package acp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// startedPids returns the pids of the "started <pid>" lines of a test
// server's record file.
func startedPids(t *testing.T, rec string) []int {
	t.Helper()
	var out []int
	for _, l := range readRecord(t, rec) {
		if rest, ok := strings.CutPrefix(l, "started "); ok {
			if pid, err := strconv.Atoi(strings.TrimSpace(rest)); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}

// sessionFiles reports whether the store holds anything of session sid.
func sessionFiles(t *testing.T, h *harness, sid acpsdk.SessionId) bool {
	t.Helper()
	_, err := os.Lstat(filepath.Join(h.opts.Store.Dir(), "sessions", string(sid)))
	return !os.IsNotExist(err)
}

// TestInitializeAdvertisesMethods: initialize advertises
// sessionCapabilities.delete (which acp-go-sdk's types lack) and fork,
// and agentCapabilities.providers only when models are built from
// settings.
func TestInitializeAdvertisesMethods(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		opts      acp.Options
		providers bool
	}{{acp.Options{Provider: scripted(says("x"))}, false}, {acp.Options{Models: newEndpointModels()}, true}} {
		h := newHarness(t, tc.opts, nil)
		r := h.call("initialize", map[string]any{"protocolVersion": 1})
		for _, want := range []string{`"delete":{}`, `"fork":{}`, `"list":{}`, `"close":{}`, `"resume":{}`} {
			if !strings.Contains(string(r.Result), want) {
				t.Errorf("initialize lacks %s: %s", want, r.Raw)
			}
		}
		if got := strings.Contains(string(r.Result), `"providers":{}`); got != tc.providers {
			t.Errorf("providers advertised %v, want %v: %s", got, tc.providers, r.Raw)
		}
		// The SDK's client still reads the response.
		if resp, err := h.conn.Initialize(h.ctx(), acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber}); err != nil || resp.AgentCapabilities.SessionCapabilities.Fork == nil {
			t.Errorf("initialize through the SDK: %+v %v", resp, err)
		}
	}
}

// TestDeleteSession: session/delete removes a stored session and a live
// one (its running turn ends cancelled and its server process is gone
// first); neither is listed, loadable or on disk afterwards; an unknown,
// invalid or missing id is invalid params naming it, and a delete sent
// as a notification is not run.
func TestDeleteSession(t *testing.T) {
	t.Parallel()
	m := &blockingModel{started: make(chan struct{}, 1), release: make(chan struct{})}
	h := newHarness(t, acp.Options{Provider: m}, nil)
	stored := h.newSession().SessionId
	h.closeSession(stored)
	rec := filepath.Join(t.TempDir(), "record")
	live := h.newSession(stdioServer("alpha", "-record", rec)).SessionId
	testbin.WaitFor(t, "the server's pid", func() bool { return len(startedPids(t, rec)) == 1 })
	pid := startedPids(t, rec)[0]
	done := make(chan acpsdk.PromptResponse, 1)
	go func() {
		resp, _ := h.conn.Prompt(h.ctx(), acpsdk.PromptRequest{SessionId: live, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("hi")}})
		done <- resp
	}()
	<-m.started

	// A notification is not run: nobody would learn the outcome.
	if _, err := h.in.Write([]byte(`{"jsonrpc":"2.0","method":"session/delete","params":{"sessionId":"` + string(stored) + `"}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	// The filter reads lines in order: once a request sent after the
	// notification is answered, the notification has been dealt with.
	if r := h.call("session/list", map[string]any{}); r.Error != nil || !strings.Contains(r.Raw, string(stored)) {
		t.Fatalf("session/list after a session/delete notification: %s", r.Raw)
	}
	for _, sid := range []acpsdk.SessionId{stored, live} {
		if !sessionFiles(t, h, sid) {
			t.Fatalf("session %s not stored before the delete", sid)
		}
		if r := h.call("session/delete", map[string]any{"sessionId": sid}); r.Error != nil || string(r.Result) != "{}" {
			t.Fatalf("session/delete %s: %s", sid, r.Raw)
		}
		if sessionFiles(t, h, sid) {
			t.Errorf("session %s still on disk", sid)
		}
	}
	if resp := <-done; resp.StopReason != acpsdk.StopReasonCancelled {
		t.Errorf("the running turn ended %q", resp.StopReason)
	}
	if testbin.Alive(pid) {
		t.Errorf("the deleted session's server (pid %d) is alive", pid)
	}
	list, err := h.conn.ListSessions(h.ctx(), acpsdk.ListSessionsRequest{})
	if err != nil || len(list.Sessions) != 0 {
		t.Errorf("list after delete: %+v %v", list, err)
	}
	_, err = h.conn.LoadSession(h.ctx(), acpsdk.LoadSessionRequest{SessionId: stored, Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if reqCode(err) != -32602 || !strings.Contains(err.Error(), "unknown session") {
		t.Errorf("load of a deleted session: %v", err)
	}
	if _, err := h.conn.Prompt(h.ctx(), acpsdk.PromptRequest{SessionId: live, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("hi")}}); reqCode(err) != -32602 {
		t.Errorf("prompt of a deleted session: %v", err)
	}
	for _, tc := range []struct {
		params any
		want   string
	}{
		{map[string]any{"sessionId": "sess_nope"}, `unknown session \"sess_nope\"`},
		{map[string]any{"sessionId": stored}, `unknown session \"` + string(stored) + `\"`},
		{map[string]any{"sessionId": "../etc"}, "invalid session id"},
		{map[string]any{}, `"path":"sessionId"`},
		{map[string]any{"sessionId": 7}, "must be a string"},
		{[]int{1}, "params must be an object"},
	} {
		if r := h.call("session/delete", tc.params); r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Raw, tc.want) {
			t.Errorf("delete %s: %s, want -32602 with %s", mustJSON(tc.params), r.Raw, tc.want)
		}
	}
}

// TestForkSession: session/fork makes a session with its own id, log and
// server processes whose model sees the source's conversation (through
// the real OpenAI-compatible client and a fake endpoint), with the
// source's model choice, "always" decisions and mode; the source's log is
// unchanged, it stays open and usable with its own history, and its
// server outlives the fork's; an unknown source is invalid params.
func TestForkSession(t *testing.T) {
	t.Parallel()
	llm := fakellm.Start(
		fakellm.Turn{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "mcp__alpha__add", Arguments: `{"a":2,"b":3}`}}},
		fakellm.Turn{Text: "five"},
		// The fork: add runs without asking (the decision was copied).
		fakellm.Turn{ToolCalls: []fakellm.ToolCall{{ID: "c2", Name: "mcp__alpha__add", Arguments: `{"a":1,"b":1}`}}},
		fakellm.Turn{Text: "two"},
		fakellm.Turn{Text: "source again"},
	)
	defer llm.Close()
	var (
		asked int
		mu    sync.Mutex
	)
	fc := &fakeClient{RequestPermissionFunc: answer("allow_always", &asked, &mu)}
	h := newHarness(t, acp.Options{Models: newEndpointModels(), Config: configOf(t, `{"model": {"baseUrl": "`+llm.URL+`", "model": "`+fakellm.DefaultModel+`", "choices": ["choice-x"]}}`)}, fc)
	recSrc, recFork := filepath.Join(t.TempDir(), "src"), filepath.Join(t.TempDir(), "fork")
	src := h.newSession(stdioServer("alpha", "-record", recSrc)).SessionId
	if _, err := h.conn.SetSessionConfigOption(h.ctx(), acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{SessionId: src, ConfigId: "model", Value: "choice-x"}}); err != nil {
		t.Fatal(err)
	}
	h.prompt(src, "add 2 and 3")
	srcLog := filepath.Join(h.opts.Store.Dir(), "sessions", string(src), "log.jsonl")
	before, err := os.ReadFile(srcLog)
	if err != nil {
		t.Fatal(err)
	}

	resp, err := h.conn.UnstableForkSession(h.ctx(), acpsdk.UnstableForkSessionRequest{SessionId: src, Cwd: t.TempDir(),
		McpServers: []acpsdk.UnstableMcpServer{{Stdio: stdioServer("alpha", "-record", recFork).Stdio}}})
	if err != nil {
		t.Fatal(err)
	}
	fork := resp.SessionId
	if fork == "" || fork == src || resp.Modes == nil || resp.Modes.CurrentModeId != "ask" {
		t.Fatalf("fork response %+v", resp)
	}
	if !strings.Contains(mustJSON(resp.ConfigOptions), `"currentValue":"choice-x"`) {
		t.Errorf("the fork's model picker: %s", mustJSON(resp.ConfigOptions))
	}
	h.fc.rec.waitFor(t, 0, fork, "the fork's commands", isCommands)
	h.settledServers(fork)
	h.prompt(fork, "and one plus one?")
	reqs := llm.Requests()
	got := reqs[2]
	var said []string
	for _, m := range got.Messages {
		said = append(said, m.Role+": "+m.Content)
	}
	if got.Model != "choice-x" || len(got.Messages) < 5 || !strings.Contains(strings.Join(said, "\n"), "user: add 2 and 3") ||
		!strings.Contains(strings.Join(said, "\n"), "assistant: five") || said[len(said)-1] != "user: and one plus one?" {
		t.Errorf("the fork's model got %s:\n%s", got.Model, strings.Join(said, "\n"))
	}
	if asked != 1 {
		t.Errorf("%d permission requests, want 1 (the fork has the source's \"always allow\")", asked)
	}
	srcPids, forkPids := startedPids(t, recSrc), startedPids(t, recFork)
	if len(srcPids) != 1 || len(forkPids) != 1 || srcPids[0] == forkPids[0] {
		t.Errorf("server processes: source %v, fork %v", srcPids, forkPids)
	}

	// The source: unchanged, open, with its own history.
	if after, _ := os.ReadFile(srcLog); string(after) != string(before) {
		t.Error("the fork changed the source's log")
	}
	h.closeSession(fork)
	if !testbin.Alive(srcPids[0]) || testbin.Alive(forkPids[0]) {
		t.Errorf("after closing the fork: source server alive %v, fork's %v", testbin.Alive(srcPids[0]), testbin.Alive(forkPids[0]))
	}
	h.prompt(src, "still there?")
	last := llm.Requests()[4].Messages
	if !strings.Contains(mustJSON(last), "add 2 and 3") || strings.Contains(mustJSON(last), "one plus one") {
		t.Errorf("the source's history: %s", mustJSON(last))
	}

	// The mode is copied as it is at the fork.
	if _, err := h.conn.SetSessionMode(h.ctx(), acpsdk.SetSessionModeRequest{SessionId: src, ModeId: "auto"}); err != nil {
		t.Fatal(err)
	}
	resp, err = h.conn.UnstableForkSession(h.ctx(), acpsdk.UnstableForkSessionRequest{SessionId: src, Cwd: t.TempDir(), McpServers: []acpsdk.UnstableMcpServer{}})
	if err != nil || resp.Modes.CurrentModeId != "auto" {
		t.Fatalf("second fork: %+v %v", resp, err)
	}
	list, err := h.conn.ListSessions(h.ctx(), acpsdk.ListSessionsRequest{})
	if err != nil || len(list.Sessions) != 3 || !slices.ContainsFunc(list.Sessions, func(s acpsdk.SessionInfo) bool {
		return s.SessionId == fork && s.Title != nil && *s.Title == "add 2 and 3 (fork)"
	}) {
		t.Errorf("list: %s %v", mustJSON(list), err)
	}

	_, err = h.conn.UnstableForkSession(h.ctx(), acpsdk.UnstableForkSessionRequest{SessionId: "sess_nope", Cwd: t.TempDir(), McpServers: []acpsdk.UnstableMcpServer{}})
	if reqCode(err) != -32602 || !strings.Contains(err.Error(), `unknown session \"sess_nope\"`) {
		t.Errorf("fork of an unknown session: %v", err)
	}
	_, err = h.conn.UnstableForkSession(context.Background(), acpsdk.UnstableForkSessionRequest{SessionId: src, Cwd: "relative", McpServers: []acpsdk.UnstableMcpServer{}})
	if reqCode(err) != -32602 {
		t.Errorf("fork with a relative cwd: %v", err)
	}
}

// TestForkBadSourceAndTitles: a fork whose sessionId is "", null, missing
// or not a string is -32602 naming sessionId and makes no session; a
// chain of 30 forks keeps one " (fork)" and a title of at most 80
// characters.
func TestForkBadSourceAndTitles(t *testing.T) {
	t.Parallel()
	h := newHarness(t, acp.Options{}, nil)
	src := h.newSession().SessionId
	h.prompt(src, strings.Repeat("a long first prompt that names the session ", 4))
	listed := func() int {
		r := h.call("session/list", map[string]any{})
		var res struct {
			Sessions []json.RawMessage `json:"sessions"`
		}
		if err := json.Unmarshal(r.Result, &res); err != nil {
			t.Fatalf("session/list: %s", r.Raw)
		}
		return len(res.Sessions)
	}
	before := listed()
	for _, id := range []any{"", nil, 7} {
		r := h.call("session/fork", map[string]any{"sessionId": id, "cwd": t.TempDir(), "mcpServers": []any{}})
		if r.Error == nil || r.Error.Code != -32602 || r.Error.Data.Path != "sessionId" {
			t.Errorf("fork of %v: %s", id, r.Raw)
		}
	}
	if n := listed(); n != before {
		t.Errorf("%d sessions after refused forks, want %d", n, before)
	}
	from := src
	var title string
	for range 30 {
		r := h.call("session/fork", map[string]any{"sessionId": from, "cwd": t.TempDir(), "mcpServers": []any{}})
		var res struct {
			SessionID acpsdk.SessionId `json:"sessionId"`
		}
		if r.Error != nil || json.Unmarshal(r.Result, &res) != nil {
			t.Fatalf("fork: %s", r.Raw)
		}
		from = res.SessionID
	}
	r := h.call("session/list", map[string]any{})
	var res struct {
		Sessions []struct {
			SessionID acpsdk.SessionId `json:"sessionId"`
			Title     string           `json:"title"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Sessions {
		if s.SessionID == from {
			title = s.Title
		}
	}
	if n := len([]rune(title)); n > 81 || strings.Count(title, "(fork)") != 1 || !strings.HasSuffix(title, "… (fork)") {
		t.Errorf("the 30th fork's title (%d characters): %q", n, title)
	}
}
