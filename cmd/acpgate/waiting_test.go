package main_test

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	acpsdk "github.com/coder/acp-go-sdk"
)

// TestPromptDoesNotWaitPastBudget: a server that never initializes holds
// a prompt and a /call of its tools no longer than the session's startup
// budget (2 s here, long spent by the time they run); a card says its
// tools are absent.
func TestPromptDoesNotWaitPastBudget(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{
		stdioServer("ok"), stdioServer("stuck", "-init-hang"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	// With the old behaviour each of these waited for the stuck server's
	// 30 s connect timeout, past ctx30.
	prompt(t, a, resp.SessionId, "hello")
	prompt(t, a, resp.SessionId, "/call mcp__stuck__echo {}")
	card := a.client.waitUpdate(t, "the still-connecting card", func(u acpsdk.SessionUpdate) bool {
		return u.ToolCall != nil && u.ToolCall.ToolCallId == "mcp-server-connecting-stuck"
	})
	if card.ToolCall.Status != acpsdk.ToolCallStatusInProgress || !strings.Contains(card.ToolCall.Title, "still connecting") {
		t.Errorf("card: %+v", card.ToolCall)
	}
	if n := strings.Count(a.stdout.String(), `"title":"MCP server stuck is still connecting"`); n != 1 {
		t.Errorf("the card was sent %d times, want once", n)
	}
}

// TestCallWhileRestarting: /call of a tool whose server is restarting says
// so instead of "unknown tool".
func TestCallWhileRestarting(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	flag := filepath.Join(t.TempDir(), "started-once")
	// The first start works; every restart exits at once, so the server
	// stays restarting through its backoff (1 s, 2 s, 4 s ...).
	wrapper := acpsdk.McpServer{Stdio: &acpsdk.McpServerStdio{Name: "s", Command: "/bin/sh",
		Args: []string{"-c", `if [ -e "$1" ]; then exit 7; fi; touch "$1"; exec "$0" -name s`, serverBin, flag},
		Env:  []acpsdk.EnvVariable{}}}
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{wrapper}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.conn.SetSessionMode(ctx30(t), acpsdk.SetSessionModeRequest{SessionId: resp.SessionId, ModeId: "auto"}); err != nil {
		t.Fatal(err)
	}
	prompt(t, a, resp.SessionId, "/call mcp__s__crash {}")
	before := len(agentText(a.client.all()))
	prompt(t, a, resp.SessionId, "/call mcp__s__echo {\"text\":\"hi\"}")
	got := agentText(a.client.all())[before:]
	if !strings.Contains(got, "MCP server s is restarting") || strings.Contains(got, "unknown tool") {
		t.Errorf("/call while restarting said: %q", got)
	}
}

// TestSessionNewAnswersAtOnce: session/new does not wait for the servers
// (one of them never initializes; the budget is long): it lists them
// connecting, a session_info_update reports the healthy one ready with its
// tools, and /tools lists them, saying the other is still connecting once
// the budget is spent.
func TestSessionNewAnswersAtOnce(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir(), "--startup-budget", "2s", "--startup-grace", "300ms")
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{
		stdioServer("ok"), stdioServer("stuck", "-init-hang"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := serverStates(t, resp.Meta); got["stuck"] != "connecting" {
		t.Errorf("session/new _meta servers: %v, want stuck connecting", got)
	}
	a.client.waitUpdate(t, "ok reported ready", func(u acpsdk.SessionUpdate) bool {
		return u.SessionInfoUpdate != nil && serverStates(t, u.SessionInfoUpdate.Meta)["ok"] == "ready"
	})
	before := len(agentText(a.client.all()))
	prompt(t, a, resp.SessionId, "/tools")
	text := agentText(a.client.all())[before:]
	if !strings.Contains(text, "`mcp__ok__echo`") || !strings.Contains(text, "(stuck is connecting; its tools are not listed yet)") {
		t.Errorf("/tools: %q", text)
	}
	if !strings.Contains(a.stderr.String(), "--startup-grace is retired") {
		t.Errorf("no warning about the retired flag in the log")
	}
}

// serverStates returns the state of each server in a response's or
// update's _meta.acpgate.mcpServers.
func serverStates(t testing.TB, meta map[string]any) map[string]string {
	t.Helper()
	var m struct {
		Acpgate struct {
			McpServers []struct{ Name, State string } `json:"mcpServers"`
		} `json:"acpgate"`
	}
	if err := json.Unmarshal([]byte(mustJSON(meta)), &m); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range m.Acpgate.McpServers {
		got[s.Name] = s.State
	}
	return got
}

// TestRequestsBeforeEOFAnswered: a client that sends its last requests and
// closes stdin at once gets every one answered before acpgate exits:
// initialize, session/new with a server that never initializes,
// session/list and two unknown methods, in one write followed by EOF,
// twenty times over; no server that got to record its start outlives
// acpgate (one killed before that never ran).
func TestRequestsBeforeEOFAnswered(t *testing.T) {
	t.Parallel()
	for run := range 20 {
		rec, record := recordFile(t)
		cwd := t.TempDir()
		cmd := exec.Command(agentBin, "--state-dir", t.TempDir(), "--log-level", "error")
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
		stuck, _ := json.Marshal(stdioServer("stuck", "-init-hang", "-record", rec).Stdio)
		input := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}
{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":` + mustJSON(cwd) + `,"mcpServers":[` + string(stuck) + `]}}
{"jsonrpc":"2.0","id":"three","method":"session/list","params":{}}
{"jsonrpc":"2.0","id":4,"method":"no/such/method","params":{}}
{"jsonrpc":"2.0","id":5,"method":"_acpgate/unknown","params":{}}
`
		check := acpSchema.connection(t)
		cmd.Stdin = io.TeeReader(strings.NewReader(input), check.client())
		out, err := cmd.Output() // until acpgate exits
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		_, _ = check.agent().Write(out)
		answered := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
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
				t.Fatalf("run %d: request %s was not answered; stdout:\n%s", run, id, out)
			}
		}
		for _, pid := range pids(record()) {
			if testbin.Alive(pid) {
				t.Errorf("run %d: server %d outlived acpgate", run, pid)
			}
		}
	}
}
