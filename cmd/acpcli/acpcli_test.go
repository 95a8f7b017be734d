package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp/sdkservers"
	"github.com/acpgate/acpgate/internal/inputs/mcpservers"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/mcpclient"
)

func TestMCPFlags(t *testing.T) {
	s, err := parseStdioFlag(`fs=npx -y '@scope/server fs' /tmp`)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"args":["-y","@scope/server fs","/tmp"],"command":"npx","env":[],"name":"fs"}`
	if got := testbin.JSON(t, s); got != want {
		t.Errorf("--mcp = %s, want %s", got, want)
	}
	s, err = parseStdioFlag("bare=server")
	if err != nil {
		t.Fatal(err)
	}
	if got := testbin.JSON(t, s); got != `{"args":[],"command":"server","env":[],"name":"bare"}` {
		t.Errorf("--mcp without args = %s", got)
	}
	s, err = parseURLFlag("http", "web=http://127.0.0.1:8080/mcp?x=1")
	if err != nil {
		t.Fatal(err)
	}
	if got := testbin.JSON(t, s); got != `{"headers":[],"name":"web","type":"http","url":"http://127.0.0.1:8080/mcp?x=1"}` {
		t.Errorf("--mcp-http = %s", got)
	}
	s, err = parseURLFlag("sse", "old=https://example.com/sse")
	if err != nil {
		t.Fatal(err)
	}
	if got := testbin.JSON(t, s); got != `{"headers":[],"name":"old","type":"sse","url":"https://example.com/sse"}` {
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
		names = append(names, s.Name)
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
	if got := testbin.JSON(t, acp.NewSessionRequest{Cwd: "/", McpServers: sdkservers.ToSDKList(opts.servers)}); !strings.Contains(got, `"mcpServers":[]`) {
		t.Errorf("no servers must be sent as [], got %s", got)
	}
}

// TestLoadMCPConfig: a file in any shape mcpservers.Parse takes is read
// (its shapes are tested there); an error names the file and the JSON path
// and wraps the parser's sentinel; URLs follow mcpclient.CheckURL with
// plain http to any host allowed.
func TestLoadMCPConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string { return testbin.WriteFile(t, dir, name, content) }
	servers, err := loadMCPConfig(write("ok.json", `{"mcpServers": {"b": {"command": "x"}, "a": {"url": "http://example.com/mcp"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := testbin.JSON(t, servers); got != `[{"args":[],"command":"x","env":[],"name":"b"},{"headers":[],"name":"a","type":"http","url":"http://example.com/mcp"}]` {
		t.Errorf("got %s", got)
	}
	for _, tc := range []struct {
		content, path string
		want          error
	}{
		{`{"mcpServers": {"x": {}}}`, `mcpServers.x`, mcpservers.ErrNoTransport},
		{`[{"name": "h", "type": "http", "url": "nope"}]`, `[0].url`, mcpclient.ErrURLScheme},
	} {
		path := write("bad.json", tc.content)
		_, err := loadMCPConfig(path)
		var perr *mcpservers.Error
		if !errors.As(err, &perr) || perr.Path != tc.path || !errors.Is(err, tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("loadMCPConfig(%s) = %v, want an error naming the file and %s, wrapping %v", tc.content, err, tc.path, tc.want)
		}
	}
	if _, err := loadMCPConfig(filepath.Join(dir, "missing.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
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
