package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	if os.Getenv("ACPCLI_TEST_FAKE_AGENT") == "1" {
		os.Exit(runFakeAgent())
	}
	os.Exit(m.Run())
}

// cli runs a built acpcli against the fake agent (this test binary).
type cli struct {
	t     *testing.T
	bin   string
	agent string // --agent value
}

// result is one finished acpcli run.
type result struct {
	stdout, stderr string
	code           int
}

// command prepares acpcli with args; env adds to the fake agent's environment.
func (c *cli) command(ctx context.Context, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.bin, append([]string{"--agent", c.agent}, args...)...)
	// Race-enabled binaries sleep 1 s at exit by default; acpcli and the
	// fake agent need not.
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	cmd.Env = append(append(os.Environ(), "ACPCLI_TEST_FAKE_AGENT=1", "GORACE="+gorace), env...)
	return cmd
}

// run runs acpcli to completion with the given stdin.
func (c *cli) run(stdin string, env []string, args ...string) result {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := c.command(ctx, env, args...)
	cmd.Stdin = strings.NewReader(stdin) // a pipe: not a terminal
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		c.t.Fatalf("run acpcli: %v", err)
	}
	r := result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
	c.t.Logf("acpcli %q: exit %d\n--- stdout:\n%s--- stderr:\n%s", args, r.code, r.stdout, r.stderr)
	return r
}

// buildCLI builds acpcli (with the race detector if this test has it).
func buildCLI(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build acpcli with")
	}
	bin := filepath.Join(t.TempDir(), "acpcli")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	out, err := exec.Command(goBin, append(args, ".")...).CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func wantContains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s does not contain %q", what, w)
		}
	}
}

func TestIntegration(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs acpcli")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := &cli{t: t, bin: buildCLI(t), agent: "'" + self + "' -test.run=^$"}
	t.Run("yes", func(t *testing.T) { testYes(t, &cli{t: t, bin: c.bin, agent: c.agent}) })
	t.Run("json", func(t *testing.T) { testJSON(t, &cli{t: t, bin: c.bin, agent: c.agent}) })
	t.Run("reject", func(t *testing.T) { testReject(t, &cli{t: t, bin: c.bin, agent: c.agent}) })
	t.Run("stdin", func(t *testing.T) { testStdinPrompts(t, &cli{t: t, bin: c.bin, agent: c.agent}) })
	t.Run("load", func(t *testing.T) { testLoad(t, &cli{t: t, bin: c.bin, agent: c.agent}) })
	t.Run("errors", func(t *testing.T) { testErrors(t, &cli{t: t, bin: c.bin, agent: c.agent}) })
	t.Run("sigint", func(t *testing.T) { testSIGINT(t, &cli{t: t, bin: c.bin, agent: c.agent}) })
	t.Run("servers", func(t *testing.T) { testServers(t, &cli{t: t, bin: c.bin, agent: c.agent}) })
}

// testServers: the servers an agent reports connecting are waited for
// before the first prompt and their states printed (escapes from a
// server's error made harmless); --wait-servers bounds the wait.
func testServers(t *testing.T, c *cli) {
	r := c.run("", []string{"ACPCLI_FAKE_MODE=servers"}, "--yes", "hi")
	if r.code != 0 {
		t.Fatalf("exit code %d, want 0", r.code)
	}
	ready := "MCP server demo (stdio): ready, 3 tools\nMCP server web (http): failed, 0 tools — refused [31m\n"
	if i, j := strings.Index(r.stderr, ready), strings.Index(r.stderr, "thinking: pondering"); i < 0 || j < i {
		t.Errorf("stderr does not give the ready servers before the turn:\n%s", r.stderr)
	}
	r = c.run("", []string{"ACPCLI_FAKE_MODE=servers-stuck"}, "--yes", "--wait-servers", "50ms", "hi")
	if r.code != 0 || !strings.Contains(r.stderr, "MCP server demo (stdio): connecting, 0 tools") {
		t.Errorf("exit %d; a server never ready is not reported connecting after --wait-servers:\n%s", r.code, r.stderr)
	}
	r = c.run("", nil, "--yes", "hi")
	if strings.Contains(r.stderr, "MCP server") {
		t.Errorf("an agent that reports no servers got a servers line:\n%s", r.stderr)
	}
}

// testYes: a one-shot prompt with --yes and MCP servers; checks the output,
// the permission answer and what went over the wire.
func testYes(t *testing.T, c *cli) {
	rec := filepath.Join(t.TempDir(), "wire")
	r := c.run("", []string{"ACPCLI_FAKE_RECORD=" + rec},
		"--yes", "--mcp", "files=/bin/echo 'a b'", "--mcp-http", "web=http://127.0.0.1:1/mcp", "hello", "world")
	if r.code != 0 {
		t.Fatalf("exit code %d, want 0", r.code)
	}
	wantStdout := "echo: hello world\n⏺ Read file [read] pending\n  ↳ completed\n    line 1\n    line 2\n"
	if r.stdout != wantStdout {
		t.Errorf("stdout = %q, want %q", r.stdout, wantStdout)
	}
	wantContains(t, "stderr", r.stderr,
		"fake agent: started", "agent: fake-agent 1.2.3, protocol version 1", "session: sess-1",
		"thinking: pondering", "permission: Read file → Allow [allow_once] (--yes)", "[stop: end_turn]")

	in, err := os.ReadFile(rec + ".in")
	if err != nil {
		t.Fatal(err)
	}
	wantContains(t, "what the agent received", string(in),
		`"method":"initialize","params":{"clientCapabilities":{`, `"clientInfo":{"name":"acpcli"`, `"protocolVersion":1`,
		`"mcpServers":[{"args":["a b"],"command":"/bin/echo","env":[],"name":"files"},{"headers":[],"name":"web","type":"http","url":"http://127.0.0.1:1/mcp"}]`,
		`"result":{"outcome":{"optionId":"allow","outcome":"selected"}}`)
}

// testJSON: --json prints exactly the session/update params received, then
// the stop reason.
func testJSON(t *testing.T, c *cli) {
	rec := filepath.Join(t.TempDir(), "wire")
	r := c.run("", []string{"ACPCLI_FAKE_RECORD=" + rec}, "--json", "--yes", "hi")
	if r.code != 0 {
		t.Fatalf("exit code %d, want 0", r.code)
	}
	out, err := os.ReadFile(rec + ".out")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if p := sessionUpdateParams(sc.Bytes()); p != nil {
			want = append(want, string(p))
		}
	}
	want = append(want, `{"stopReason":"end_turn"}`)
	got := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("--json stdout:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(want) != 5 || !strings.Contains(want[1], `"text":"echo: hi"`) {
		t.Errorf("unexpected updates from the fake agent: %q", want)
	}
	for _, line := range got {
		if !json.Valid([]byte(line)) {
			t.Errorf("not JSON: %q", line)
		}
	}
	if strings.Contains(r.stderr, "[stop:") || strings.Contains(r.stderr, "thinking:") {
		t.Errorf("--json must not render updates on stderr")
	}
}

// testReject: without --yes and with stdin not a terminal, permission is
// rejected with reject_once, and acpcli says so.
func testReject(t *testing.T, c *cli) {
	r := c.run("", nil, "read", "it")
	if r.code != 0 {
		t.Fatalf("exit code %d, want 0", r.code)
	}
	wantContains(t, "stdout", r.stdout, "echo: read it\n", "  ↳ failed: denied by user\n")
	wantContains(t, "stderr", r.stderr, "permission: Read file → Reject [reject_once]: stdin is not a terminal and --yes was not given")
}

// testStdinPrompts: without arguments each non-empty stdin line is a prompt.
func testStdinPrompts(t *testing.T, c *cli) {
	r := c.run("first\n\n   \n/mcp\n", nil, "--yes")
	if r.code != 0 {
		t.Fatalf("exit code %d, want 0", r.code)
	}
	wantContains(t, "stdout", r.stdout, "echo: first\n", "echo: /mcp\n")
	if n := strings.Count(r.stderr, "[stop: end_turn]"); n != 2 {
		t.Errorf("%d turns, want 2", n)
	}
}

// testLoad: --load replays the history like live updates.
func testLoad(t *testing.T, c *cli) {
	r := c.run("", nil, "--yes", "--load", "old-7", "again")
	if r.code != 0 {
		t.Fatalf("exit code %d, want 0", r.code)
	}
	wantContains(t, "stdout", r.stdout, "> earlier question\nearlier answer\n", "echo: again\n")
	wantContains(t, "stderr", r.stderr, "session: old-7")
}

// testErrors: exit codes 1 (request failed), 2 (usage) and 3 (agent died).
func testErrors(t *testing.T, c *cli) {
	r := c.run("", nil, "fail")
	if r.code != 1 {
		t.Errorf("failed request: exit code %d, want 1", r.code)
	}
	wantContains(t, "stderr", r.stderr, `session/prompt failed: JSON-RPC error -32603: Internal error (data: {"details":"boom"})`)

	r = c.run("", []string{"ACPCLI_FAKE_MODE=die"}, "--yes", "hello")
	if r.code != 3 {
		t.Errorf("dying agent: exit code %d, want 3", r.code)
	}
	wantContains(t, "stderr", r.stderr, "the agent exited unexpectedly (exit status 7)")

	r = c.run("", nil, "--yes")
	if r.code != 0 {
		t.Errorf("empty stdin, no prompts: exit code %d, want 0", r.code)
	}

	r = c.run("", nil, "--mcp", "broken")
	if r.code != 2 {
		t.Errorf("usage error: exit code %d, want 2", r.code)
	}
	wantContains(t, "stderr", r.stderr, "-mcp", "want name=")

	c.agent = "/nonexistent/agent"
	if r = c.run("", nil, "hi"); r.code != 1 {
		t.Errorf("missing agent: exit code %d, want 1", r.code)
	}
}

// testSIGINT: the first SIGINT cancels the turn, which ends as cancelled;
// acpcli exits 130.
func testSIGINT(t *testing.T, c *cli) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := c.command(ctx, nil, "wait")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || sc.Text() != "waiting" {
		t.Fatalf("first stdout line %q, want waiting", sc.Text())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
	}
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit code %d, want 130\n%s", code, stderr.String())
	}
	wantContains(t, "stderr", stderr.String(), "cancelling the turn", "[stop: cancelled]")
}
