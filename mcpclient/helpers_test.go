package mcpclient_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/base/sandbox"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/mark3labs/mcp-go/mcp"
)

// serverBin is the test MCP server (internal/testsupport/fake/mcpserver), built by TestMain.
var serverBin string

// testPolicy is the sandbox policy of every server stdio returns: off,
// unless MCPCLIENT_TEST_SANDBOX gives one in the configuration's form
// ("workspace-write", or an object), so that the whole suite can run
// with the sandbox on. The test binary is the launcher (launcher).
var testPolicy sandbox.Policy

func TestMain(m *testing.M) {
	sandbox.LaunchIfAsked()
	if p := os.Getenv("MCPCLIENT_TEST_SANDBOX"); p != "" {
		if !strings.HasPrefix(p, "{") {
			p = strconv.Quote(p)
		}
		if err := json.Unmarshal([]byte(p), &testPolicy); err != nil {
			fmt.Fprintln(os.Stderr, "MCPCLIENT_TEST_SANDBOX:", err)
			os.Exit(2)
		}
	}
	if os.Getenv("MCPCLIENT_TEST_OLD_SERVER") == "1" {
		oldServer()
		os.Exit(0)
	}
	if os.Getenv("MCPCLIENT_TEST_TASK_SERVER") == "1" {
		taskServer()
		os.Exit(0)
	}
	testbin.Main(m, map[string]*string{"./internal/testsupport/fake/mcpserver": &serverBin})
}

// stdio returns a spec running the test server over stdio with args.
func stdio(name string, args ...string) mcpclient.ServerSpec {
	return mcpclient.ServerSpec{Name: name, Command: serverBin, Args: append([]string{"-name", name}, args...), Sandbox: testPolicy}
}

// launcher is the sandbox launcher of the tests: the test binary itself
// (see TestMain).
func launcher(t *testing.T) *sandbox.Launcher {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	return &sandbox.Launcher{Exe: exe, Places: sandbox.Places{Home: home}}
}

// fastOpts are Options with short close bounds and restart backoff, and a
// logger writing into the returned buffer.
func fastOpts(t *testing.T) (*mcpclient.Options, *testbin.SyncBuffer) {
	t.Helper()
	logs := &testbin.SyncBuffer{}
	cwd := t.TempDir()
	return &mcpclient.Options{
		Logger:       slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Cwd:          cwd,
		Sandbox:      launcher(t),
		Workspace:    []string{filepath.Dir(cwd)}, // every t.TempDir of the test
		CloseGrace:   200 * time.Millisecond,
		CloseTimeout: time.Second,
		Backoff:      func(int) time.Duration { return 10 * time.Millisecond },
	}, logs
}

// start creates and starts a Manager, closed at the end of the test.
func start(t *testing.T, opts *mcpclient.Options, specs ...mcpclient.ServerSpec) *mcpclient.Manager {
	t.Helper()
	m, err := mcpclient.New(specs, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return m
}

// mustReady fails the test unless every named server is ready.
func mustReady(t *testing.T, m *mcpclient.Manager, names ...string) {
	t.Helper()
	for _, n := range names {
		st, ok := m.Status(n)
		if !ok || st.State != mcpclient.StateReady {
			t.Fatalf("server %s: %+v, want ready", n, st)
		}
	}
}

// text returns the text of the first content block of res.
func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res == nil || len(res.Content) == 0 {
		t.Fatalf("result has no content: %+v", res)
	}
	tc, ok := res.Content[0].(mcp.TextContent)
	if !ok {
		t.Fatalf("first content is %T, want text", res.Content[0])
	}
	return tc.Text
}

func call(t *testing.T, m *mcpclient.Manager, server, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := m.CallTool(ctx, server, tool, args)
	if err != nil {
		t.Fatalf("CallTool %s/%s: %v", server, tool, err)
	}
	return res
}

// eventLog collects a Manager's events and lets a test wait for one.
type eventLog struct {
	mu     sync.Mutex
	events []mcpclient.Event
	wake   chan struct{}
}

func newEventLog() *eventLog { return &eventLog{wake: make(chan struct{}, 1)} }

func (l *eventLog) add(e mcpclient.Event) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// wait blocks until an event matching match has been seen.
func (l *eventLog) wait(t *testing.T, what string, match func(mcpclient.Event) bool) mcpclient.Event {
	t.Helper()
	return l.waitFrom(t, 0, what, match)
}

// snapshot returns the events seen so far.
func (l *eventLog) snapshot() []mcpclient.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]mcpclient.Event(nil), l.events...)
}

// waitFrom is wait for events after the first from.
func (l *eventLog) waitFrom(t *testing.T, from int, what string, match func(mcpclient.Event) bool) mcpclient.Event {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		l.mu.Lock()
		for _, e := range l.events[from:] {
			if match(e) {
				l.mu.Unlock()
				return e
			}
		}
		l.mu.Unlock()
		select {
		case <-l.wake:
		case <-timeout:
			t.Fatalf("timed out waiting for event: %s", what)
		}
	}
}

// recordFile returns a path for the server's -record file and a reader of
// its lines.
func recordFile(t *testing.T) (string, func() []string) {
	path := filepath.Join(t.TempDir(), "record")
	return path, func() []string {
		b, _ := os.ReadFile(path)
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}
}

func hasLine(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// recordedPIDs returns the pids in record lines starting with prefix.
func recordedPIDs(t *testing.T, lines []string, prefix string) []int {
	t.Helper()
	var pids []int
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, prefix+" "); ok {
			pid, err := strconv.Atoi(strings.TrimSpace(rest))
			if err != nil {
				t.Fatalf("bad record line %q", l)
			}
			pids = append(pids, pid)
		}
	}
	return pids
}

// netServer runs the test server in http or sse mode on 127.0.0.1 and
// returns its URL. It is killed at the end of the test.
func netServer(t testing.TB, mode string, args ...string) string {
	t.Helper()
	url, _ := netServerAt(t, mode, "127.0.0.1:0", args...)
	return url
}

// netServerAt runs the test server in http or sse mode on addr and returns
// its URL and process, which is killed at the end of the test.
func netServerAt(t testing.TB, mode, addr string, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(serverBin, append([]string{"-transport", mode, "-addr", addr}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading URL line: %v", err)
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "URL ")
	if !ok {
		t.Fatalf("unexpected first line %q", line)
	}
	return url, cmd
}
