package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/mcpclient/watchdog"
)

// stubbornArgs make a server that ignores stdin EOF and SIGTERM and has a
// grandchild that left its process group (setsid), as daemonising
// wrappers do.
func stubbornArgs(rec string) []string {
	return []string{"-record", rec, "-ignore-stdin-eof", "-ignore-sigterm", "-grandchild", "-grandchild-setsid"}
}

// openStubborn opens a session with one stubborn server and waits for its
// process and grandchild.
func openStubborn(t testing.TB, a *agent, name string) (acpsdk.SessionId, func() []int) {
	t.Helper()
	rec, record := recordFile(t)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{stdioServer(name, stubbornArgs(rec)...)}})
	if err != nil {
		t.Fatal(err)
	}
	procs := func() []int { return pids(record()) }
	testbin.WaitFor(t, "server and grandchild recorded", func() bool { return len(procs()) == 2 })
	return resp.SessionId, procs
}

// waitAllGone waits until none of pids is alive and says how long it took.
func waitAllGone(t *testing.T, pids []int, since time.Time) {
	t.Helper()
	for _, pid := range pids {
		testbin.WaitFor(t, fmt.Sprintf("pid %d to be gone", pid), func() bool { return !testbin.Alive(pid) })
	}
	t.Logf("all %d processes gone %s after the event", len(pids), time.Since(since).Round(time.Millisecond))
}

func waitExit(t *testing.T, a *agent) {
	t.Helper()
	select {
	case <-a.exited:
	case <-time.After(20 * time.Second):
		t.Fatal("acpgate did not exit")
	}
}

// TestEscapedDescendantsStopped: a server's grandchild that called setsid
// is stopped by session/close, by stdin EOF and by SIGTERM.
func TestEscapedDescendantsStopped(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"close", "EOF", "SIGTERM"} {
		t.Run(how, func(t *testing.T) {
			a := startAgent(t, t.TempDir())
			sid, procs := openStubborn(t, a, "s")
			start := time.Now()
			switch how {
			case "close":
				if _, err := a.conn.CloseSession(ctx30(t), acpsdk.CloseSessionRequest{SessionId: sid}); err != nil {
					t.Fatal(err)
				}
				for _, pid := range procs() { // close returns once all is gone
					if testbin.Alive(pid) {
						t.Errorf("pid %d alive after session/close", pid)
					}
				}
				return
			case "EOF":
				_ = a.stdin.Close()
			case "SIGTERM":
				_ = a.cmd.Process.Signal(syscall.SIGTERM)
			}
			waitExit(t, a)
			if code := a.cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("exit code %d", code)
			}
			for _, pid := range procs() {
				if testbin.Alive(pid) {
					t.Errorf("pid %d alive after acpgate exited (%s)", pid, how)
				}
			}
			t.Logf("acpgate exited %s after %s", time.Since(start).Round(time.Millisecond), how)
		})
	}
}

// TestKilledAgentTakesServersAlong: acpgate killed with SIGKILL runs no
// teardown; its watchdog and the parent-death signal stop the servers and
// their escaped descendants.
func TestKilledAgentTakesServersAlong(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	_, procs1 := openStubborn(t, a, "one")
	_, procs2 := openStubborn(t, a, "two")
	all := append(procs1(), procs2()...)
	start := time.Now()
	_ = a.cmd.Process.Kill()
	waitExit(t, a)
	waitAllGone(t, all, start)
}

// TestClientClosesPipesMidTurn: the editor closes both pipes while a turn
// is sending updates. acpgate must not die of SIGPIPE: it shuts down as on
// EOF and stops every server, the idle one included.
func TestClientClosesPipesMidTurn(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	rec, record := recordFile(t)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{
		stdioServer("busy", "-record", rec),
		stdioServer("idle", "-record", rec, "-ignore-stdin-eof", "-ignore-sigterm"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.conn.SetSessionMode(ctx30(t), acpsdk.SetSessionModeRequest{SessionId: resp.SessionId, ModeId: "auto"}); err != nil {
		t.Fatal(err)
	}
	testbin.WaitFor(t, "servers recorded", func() bool { return len(pids(record())) == 2 })
	go func() {
		// The turn streams a progress update every millisecond; its
		// answer never arrives (the pipes close).
		_, _ = a.conn.Prompt(ctx30(t), acpsdk.PromptRequest{SessionId: resp.SessionId,
			Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(`/call mcp__busy__progress {"steps":100000,"interval_ms":1}`)}})
	}()
	a.client.waitUpdate(t, "progress updates", func(u acpsdk.SessionUpdate) bool {
		return u.ToolCallUpdate != nil && u.ToolCallUpdate.Meta != nil
	})
	_ = a.stdoutPipe.Close()
	_ = a.stdin.Close()
	start := time.Now()
	waitExit(t, a)
	if ws, ok := a.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("acpgate died of %v", ws.Signal())
	}
	if code := a.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	for _, pid := range pids(record()) {
		if testbin.Alive(pid) {
			t.Errorf("server pid %d survived", pid)
		}
	}
	if strings.Contains(a.stderr.String(), "panic") {
		t.Errorf("acpgate panicked:\n%s", a.stderr.String())
	}
	t.Logf("acpgate exited %s after the pipes closed", time.Since(start).Round(time.Millisecond))
}

// TestClientStopsReading: the editor stops reading while a turn writes a
// large update, then closes stdin. The turn is stuck in its write; acpgate
// must still stop the servers and exit.
func TestClientStopsReading(t *testing.T) {
	t.Parallel()
	rec, record := recordFile(t)
	cmd := exec.Command(agentBin, "--state-dir", t.TempDir(), "--log-level", "debug")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &testbin.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("acpgate stderr:\n%s", stderr.String())
		}
	})
	r := bufio.NewReader(stdout)
	call := func(line string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatal(err)
		}
		for {
			l, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("reading: %v", err)
			}
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["id"] != nil && m["method"] == nil {
				return m
			}
		}
	}
	call(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	resp := call(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[` +
		mustJSON(map[string]any{"name": "s", "command": serverBin, "args": []string{"-name", "s", "-record", rec}, "env": []any{}}) + `]}}`)
	sid, _ := resp["result"].(map[string]any)["sessionId"].(string)
	call(`{"jsonrpc":"2.0","id":3,"method":"session/set_mode","params":{"sessionId":"` + sid + `","modeId":"auto"}}`)
	// The 4 MB result will not be read to its end.
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"`+sid+
		`","prompt":[{"type":"text","text":"/call mcp__s__big {\"bytes\":4000000}"}]}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	// Read the first 200 kB of the answer, so acpgate is known to be in
	// the middle of writing the result, then read nothing more.
	if _, err := io.CopyN(io.Discard, r, 200_000); err != nil {
		t.Fatal(err)
	}
	// The server that is answering has recorded its start.
	testbin.WaitFor(t, "the server recorded", func() bool { return len(pids(record())) > 0 })
	if got := pids(record()); len(got) != 1 {
		t.Fatalf("recorded pids %v, want the one server", got)
	}
	_ = stdin.Close()
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		t.Fatal("acpgate did not exit after stdin EOF while the client was not reading")
	}
	for _, pid := range pids(record()) {
		if testbin.Alive(pid) {
			t.Errorf("server pid %d survived", pid)
		}
	}
}

// tokenlessArgs wrap the test server in a shell whose subshell starts a
// process that leaves the group (setsid), drops its environment (env -i,
// so no instance token) and loses its parent (the subshell exits): acpgate,
// a child subreaper, adopts it.
func tokenlessServer(name, rec string) acpsdk.McpServer {
	return acpsdk.McpServer{Stdio: &acpsdk.McpServerStdio{Name: name, Command: "/bin/sh", Env: []acpsdk.EnvVariable{},
		Args: []string{"-c", `(setsid env -i /bin/sleep 600 </dev/null >/dev/null 2>&1 & echo "grandchild $!" >>"$1"); exec "$0" -name s -record "$1" -ignore-sigterm -ignore-stdin-eof`, serverBin, rec}}}
}

// parentOf returns pid's parent pid, or 0.
func parentOf(pid int) int {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// TestTokenlessEscapeeStopped: such a process is stopped when acpgate
// exits, and by the watchdog when acpgate is killed — killed once the
// watchdog's snapshot log shows it noted the escapee.
func TestTokenlessEscapeeStopped(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"EOF", "SIGKILL"} {
		t.Run(how, func(t *testing.T) {
			snapLog := filepath.Join(t.TempDir(), "snapshots")
			a := startAgentEnv(t, t.TempDir(), []string{watchdog.SnapshotLogEnv + "=" + snapLog})
			rec, record := recordFile(t)
			if _, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{tokenlessServer("s", rec)}}); err != nil {
				t.Fatal(err)
			}
			testbin.WaitFor(t, "server and escapee recorded", func() bool { return len(pids(record())) == 2 })
			all := pids(record())
			escapee := all[0]
			testbin.WaitFor(t, "acpgate to adopt the escapee", func() bool { return parentOf(escapee) == a.cmd.Process.Pid })
			start := time.Now()
			switch how {
			case "EOF":
				_ = a.stdin.Close()
			case "SIGKILL":
				// The watchdog notes acpgate's children periodically: wait
				// for a pass that noted the adopted one.
				testbin.WaitFor(t, "a watchdog snapshot noting the escapee", func() bool {
					snaps, err := watchdog.ReadSnapshotLog(snapLog)
					if err != nil {
						t.Fatal(err)
					}
					return slices.ContainsFunc(snaps, func(s watchdog.Snapshot) bool { return slices.Contains(s.Pids, escapee) })
				})
				_ = a.cmd.Process.Kill()
			}
			waitExit(t, a)
			waitAllGone(t, all, start)
		})
	}
}
