package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/base/sandbox"
	"github.com/acpgate/acpgate/internal/testsupport/loopback"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// needLandlock fails where the kernel cannot enforce network rules: the
// machines this project runs on have Landlock ABI 7.
func needLandlock(t *testing.T) {
	t.Helper()
	if s := sandbox.System.Probe(); !s.Network {
		t.Skipf("no Landlock network rules here: %s", s)
	}
}

// callText runs a slash command in the session and returns everything the
// agent sent meanwhile, as JSON.
func sandboxCall(t *testing.T, a *agent, sid acpsdk.SessionId, line string) string {
	t.Helper()
	before := len(a.client.all())
	prompt(t, a, sid, line)
	return mustJSON(a.client.all()[before:])
}

// TestSandboxServerFilesystem runs the reference filesystem server as a
// client passes it, under the default clientServerSandbox
// (workspace-write): it writes inside the session's cwd, and gets an
// error writing into a hidden directory (~/.aws) and reading a file in
// another (~/.ssh), though its own allowed directories (the roots: the
// cwd and the additional directories) include both. (Writing outside
// every root is refused by the server itself; the fake server's test in
// mcpclient shows the sandbox refusing it.)
func TestSandboxServerFilesystem(t *testing.T) {
	needLandlock(t)
	index := filepath.Join(testbin.ModuleRoot(), "testdata", "filesystem", "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	if _, err := os.Stat(index); err != nil {
		t.Fatalf("server-filesystem is not installed (%v): run `make npm`", err)
	}
	home := t.TempDir()
	cwd, outside := filepath.Join(home, "project"), filepath.Join(home, ".aws")
	secret := filepath.Join(home, ".ssh", "id_ed25519")
	for _, d := range []string{cwd, outside, filepath.Dir(secret)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(secret, []byte("PRIVATE KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	// No configuration: the built-in clientServerSandbox.
	a := startAgentEnv(t, t.TempDir(), []string{"HOME=" + home, "npm_config_cache=" + filepath.Join(home, ".npm"), "XDG_CONFIG_HOME=" + t.TempDir()})
	a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: cwd, AdditionalDirectories: []string{outside, filepath.Dir(secret)}, McpServers: []acpsdk.McpServer{
		{Stdio: &acpsdk.McpServerStdio{Name: "fs", Command: "node", Args: []string{index, cwd, outside, filepath.Dir(secret)}, Env: []acpsdk.EnvVariable{}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	a.serversUntil(t, resp, "fs settles", settled)
	if out := sandboxCall(t, a, resp.SessionId, "/mcp"); !strings.Contains(out, "sandbox: workspace-write, best effort, enforced") {
		t.Fatalf("/mcp: %s", out)
	}
	inside := filepath.Join(cwd, "note.txt")
	out := sandboxCall(t, a, resp.SessionId, `/call mcp__fs__write_file `+mustJSON(map[string]string{"path": inside, "content": "hello"}))
	if data, err := os.ReadFile(inside); err != nil || string(data) != "hello" {
		t.Errorf("writing inside the cwd: %v %q; agent: %s", err, data, out)
	}
	out = sandboxCall(t, a, resp.SessionId, `/call mcp__fs__write_file `+mustJSON(map[string]string{"path": filepath.Join(outside, "x.txt"), "content": "x"}))
	if !strings.Contains(out, "EACCES") {
		t.Errorf("writing into ~/.aws: %s", out)
	}
	if _, err := os.Stat(filepath.Join(outside, "x.txt")); err == nil {
		t.Error("a file was written into ~/.aws")
	}
	out = sandboxCall(t, a, resp.SessionId, `/call mcp__fs__read_text_file `+mustJSON(map[string]string{"path": secret}))
	if !strings.Contains(out, "EACCES") || strings.Contains(out, "PRIVATE KEY") {
		t.Errorf("reading the hidden file: %s", out)
	}
}

// TestSandboxNetwork runs configured test servers under network none and
// all: a TCP or MPTCP connect to a loopback port and a UDP datagram are
// refused under none, for the server and for its child, and succeed
// under all.
func TestSandboxNetwork(t *testing.T) {
	needLandlock(t)
	tcp, udp := loopback.Acceptor(t), loopback.ListenUDP(t)
	cfg := filepath.Join(t.TempDir(), "config.json")
	server := func(network string) map[string]any {
		return map[string]any{"command": serverBin, "args": []string{"-sandbox-tools"}, "sandbox": map[string]any{"files": "read-only", "network": network}}
	}
	if err := os.WriteFile(cfg, []byte(mustJSON(map[string]any{"mcpServers": map[string]any{"closed": server("none"), "open": server("all")}})), 0o600); err != nil {
		t.Fatal(err)
	}
	a := startAgent(t, t.TempDir(), "--config", cfg)
	a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	a.serversUntil(t, resp, "servers settle", func(states map[string]string) bool { return len(states) == 2 && settled(states) })
	if out := sandboxCall(t, a, resp.SessionId, "/mcp"); !strings.Contains(out, "sandbox: read-only, network none, enforced") {
		t.Fatalf("/mcp: %s", out)
	}
	for _, proto := range []string{"tcp", "udp", "mptcp"} {
		addr := tcp.String()
		if proto == "udp" {
			addr = udp.Addr()
		}
		for _, child := range []bool{false, true} {
			args := mustJSON(map[string]any{"addr": addr, "protocol": proto, "via_child": child})
			if out := sandboxCall(t, a, resp.SessionId, "/call mcp__closed__dial "+args); !strings.Contains(out, "permission denied") {
				t.Errorf("%s under network none, via child %v: %s", proto, child, out)
			}
			if out := sandboxCall(t, a, resp.SessionId, "/call mcp__open__dial "+args); !strings.Contains(out, `"text":"connected"`) {
				t.Errorf("%s under network all, via child %v: %s", proto, child, out)
			}
		}
	}
	// The two datagrams sent under all arrived, none under none.
	if got := udp.Received(t); got != 2 {
		t.Errorf("%d datagrams arrived, want 2", got)
	}
}
