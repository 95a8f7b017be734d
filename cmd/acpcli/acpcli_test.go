package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"acpgate", []string{"acpgate"}},
		{"  npx  -y   server  ", []string{"npx", "-y", "server"}},
		{`node 'my server.js' --flag`, []string{"node", "my server.js", "--flag"}},
		{`cmd "a b" "c\"d" "e\\f" "g\h"`, []string{"cmd", "a b", `c"d`, `e\f`, `g\h`}},
		{`cmd 'it''s' 'a\b'`, []string{"cmd", "its", `a\b`}},
		{`cmd a\ b \'x`, []string{"cmd", "a b", "'x"}},
		{`cmd '' ""`, []string{"cmd", "", ""}},
		{`cmd pre"mid"'post'`, []string{"cmd", "premidpost"}},
		{"cmd\ttab\nnewline", []string{"cmd", "tab", "newline"}},
	}
	for _, tt := range tests {
		got, err := splitCommand(tt.in)
		if err != nil {
			t.Errorf("splitCommand(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitCommand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for _, bad := range []string{"", "   ", `cmd 'open`, `cmd "open`, `cmd \`} {
		if got, err := splitCommand(bad); err == nil {
			t.Errorf("splitCommand(%q) = %q, want an error", bad, got)
		}
	}
}

// marshal renders servers the way session/new sends them.
func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMCPFlags(t *testing.T) {
	s, err := parseStdioFlag(`fs=npx -y '@scope/server fs' /tmp`)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"args":["-y","@scope/server fs","/tmp"],"command":"npx","env":[],"name":"fs"}`
	if got := marshal(t, s); got != want {
		t.Errorf("--mcp = %s, want %s", got, want)
	}
	s, err = parseStdioFlag("bare=server")
	if err != nil {
		t.Fatal(err)
	}
	if got := marshal(t, s); got != `{"args":[],"command":"server","env":[],"name":"bare"}` {
		t.Errorf("--mcp without args = %s", got)
	}
	s, err = parseURLFlag("http", "web=http://127.0.0.1:8080/mcp?x=1")
	if err != nil {
		t.Fatal(err)
	}
	if got := marshal(t, s); got != `{"headers":[],"name":"web","type":"http","url":"http://127.0.0.1:8080/mcp?x=1"}` {
		t.Errorf("--mcp-http = %s", got)
	}
	s, err = parseURLFlag("sse", "old=https://example.com/sse")
	if err != nil {
		t.Fatal(err)
	}
	if got := marshal(t, s); got != `{"headers":[],"name":"old","type":"sse","url":"https://example.com/sse"}` {
		t.Errorf("--mcp-sse = %s", got)
	}
	for _, bad := range []string{"", "noequals", "=cmd", "name=", "name=   ", `name='open`} {
		if _, err := parseStdioFlag(bad); err == nil {
			t.Errorf("parseStdioFlag(%q): want an error", bad)
		}
	}
	for _, bad := range []string{"x", "=http://h", "web=", "web=ftp://h/x", "web=/relative", "web=http://"} {
		if _, err := parseURLFlag("http", bad); err == nil {
			t.Errorf("parseURLFlag(%q): want an error", bad)
		}
	}
}

func TestParseOptionsMCP(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers": {"c": {"command": "c-server"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := parseOptions([]string{
		"--agent", "my-agent --flag 'x y'", "--mcp", "a=a-server --v", "--mcp-http", "b=http://localhost/mcp",
		"--mcp-config", cfg, "--mcp-sse", "d=http://localhost/sse", "--yes", "--json", "--cwd", ".", "hello", "there",
	}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range opts.servers {
		names = append(names, serverName(s))
	}
	if !reflect.DeepEqual(names, []string{"a", "b", "c", "d"}) {
		t.Errorf("servers = %q, want a b c d in command-line order", names)
	}
	if !reflect.DeepEqual(opts.agent, []string{"my-agent", "--flag", "x y"}) {
		t.Errorf("agent = %q", opts.agent)
	}
	if opts.prompt != "hello there" || !opts.yes || !opts.json || !filepath.IsAbs(opts.cwd) {
		t.Errorf("options = %+v", opts)
	}

	for _, args := range [][]string{
		{"--agent", "x", "--mcp", "a=x", "--mcp", "a=y"},
		{"--agent", "x", "--mcp", "nocommand"},
		{"--agent", "x", "--cwd", "/nonexistent/dir"},
		{"--agent", "'unterminated"},
		{"--agent", "x", "--timeout", "-1s"},
		{"--agent", "x", "--mcp-config", filepath.Join(t.TempDir(), "missing.json")},
		{"--agent", "x", "--bogus"},
	} {
		if _, err := parseOptions(args, &bytes.Buffer{}); err == nil {
			t.Errorf("parseOptions(%q): want an error", args)
		}
	}
	opts, err = parseOptions([]string{"--agent", "x"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if got := marshal(t, acp.NewSessionRequest{Cwd: "/", McpServers: opts.servers}); !strings.Contains(got, `"mcpServers":[]`) {
		t.Errorf("no servers must be sent as [], got %s", got)
	}
}

func TestMCPConfigACPList(t *testing.T) {
	servers, err := parseMCPConfig([]byte(`[
		{"name": "fs", "command": "fs-server", "args": ["--root", "/"], "env": [{"name": "TOKEN", "value": "t"}]},
		{"name": "bare", "command": "bare-server"},
		{"type": "http", "name": "web", "url": "http://127.0.0.1:9/mcp", "headers": [{"name": "Authorization", "value": "Bearer x"}]},
		{"type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse"}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"args":["--root","/"],"command":"fs-server","env":[{"name":"TOKEN","value":"t"}],"name":"fs"},` +
		`{"args":[],"command":"bare-server","env":[],"name":"bare"},` +
		`{"headers":[{"name":"Authorization","value":"Bearer x"}],"name":"web","type":"http","url":"http://127.0.0.1:9/mcp"},` +
		`{"headers":[],"name":"old","type":"sse","url":"http://127.0.0.1:9/sse"}]`
	if got := marshal(t, servers); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestMCPConfigServersObject(t *testing.T) {
	// Claude Desktop / Cursor: "mcpServers"; members stay in file order.
	servers, err := parseMCPConfig([]byte(`{"mcpServers": {
		"zeta": {"command": "npx", "args": ["-y", "server"], "env": {"B": "2", "A": "1"}},
		"alpha": {"url": "https://example.com/mcp", "headers": {"X-Key": "k"}},
		"remote": {"type": "streamable-http", "url": "https://example.com/mcp2"},
		"legacy": {"type": "sse", "url": "https://example.com/sse"},
		"off": {"command": "unused", "disabled": true}
	}, "other": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"args":["-y","server"],"command":"npx","env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],"name":"zeta"},` +
		`{"headers":[{"name":"X-Key","value":"k"}],"name":"alpha","type":"http","url":"https://example.com/mcp"},` +
		`{"headers":[],"name":"remote","type":"http","url":"https://example.com/mcp2"},` +
		`{"headers":[],"name":"legacy","type":"sse","url":"https://example.com/sse"}]`
	if got := marshal(t, servers); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}

	// VS Code: "servers", with "type": "stdio" and "http".
	servers, err = parseMCPConfig([]byte(`{"inputs": [], "servers": {
		"local": {"type": "stdio", "command": "srv"},
		"web": {"type": "http", "url": "http://localhost:3000/mcp"}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	want = `[{"args":[],"command":"srv","env":[],"name":"local"},{"headers":[],"name":"web","type":"http","url":"http://localhost:3000/mcp"}]`
	if got := marshal(t, servers); got != want {
		t.Errorf("VS Code: got  %s\nwant %s", got, want)
	}
}

func TestMCPConfigErrors(t *testing.T) {
	tests := []struct{ config, wantErr string }{
		{``, "empty"},
		{`"x"`, "want a JSON list"},
		{`{"other": {}}`, `no "mcpServers" or "servers"`},
		{`{"mcpServers": []}`, "want a JSON object"},
		{`{"mcpServers": {"bad": {"args": []}}}`, `server "bad": neither "command" nor "url"`},
		{`{"mcpServers": {"both": {"command": "x", "url": "http://h/"}}}`, `server "both": both`},
		{`{"mcpServers": {"ws": {"type": "websocket", "url": "ws://h/"}}}`, `server "ws": unknown type "websocket"`},
		{`{"mcpServers": {"e": {"command": "x", "env": {"N": 1}}}}`, `server "e": "env"`},
		{`{"mcpServers": {"s": "npx server"}}`, `server "s": want an object`},
		{`[{"command": "x"}]`, `entry 0: missing "name"`},
		{`[{"name": "a", "command": "x"}, {"name": "u", "url": "http://h/"}]`, `entry 1 ("u"): an entry with "url" needs "type"`},
		{`[{"name": "h", "type": "http", "url": "nope"}]`, `entry 0 ("h"): bad url`},
		{`[{"name": "h", "type": "grpc", "url": "http://h/"}]`, `unknown type "grpc"`},
		{`[{"name": "h", "type": "http", "url": "http://h/", "headers": "x"}]`, `"headers"`},
		{`[1]`, "entry 0: want an object"},
		{`{"mcpServers": {}} {}`, "trailing data"},
	}
	for _, tt := range tests {
		_, err := parseMCPConfig([]byte(tt.config))
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("parseMCPConfig(%s) = %v, want an error containing %q", tt.config, err, tt.wantErr)
		}
	}
	path := filepath.Join(t.TempDir(), "claude.json")
	if err := os.WriteFile(path, []byte(`{"mcpServers": {"x": {}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadMCPConfig(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("loadMCPConfig error %v must name the file and the entry", err)
	}
}

// renderAll renders updates and returns stdout and stderr.
func renderAll(jsonMode bool, updates ...acp.SessionUpdate) (stdout, stderr string) {
	var out, errw bytes.Buffer
	r := newRenderer(&out, &errw, jsonMode, false)
	for _, u := range updates {
		r.Update(u)
	}
	r.Stop(acp.StopReasonEndTurn)
	return out.String(), errw.String()
}

func TestRenderMessageAndTools(t *testing.T) {
	status := func(s acp.ToolCallStatus) *acp.ToolCallStatus { return &s }
	var long []string
	for i := 1; i <= 25; i++ {
		long = append(long, "row")
	}
	stdout, stderr := renderAll(false,
		acp.UpdateAgentThoughtText("let me see"),
		acp.UpdateAgentMessageText("Hello, "),
		acp.UpdateAgentMessageText("world"),
		acp.StartToolCall("t1", "Read config", acp.WithStartKind(acp.ToolKindRead), acp.WithStartStatus(acp.ToolCallStatusPending)),
		acp.SessionUpdate{ToolCallUpdate: &acp.SessionToolCallUpdate{ToolCallId: "t1", Status: status(acp.ToolCallStatusInProgress)}},
		acp.SessionUpdate{ToolCallUpdate: &acp.SessionToolCallUpdate{ToolCallId: "t1", Status: status(acp.ToolCallStatusInProgress)}},
		acp.SessionUpdate{ToolCallUpdate: &acp.SessionToolCallUpdate{ToolCallId: "t1", Status: status(acp.ToolCallStatusCompleted),
			Content: []acp.ToolCallContent{acp.ToolContent(acp.TextBlock(strings.Join(long, "\n")))}}},
		acp.StartToolCall("t2", "Run tests", acp.WithStartKind(acp.ToolKindExecute)),
		acp.SessionUpdate{ToolCallUpdate: &acp.SessionToolCallUpdate{ToolCallId: "t2", Status: status(acp.ToolCallStatusFailed),
			Content: []acp.ToolCallContent{acp.ToolContent(acp.TextBlock("\nexit status 2\nmore detail"))}}},
		acp.UpdateAgentMessageText("Done."),
	)
	want := "Hello, world\n" +
		"⏺ Read config [read] pending\n" +
		"  ↳ in_progress\n" +
		"  ↳ completed\n" +
		strings.Repeat("    row\n", 20) +
		"    … 5 more lines\n" +
		"⏺ Run tests [execute] pending\n" +
		"  ↳ failed: exit status 2\n" +
		"Done.\n"
	if stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want)
	}
	if stderr != "thinking: let me see\n[stop: end_turn]\n" {
		t.Errorf("stderr = %q", stderr)
	}
}

func TestRenderSessionInfo(t *testing.T) {
	cmds := acp.SessionUpdate{AvailableCommandsUpdate: &acp.SessionAvailableCommandsUpdate{
		AvailableCommands: []acp.AvailableCommand{{Name: "mcp"}, {Name: "help"}},
	}}
	stdout, stderr := renderAll(false,
		cmds,
		acp.UpdatePlan(
			acp.PlanEntry{Content: "look", Status: acp.PlanEntryStatusCompleted},
			acp.PlanEntry{Content: "think", Status: acp.PlanEntryStatusInProgress},
			acp.PlanEntry{Content: "answer", Status: acp.PlanEntryStatusPending},
		),
		cmds,
		acp.SessionUpdate{CurrentModeUpdate: &acp.SessionCurrentModeUpdate{CurrentModeId: "code"}},
		acp.UpdateUserMessageText("earlier question"),
		acp.UpdateAgentMessageText("earlier answer"),
	)
	if stdout != "> earlier question\nearlier answer\n" {
		t.Errorf("stdout = %q", stdout)
	}
	want := "commands: /mcp /help\nplan:\n  [x] look\n  [~] think\n  [ ] answer\nmode: code\n[stop: end_turn]\n"
	if stderr != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, want)
	}
}

func TestRenderJSONMode(t *testing.T) {
	var out, errw bytes.Buffer
	r := newRenderer(&out, &errw, true, false)
	r.Update(acp.UpdateAgentMessageText("ignored: printed raw by the tap"))
	r.JSONLine([]byte(`{"sessionId": "s",  "update": {"sessionUpdate": "agent_message_chunk"}}`))
	r.Stop(acp.StopReasonMaxTokens)
	want := `{"sessionId": "s",  "update": {"sessionUpdate": "agent_message_chunk"}}` + "\n" + `{"stopReason":"max_tokens"}` + "\n"
	if out.String() != want || errw.Len() != 0 {
		t.Errorf("stdout = %q, stderr = %q", out.String(), errw.String())
	}
}

func TestLineTap(t *testing.T) {
	var seen []string
	gate := make(chan struct{})
	close(gate)
	input := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"x","n":1}}}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"session/update","params":{}}` + "\n" +
		`{"jsonrpc":"2.0","method":"session/update","params":{"b":2}}`
	tap := &lineTap{r: strings.NewReader(input), gate: gate, onLine: func(line []byte) {
		if p := sessionUpdateParams(line); p != nil {
			seen = append(seen, string(p))
		}
	}}
	var passed bytes.Buffer
	buf := make([]byte, 7) // small reads split lines
	for {
		n, err := tap.Read(buf)
		passed.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if passed.String() != input {
		t.Errorf("tap changed the stream")
	}
	want := []string{`{"sessionId":"s","update":{"sessionUpdate":"x","n":1}}`}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("seen = %q, want %q (requests and the unterminated last line are not notifications yet)", seen, want)
	}
}
