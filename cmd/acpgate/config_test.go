package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"

	acpsdk "github.com/coder/acp-go-sdk"
)

const secretValue = "s3cr3t-Value-9f8e7d"

// writeConfig writes a configuration file using the test MCP server.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(body, "SERVER", serverBin)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConfigProfilesPolicyAndSecrets(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, `{
  "agents": {
    "defaults": {
      "mcp": {"servers": {"base": {"command": "SERVER", "args": ["-name", "base", "-stderr-lines", "1"],
                                   "env": {"API_TOKEN": "secret://env/ACPGATE_E2E_SECRET"}},
                          "nokey": {"command": "SERVER", "env": {"API_TOKEN": "secret://env/ACPGATE_E2E_MISSING"}}}},
      "tools": {"deny": ["mcp__base__crash"]}
    },
    "list": [
      {"id": "work", "mcp": {"servers": {"extra": {"command": "SERVER", "args": ["-name", "extra"], "toolPrefix": "x"}}},
       "tools": {"deny": ["mcp__base__crash", "mcp__x__fail"], "autoApprove": ["mcp__x__add"]}}
    ]
  }
}`)
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			a := startAgentEnv(t, t.TempDir(), []string{"ACPGATE_E2E_SECRET=" + secretValue}, "--config", cfg, "--log-format", format)
			cwd := t.TempDir()
			if _, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}, Meta: map[string]any{"profile": "nope"}}); err == nil || !strings.Contains(err.Error(), "nope") {
				t.Errorf("unknown profile: %v", err)
			}
			resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}, Meta: map[string]any{"profile": "work"}})
			if err != nil {
				t.Fatal(err)
			}
			sid := resp.SessionId
			meta := a.serversUntil(t, resp, "servers settled", settled)
			if !containsFields(meta, `"name":"base","state":"ready"`) || !containsFields(meta, `"name":"extra","state":"ready"`) {
				t.Fatalf("servers: %s", meta)
			}
			// A secret that cannot be resolved keeps its server from starting,
			// and the status names the reference.
			if !containsFields(meta, `"error":"resolving secrets: API_TOKEN: secret://env/ACPGATE_E2E_MISSING: not set","name":"nokey","state":"failed"`) {
				t.Errorf("nokey: %s", meta)
			}
			// The server got the resolved secret; what reaches the client is redacted.
			a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
			prompt(t, a, sid, `/call mcp__base__env {"name":"API_TOKEN"}`)
			a.client.waitUpdate(t, "env result", func(u acpsdk.SessionUpdate) bool {
				return u.ToolCallUpdate != nil && strings.Contains(mustJSON(u.ToolCallUpdate.Content), "[REDACTED]")
			})
			// The policy: denied tools are neither offered nor callable.
			before := len(a.client.all())
			prompt(t, a, sid, "/tools")
			tools := agentText(a.client.all()[before:])
			if strings.Contains(tools, "mcp__base__crash") || strings.Contains(tools, "mcp__x__fail") || !strings.Contains(tools, "mcp__x__add") {
				t.Errorf("/tools:\n%s", tools)
			}
			before = len(a.client.all())
			prompt(t, a, sid, `/call mcp__base__crash {}`)
			if text := agentText(a.client.all()[before:]); !strings.Contains(text, "denied by the tool policy") {
				t.Errorf("/call of a denied tool: %q", text)
			}
			// autoApprove: add runs without a permission request (ask mode).
			asked := len(a.client.asked)
			prompt(t, a, sid, `/call mcp__x__add {"a":1,"b":1}`)
			if len(a.client.asked) != asked {
				t.Error("asked for permission for an auto-approved tool")
			}
			// A long stderr line is redacted whole before it is cut: no
			// piece of a secret across byte 8192 (where lines were split)
			// or across the 64 KiB cut reaches the log.
			for i, tc := range []struct{ size, at int }{{20 << 10, 8192}, {100 << 10, 64 << 10}} {
				long := []byte(strings.Repeat("b", tc.size))
				copy(long[tc.at-len(secretValue)/2:], secretValue)
				mark := fmt.Sprintf("long%d:", i)
				copy(long, mark)
				prompt(t, a, sid, `/call mcp__base__stderr `+mustJSON(map[string]any{"text": string(long)}))
				testbin.WaitFor(t, "the long stderr line", func() bool { return strings.Contains(a.stderr.String(), mark+"bbbb") })
			}
			if !strings.Contains(a.stderr.String(), "b[REDACTED]b") {
				t.Error("the secret in a long stderr line was not redacted")
			}
			prompt(t, a, sid, "/mcp")
			_ = a.stdin.Close()
			<-a.exited
			for where, out := range map[string]string{"logs": a.stderr.String(), "ACP messages": a.stdout.String()} {
				if strings.Contains(out, secretValue) {
					t.Errorf("the secret appears in the %s", where)
				}
			}
			for _, piece := range []string{secretValue[:8], secretValue[len(secretValue)-8:]} {
				if strings.Contains(a.stderr.String(), piece) {
					t.Errorf("a piece of the secret (%q) appears in the logs", piece)
				}
			}
			if !strings.Contains(a.stderr.String(), "stderr line 1") {
				t.Error("server stderr was not logged")
			}
		})
	}
}

func TestConfigCommands(t *testing.T) {
	t.Parallel()
	good := writeConfig(t, `{"mcpServers": {"fs": {"command": "SERVER", "env": {"GITHUB_TOKEN": "ghp_literal_token_value"}}},
	  "agents": {"list": [{"id": "work"}]}}`)
	out, err := exec.Command(agentBin, "config", "check", "--config", good).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "OK") || !strings.Contains(string(out), "literal credential") {
		t.Errorf("check good: %v\n%s", err, out)
	}
	out, err = exec.Command(agentBin, "config", "show", "--config", good).CombinedOutput()
	if err != nil || strings.Contains(string(out), "ghp_literal_token_value") || !strings.Contains(string(out), "[REDACTED]") {
		t.Errorf("show: %v\n%s", err, out)
	}
	bad := writeConfig(t, `{"agents": {"list": [{"id": "a"}, {"id": "b", "mcp": {"servers": {"tavily": {"transport": "sse"}}}}]}}`)
	out, err = exec.Command(agentBin, "config", "check", "--config", bad).CombinedOutput()
	if err == nil || !strings.Contains(string(out), `agents.list[1].mcp.servers.tavily: transport "sse" requires "url"`) {
		t.Errorf("check bad: %v\n%s", err, out)
	}
	if out, err := exec.Command(agentBin, "config", "check", "--config", "/nonexistent/config.json").CombinedOutput(); err == nil || !strings.Contains(string(out), "/nonexistent/config.json") {
		t.Errorf("missing --config file: %v\n%s", err, out)
	}
}

// TestConfigSchema: `acpgate config schema` prints the committed schema, and
// a file that names it in "$schema" checks without a warning.
func TestConfigSchema(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(agentBin, "config", "schema").Output()
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(filepath.Join("..", "..", "internal", "inputs", "config", "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, committed) || !json.Valid(out) {
		t.Errorf("config schema printed:\n%s", out)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "schema.json"), out, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfg, []byte(`{"$schema": "./schema.json", "limits": {"callsPerMinute": 0}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(agentBin, "config", "check", "--config", cfg).CombinedOutput()
	if err != nil || strings.Contains(string(out), "warning") {
		t.Errorf("check of a file naming its schema: %v\n%s", err, out)
	}
}

func TestHotReload(t *testing.T) {
	t.Parallel()
	body := `{"mcpServers": {"keep": {"command": "SERVER", "args": ["-name", "keep"]},
	  "tuned": {"command": "SERVER", "args": ["-name", "tuned"], "env": {"LEVEL": "VALUE"}}}}`
	cfg := writeConfig(t, strings.ReplaceAll(body, "VALUE", "one"))
	a := startAgent(t, t.TempDir(), "--config", cfg)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	envOf := func() string {
		t.Helper()
		before := len(a.client.all())
		a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
		prompt(t, a, sid, `/call mcp__tuned__env {"name":"LEVEL"}`)
		for _, n := range a.client.all()[before:] {
			if u := n.Update.ToolCallUpdate; u != nil && u.Status != nil && *u.Status == acpsdk.ToolCallStatusCompleted {
				return mustJSON(u.Content)
			}
		}
		t.Fatal("no result")
		return ""
	}
	if got := envOf(); !strings.Contains(got, `"one"`) {
		t.Fatalf("LEVEL before: %s", got)
	}
	// A broken edit keeps the last good configuration.
	if err := os.WriteFile(cfg, []byte(`{"mcpServers": {`), 0o600); err != nil {
		t.Fatal(err)
	}
	testbin.WaitFor(t, "the broken edit to be reported", func() bool { return strings.Contains(a.stderr.String(), "keeping the last good one") })
	if err := os.WriteFile(cfg, []byte(strings.ReplaceAll(strings.ReplaceAll(body, "SERVER", serverBin), "VALUE", "two")), 0o600); err != nil {
		t.Fatal(err)
	}
	testbin.WaitFor(t, "the reload", func() bool { return strings.Contains(a.stderr.String(), "configuration reloaded") })
	before := len(a.client.all())
	prompt(t, a, sid, "/reload")
	if text := agentText(a.client.all()[before:]); !strings.Contains(text, "restarted: tuned.") {
		t.Errorf("/reload said %q", text)
	}
	if got := envOf(); !strings.Contains(got, `"two"`) {
		t.Errorf("LEVEL after reload: %s", got)
	}
}

func TestSharedServer(t *testing.T) {
	t.Parallel()
	rec, record := recordFile(t)
	cfg := writeConfig(t, `{"mcpServers": {"sh": {"command": "SERVER", "args": ["-name", "sh", "-record", "`+rec+`"], "shared": true}}}`)
	a := startAgent(t, t.TempDir(), "--config", cfg)
	var sessions []acpsdk.SessionId
	for i := 0; i < 2; i++ {
		resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, resp.SessionId)
	}
	for _, sid := range sessions {
		before := len(a.client.all())
		prompt(t, a, sid, `/call mcp__sh__echo {"text":"shared"}`)
		if !strings.Contains(mustJSON(a.client.all()[before:]), `"text":"shared"`) {
			t.Errorf("session %s cannot call the shared server", sid)
		}
	}
	if n := len(pids(record())); n != 1 {
		t.Errorf("%d instances of the shared server, want 1", n)
	}
	procs := pids(record())
	_ = a.stdin.Close()
	<-a.exited
	for _, pid := range procs {
		if testbin.Alive(pid) {
			t.Errorf("shared server %d survived the agent", pid)
		}
	}
}

// TestSharedServersOffInitializePath: the shared servers start in the
// background. With one that never answers initialize and a startup budget
// of an hour, initialize is still answered at once (startAgent gives it
// 10 s), and so is session/new; /call of the healthy one's tool waits for
// that tool only, not for the stuck one.
func TestSharedServersOffInitializePath(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, `{"mcpServers": {
	  "ok": {"command": "SERVER", "args": ["-name", "ok"], "shared": true},
	  "stuck": {"command": "SERVER", "args": ["-name", "stuck", "-init-hang"], "shared": true}}}`)
	a := startAgent(t, t.TempDir(), "--config", cfg, "--startup-budget", "1h")
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	before := len(a.client.all())
	prompt(t, a, resp.SessionId, `/call mcp__ok__echo {"text":"shared"}`)
	if !strings.Contains(mustJSON(a.client.all()[before:]), `"text":"shared"`) {
		t.Errorf("the healthy shared server cannot be called: %s", mustJSON(a.client.all()[before:]))
	}
}
