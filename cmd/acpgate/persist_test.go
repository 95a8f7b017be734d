package main_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

// replayable reduces updates to what a replay must reproduce: the user's
// and the agent's text, thoughts, and each tool call's final state.
func replayable(ns []acpsdk.SessionNotification) string {
	var b strings.Builder
	calls := map[string]string{}
	var order []string
	for _, n := range ns {
		u := n.Update
		switch {
		case u.UserMessageChunk != nil:
			// The client sent these itself; replay checks them apart.
		case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
			b.WriteString("agent:" + u.AgentMessageChunk.Content.Text.Text + "\n")
		case u.AgentThoughtChunk != nil && u.AgentThoughtChunk.Content.Text != nil:
			b.WriteString("thought:" + u.AgentThoughtChunk.Content.Text.Text + "\n")
		case u.ToolCall != nil && !strings.HasPrefix(string(u.ToolCall.ToolCallId), "mcp-server-failed"):
			id := string(u.ToolCall.ToolCallId)
			if _, ok := calls[id]; !ok {
				order = append(order, id)
			}
			calls[id] = mustJSON(map[string]any{"title": u.ToolCall.Title, "kind": u.ToolCall.Kind, "status": u.ToolCall.Status, "content": u.ToolCall.Content, "in": u.ToolCall.RawInput, "out": u.ToolCall.RawOutput})
		case u.ToolCallUpdate != nil:
			id := string(u.ToolCallUpdate.ToolCallId)
			var c map[string]any
			_ = json.Unmarshal([]byte(calls[id]), &c)
			if s := u.ToolCallUpdate.Status; s != nil {
				c["status"] = *s
			}
			if u.ToolCallUpdate.Content != nil {
				c["content"] = u.ToolCallUpdate.Content
			}
			if u.ToolCallUpdate.RawOutput != nil {
				c["out"] = u.ToolCallUpdate.RawOutput
			}
			calls[id] = mustJSON(c)
		}
	}
	// Merge adjacent chunks the way a reader sees them.
	text := b.String()
	for _, k := range []string{"agent:", "thought:"} {
		for strings.Contains(text, "\n"+k) {
			before := text
			text = mergeRuns(text, k)
			if text == before {
				break
			}
		}
	}
	for _, id := range order {
		text += "call " + id + " " + calls[id] + "\n"
	}
	return text
}

// mergeRuns joins consecutive lines that start with prefix.
func mergeRuns(text, prefix string) string {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var out []string
	for _, l := range lines {
		if n := len(out); n > 0 && strings.HasPrefix(l, prefix) && strings.HasPrefix(out[n-1], prefix) {
			out[n-1] += strings.TrimPrefix(l, prefix)
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n") + "\n"
}

func TestRestartListLoadReplay(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	cwd := t.TempDir()
	llm := fakellm.Start(
		fakellm.Turn{Reasoning: "Let me look.", Text: "Checking…", ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "mcp__s__echo", Arguments: `{"text":"remembered"}`}}},
		fakellm.Turn{Text: "It said remembered."},
		fakellm.Turn{Text: "Yes, I remember: remembered."},
	)
	defer llm.Close()
	args := []string{"--model", "fake-model", "--base-url", llm.URL}

	a := startAgent(t, state, args...)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{stdioServer("s")}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	prompt(t, a, sid, "echo something for me")
	prompt(t, a, sid, `/call mcp__s__add {"a":1,"b":2}`)
	a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_always" }
	prompt(t, a, sid, `/call mcp__s__add {"a":1,"b":2}`)
	live := a.client.all()

	// stdin EOF: acpgate exits 0 and leaves nothing behind.
	_ = a.stdin.Close()
	select {
	case <-a.exited:
	case <-time.After(20 * time.Second):
		t.Fatal("acpgate did not exit on stdin EOF")
	}
	if code := a.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, a.stderr.String())
	}

	b := startAgent(t, state, args...)
	list, err := b.conn.ListSessions(ctx30(t), acpsdk.ListSessionsRequest{Cwd: &cwd})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].SessionId != sid || list.Sessions[0].Title == nil || *list.Sessions[0].Title != "echo something for me" || list.Sessions[0].UpdatedAt == nil {
		t.Fatalf("list: %s", mustJSON(list))
	}
	other := "/nowhere"
	if l, _ := b.conn.ListSessions(ctx30(t), acpsdk.ListSessionsRequest{Cwd: &other}); len(l.Sessions) != 0 {
		t.Errorf("cwd filter: %s", mustJSON(l))
	}
	load, err := b.conn.LoadSession(ctx30(t), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: cwd, McpServers: []acpsdk.McpServer{stdioServer("s")}})
	if err != nil {
		t.Fatal(err)
	}
	if load.Modes == nil || load.Modes.CurrentModeId != "ask" {
		t.Errorf("modes after load: %+v", load.Modes)
	}
	var users []string
	for _, n := range b.client.all() {
		if u := n.Update.UserMessageChunk; u != nil && u.Content.Text != nil {
			users = append(users, u.Content.Text.Text)
		}
	}
	if got := strings.Join(users, "|"); got != `echo something for me|/call mcp__s__add {"a":1,"b":2}|/call mcp__s__add {"a":1,"b":2}` {
		t.Errorf("replayed user messages: %s", got)
	}
	if got, want := replayable(b.client.all()), replayable(live); got != want {
		t.Errorf("replay differs\n got:\n%s\nwant:\n%s", got, want)
	}
	// The model history was restored: the next model call carries it.
	before := len(b.client.all())
	prompt(t, b, sid, "do you remember?")
	if text := agentText(b.client.all()[before:]); !strings.Contains(text, "I remember") {
		t.Errorf("answer %q", text)
	}
	msgs := llm.Requests()[2].Messages
	if len(msgs) < 5 || msgs[len(msgs)-1].Content != "do you remember?" || !strings.Contains(mustJSON(msgs), "remembered") {
		t.Errorf("history sent after load: %s", mustJSON(msgs))
	}
	// The "always allow" decision survived the restart: no question now.
	b.client.answer = nil
	prompt(t, b, sid, `/call mcp__s__add {"a":2,"b":2}`)
	if len(b.client.asked) != 0 {
		t.Errorf("asked again after allow_always: %d", len(b.client.asked))
	}
}

// TestBadInput writes raw lines: every bad request gets a clear JSON-RPC
// error and the agent keeps serving.
func TestBadInput(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(agentBin, "--state-dir", t.TempDir())
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		r := bufio.NewReader(stdout)
		for {
			l, err := r.ReadString('\n')
			if err != nil {
				return
			}
			lines <- l
		}
	}()
	defer func() {
		_ = stdin.Close()
		for range lines { // drain until the agent exits
		}
		_ = cmd.Wait()
	}()
	// next returns the agent's next line; waiting says for what.
	next := func(waiting string) string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the agent closed stdout before %s", waiting)
			}
			return l
		case <-time.After(20 * time.Second): // a hang guard
			t.Fatalf("no line from the agent: %s", waiting)
		}
		return ""
	}
	send := func(line string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatal(err)
		}
		for {
			l := next("answering " + line)
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("agent wrote a non-JSON line: %q", l)
			}
			if _, isNote := m["method"]; !isNote {
				return m
			}
		}
	}
	// waitInfo reads the notifications that follow until a
	// session_info_update whose _meta (as JSON) meets ok, and returns it.
	waitInfo := func(ok func(meta string) bool) string {
		t.Helper()
		for {
			l := next("a session_info_update reporting the servers")
			var m struct {
				Params struct {
					Update struct {
						Kind string         `json:"sessionUpdate"`
						Meta map[string]any `json:"_meta"`
					} `json:"update"`
				} `json:"params"`
			}
			if json.Unmarshal([]byte(l), &m) == nil && m.Params.Update.Kind == "session_info_update" && m.Params.Update.Meta != nil {
				if meta := mustJSON(m.Params.Update.Meta); ok(meta) {
					return meta
				}
			}
		}
	}
	errOf := func(m map[string]any) (float64, string) {
		e, _ := m["error"].(map[string]any)
		if e == nil {
			return 0, ""
		}
		return e["code"].(float64), mustJSON(e)
	}
	cwd := t.TempDir()
	for _, tc := range []struct {
		line string
		code float64
		text string
	}{
		{`{this is not json`, -32700, "Parse error"},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`, 0, ""},
		{`{"jsonrpc":"2.0","id":2,"method":"no/such/method","params":{}}`, -32601, "Method not found"},
		{`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"sess_nope","prompt":[{"type":"text","text":"hi"}]}}`, -32602, "unknown session"},
		{`{"jsonrpc":"2.0","id":4,"method":"session/new","params":{"cwd":"relative/dir","mcpServers":[]}}`, -32602, "cwd must be an absolute path"},
		{`{"jsonrpc":"2.0","id":5,"method":"session/new","params":{"cwd":"` + cwd + `","mcpServers":[{"name":"a","command":"x"},{"name":"a","command":"y"}]}}`, -32602, `duplicate server name \"a\"`},
		{`{"jsonrpc":"2.0","id":6,"method":"session/new","params":{"cwd":"` + cwd + `","mcpServers":[{"name":"nothing"}]}}`, -32602, "needs a command (stdio) or a url"},
		{`{"jsonrpc":"2.0","id":7,"method":"session/set_mode","params":{"sessionId":"sess_nope","modeId":"auto"}}`, -32602, "unknown session"},
		// Not JSON-RPC 2.0 requests: answered, naming what is wrong.
		{`{"id":9}`, -32600, `"path":"method"`},
		{`{"jsonrpc":"1.0","id":10,"method":"session/list","params":{}}`, -32600, `"path":"jsonrpc"`},
		{`{"id":11,"method":"session/list","params":{}}`, -32600, `"path":"jsonrpc"`},
		{`{"jsonrpc":"2.0","id":12,"method":["session/list"]}`, -32600, `"path":"method"`},
		{`{"jsonrpc":"2.0","id":{},"method":"session/list","params":{}}`, -32600, `"path":"id"`},
		// Bad mcpServers: invalid params naming the member.
		{`{"jsonrpc":"2.0","id":13,"method":"session/new","params":{"cwd":"` + cwd + `","mcpServers":[{"name":"a","command":"x","args":"-v"}]}}`, -32602, `"path":"mcpServers[0].args"`},
		{`{"jsonrpc":"2.0","id":14,"method":"session/new","params":{"cwd":"` + cwd + `","mcpServers":[{"name":"a","command":"x","env":"A=1"}]}}`, -32602, `"path":"mcpServers[0].env"`},
		{`{"jsonrpc":"2.0","id":15,"method":"session/new","params":{"cwd":"` + cwd + `","mcpServers":[{"name":"a","command":"x","env":{"A":1}}]}}`, -32602, `"path":"mcpServers[0].env.A"`},
		{`{"jsonrpc":"2.0","id":16,"method":"session/new","params":{"cwd":"` + cwd + `","mcpServers":[{"name":"h","url":"http://127.0.0.1:1/","headers":"x"}]}}`, -32602, `"path":"mcpServers[0].headers"`},
		{`{"jsonrpc":"2.0","id":17,"method":"session/new","params":{"cwd":"` + cwd + `","mcpServers":[{"type":"grpc","name":"g","url":"http://127.0.0.1:1/"}]}}`, -32602, `"path":"mcpServers[0].type"`},
		{`{"jsonrpc":"2.0","id":18,"method":"session/new","params":{"cwd":"` + cwd + `","mcpServers":{"a":{}}}}`, -32602, `"path":"mcpServers"`},
		{`{"jsonrpc":"2.0","id":19,"method":"session/new","params":{"cwd":"` + cwd + `","mcpServers":["a"]}}`, -32602, `"path":"mcpServers[0]"`},
		{`{"jsonrpc":"2.0","id":20,"method":"session/load","params":{"sessionId":"x","cwd":"` + cwd + `","mcpServers":[{"name":"a","command":"x","args":"-v"}]}}`, -32602, `"path":"mcpServers[0].args"`},
		// Handlers: bad input is invalid params.
		{`{"jsonrpc":"2.0","id":21,"method":"authenticate","params":{"methodId":"oauth"}}`, -32602, "unknown auth method"},
		{`{"jsonrpc":"2.0","id":22,"method":"session/load","params":{"sessionId":"../../etc","cwd":"` + cwd + `","mcpServers":[]}}`, -32602, "invalid session id"},
		{`{"jsonrpc":"2.0","id":23,"method":"session/resume","params":{"sessionId":"a/b","cwd":"` + cwd + `","mcpServers":[]}}`, -32602, "invalid session id"},
		// A request without an id is not run (nobody would get its answer):
		// the next answer is the next request's.
		{`{"jsonrpc":"2.0","method":"session/new","params":{"cwd":"` + cwd + `","mcpServers":[]}}` + "\n" +
			`{"jsonrpc":"2.0","id":24,"method":"session/list","params":{}}`, 0, `"sessions":[]`},
		// Liberal mcpServers shapes, as real clients send them.
		{`{"jsonrpc":"2.0","id":8,"method":"session/new","params":{"cwd":"` + cwd + `","mcpServers":[` +
			`{"name":"bare","command":"` + serverBin + `"},` +
			`{"type":"stdio","name":"typed","command":"` + serverBin + `","args":["-name","typed"]},` +
			`{"name":"envobj","command":"` + serverBin + `","env":{"X":"1"}},` +
			`{"type":"http","name":"web","url":"` + netServer(t, "http") + `"}]}}`, 0, ""},
	} {
		m := send(tc.line)
		code, text := errOf(m)
		if code == 0 {
			text = mustJSON(m["result"])
		}
		if code != tc.code || !strings.Contains(text, tc.text) {
			t.Errorf("%s\n  -> %s, want code %v mentioning %q", tc.line, mustJSON(m), tc.code, tc.text)
		}
		if tc.code == 0 && strings.Contains(tc.line, `"name":"bare"`) {
			// Each shape decodes to the server it names: all four become
			// ready (session/new answers while they connect; the update
			// that reports them follows).
			meta := waitInfo(func(meta string) bool { return !strings.Contains(meta, `"state":"connecting"`) })
			for _, name := range []string{"bare", "typed", "envobj", "web"} {
				if !containsFields(meta, `"name":"`+name+`","state":"ready"`) {
					t.Errorf("server %s not ready: %s", name, meta)
				}
			}
		}
	}
}
