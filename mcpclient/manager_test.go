package mcpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/mark3labs/mcp-go/mcp"
)

func TestStdioCallsPassThrough(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	m := start(t, opts, stdio("s"))
	mustReady(t, m, "s")
	st, _ := m.Status("s")
	if st.ProtocolVersion != mcpclient.ProtocolVersion || st.ServerName != "s" || st.Transport != mcpclient.TransportStdio {
		t.Errorf("status %+v", st)
	}

	if got := text(t, call(t, m, "s", "echo", map[string]any{"text": "héllo"})); got != "héllo" {
		t.Errorf("echo: %q", got)
	}
	add := call(t, m, "s", "add", map[string]any{"a": 2, "b": 3})
	if got := text(t, add); got != "5" {
		t.Errorf("add: %q", got)
	}
	if sc, _ := json.Marshal(add.StructuredContent); string(sc) != `{"sum":5}` {
		t.Errorf("add structuredContent %s", sc)
	}
	fail := call(t, m, "s", "fail", map[string]any{"message": "nope"})
	if !fail.IsError || text(t, fail) != "nope" {
		t.Errorf("fail: isError=%v %q", fail.IsError, text(t, fail))
	}
	mixed := call(t, m, "s", "mixed", nil)
	var kinds []string
	for _, c := range mixed.Content {
		switch c := c.(type) {
		case mcp.TextContent:
			kinds = append(kinds, "text")
		case mcp.ImageContent:
			kinds = append(kinds, "image:"+c.MIMEType)
		case mcp.AudioContent:
			kinds = append(kinds, "audio:"+c.MIMEType)
		case mcp.EmbeddedResource:
			kinds = append(kinds, "resource")
		case mcp.ResourceLink:
			kinds = append(kinds, "resource_link:"+c.URI)
		default:
			kinds = append(kinds, "?")
		}
	}
	want := []string{"text", "image:image/png", "audio:audio/wav", "resource", "resource_link:test://hello"}
	if !slices.Equal(kinds, want) {
		t.Errorf("mixed content %v, want %v", kinds, want)
	}
	structured := call(t, m, "s", "structured", nil)
	if sc, _ := json.Marshal(structured.StructuredContent); string(sc) != `{"answer":42}` {
		t.Errorf("structured %s", sc)
	}
	big := call(t, m, "s", "big", map[string]any{"bytes": 3 << 20})
	if n := len(text(t, big)); n != 3<<20 {
		t.Errorf("big: %d bytes", n)
	}
}

func TestResourcesAndPrompts(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	m := start(t, opts, stdio("s"))
	var uris []string
	for _, r := range m.Resources() {
		uris = append(uris, r.Item.URI)
	}
	if !slices.Contains(uris, "test://hello") {
		t.Errorf("resources %v", uris)
	}
	if tm := m.ResourceTemplates(); len(tm) == 0 || tm[0].Item.URITemplate.Raw() != "test://items/{id}" {
		t.Errorf("templates %+v", tm)
	}
	if ps := m.Prompts(); len(ps) == 0 {
		t.Error("no prompts")
	}
	ctx := context.Background()
	rr, err := m.ReadResource(ctx, "s", "test://hello")
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := rr.Contents[0].(mcp.TextResourceContents); !ok || tc.Text != "hello world" {
		t.Errorf("read: %+v", rr.Contents)
	}
	gp, err := m.GetPrompt(ctx, "s", "greet", map[string]string{"name": "Ada"})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := gp.Messages[0].Content.(mcp.TextContent); !ok || tc.Text != "Hello, Ada!" {
		t.Errorf("prompt: %+v", gp.Messages)
	}
}

func TestPaginationAndTools(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	m := start(t, opts, stdio("paged", "-page-size", "2", "-tools", "5"))
	var names []string
	for _, st := range m.Tools() {
		names = append(names, st.Tool.Name)
	}
	for _, w := range []string{"echo", "sleep", "tool_0", "tool_4"} {
		if !slices.Contains(names, w) {
			t.Errorf("tool %s missing from %v", w, names)
		}
	}
}

func TestHTTPTransports(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		mode      string
		transport mcpclient.Transport
		want      mcpclient.Transport
	}{
		{"streamable", "http", mcpclient.TransportHTTP, mcpclient.TransportHTTP},
		{"sse", "sse", mcpclient.TransportSSE, mcpclient.TransportSSE},
		{"fallback", "sse", mcpclient.TransportHTTP, mcpclient.TransportSSE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, lines := recordFile(t)
			url, proc := netServerAt(t, tc.mode, "127.0.0.1:0", "-record", rec)
			opts, _ := fastOpts(t)
			events := newEventLog()
			opts.OnEvent = events.add
			m, err := mcpclient.New([]mcpclient.ServerSpec{{
				Name: "net", Transport: tc.transport, URL: url,
				Headers: map[string]string{"X-Test": "from-spec"},
			}}, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close(context.Background())
			if err := m.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			mustReady(t, m, "net")
			if st, _ := m.Status("net"); st.Transport != tc.want {
				t.Errorf("transport %s, want %s", st.Transport, tc.want)
			}
			if got := text(t, call(t, m, "net", "echo", map[string]any{"text": "hi"})); got != "hi" {
				t.Errorf("echo %q", got)
			}
			if !hasLine(lines(), "header X-Test from-spec") {
				t.Errorf("configured header not sent; record: %v", lines())
			}
			// list_changed must arrive with no request in flight: the server
			// changes its tools on SIGUSR1.
			if err := proc.Process.Signal(syscall.SIGUSR1); err != nil {
				t.Fatal(err)
			}
			events.wait(t, "usr1_tool listed", func(mcpclient.Event) bool { return hasTool(m, "net", "usr1_tool") })
			if err := m.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if tc.want == mcpclient.TransportHTTP && !hasLine(lines(), "http delete /mcp") {
				t.Errorf("session not ended with DELETE; record: %v", lines())
			}
		})
	}
}

func TestHTTPReconnect(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"http", "sse"} {
		t.Run(mode, func(t *testing.T) {
			url, proc := netServerAt(t, mode, "127.0.0.1:0")
			opts, _ := fastOpts(t)
			events := newEventLog()
			opts.OnEvent = events.add
			spec := mcpclient.ServerSpec{Name: "net", Transport: mcpclient.Transport(mode), URL: url, MaxRestarts: 1000}
			m := start(t, opts, spec)
			call(t, m, "net", "echo", map[string]any{"text": "before"})

			// The server goes away and comes back on the same address.
			_ = proc.Process.Kill()
			_ = proc.Wait()
			addr := strings.TrimPrefix(strings.TrimSuffix(strings.TrimSuffix(url, "/mcp"), "/sse"), "http://")
			netServerAt(t, mode, addr)

			// The first call may fail (the old session is gone); the
			// connection is then re-established and calls work again.
			var got string
			testbin.WaitFor(t, "a call after reconnecting", func() bool {
				res, err := m.CallTool(context.Background(), "net", "echo", map[string]any{"text": "after"})
				if err != nil {
					if !errors.Is(err, mcpclient.ErrConnLost) && !errors.Is(err, mcpclient.ErrNotReady) {
						t.Fatalf("call while reconnecting: %v", err)
					}
					return false
				}
				got = text(t, res)
				return true
			})
			if got != "after" {
				t.Errorf("echo %q", got)
			}
			events.wait(t, "restarting", func(e mcpclient.Event) bool { return e.Status.State == mcpclient.StateRestarting })
		})
	}
}

func hasTool(m *mcpclient.Manager, server, tool string) bool {
	for _, st := range m.Tools() {
		if st.Server == server && st.Tool.Name == tool {
			return true
		}
	}
	return false
}

func TestFailureIsolation(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	events := newEventLog()
	opts.OnEvent = events.add
	hang := stdio("hang", "-init-hang")
	hang.ConnectTimeout = time.Hour // a good server must not wait for this
	m, err := mcpclient.New([]mcpclient.ServerSpec{
		stdio("good"),
		{Name: "missing", Command: "/nonexistent/mcp-server"},
		stdio("dies", "-exit-at-start", "7"),
		hang,
		stdio("refuses", "-init-error"),
	}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	startDone := make(chan error, 1)
	go func() { startDone <- m.Start(ctx) }()

	events.wait(t, "good ready", func(e mcpclient.Event) bool {
		return e.Server == "good" && e.Status.State == mcpclient.StateReady
	})
	for _, name := range []string{"missing", "dies", "refuses"} {
		events.wait(t, name+" failed", func(e mcpclient.Event) bool {
			return e.Server == name && e.Status.State == mcpclient.StateFailed
		})
	}
	if st, _ := m.Status("hang"); st.State != mcpclient.StateConnecting {
		t.Errorf("hang: %+v", st)
	}
	// Start is still waiting for hang; giving up on it leaves the rest usable.
	cancel()
	if err := <-startDone; !errors.Is(err, context.Canceled) {
		t.Errorf("Start: %v", err)
	}
	if got := text(t, call(t, m, "good", "echo", map[string]any{"text": "ok"})); got != "ok" {
		t.Errorf("echo %q", got)
	}

	missing, _ := m.Status("missing")
	if !strings.Contains(missing.Error, "/nonexistent/mcp-server") || !strings.Contains(missing.Error, "no such file") {
		t.Errorf("missing: %q", missing.Error)
	}
	dies, _ := m.Status("dies")
	if !strings.Contains(dies.Error, "exit status 7") || !strings.Contains(dies.Stderr, "fatal: exiting at start") {
		t.Errorf("dies: error %q stderr %q", dies.Error, dies.Stderr)
	}
	refuses, _ := m.Status("refuses")
	if !strings.Contains(refuses.Error, "initialize") {
		t.Errorf("refuses: %q", refuses.Error)
	}
	_, err = m.CallTool(context.Background(), "dies", "echo", nil)
	if !errors.Is(err, mcpclient.ErrNotReady) || !strings.Contains(err.Error(), "exit status 7") {
		t.Errorf("call to failed server: %v", err)
	}
	_, err = m.CallTool(context.Background(), "hang", "echo", nil)
	if !errors.Is(err, mcpclient.ErrNotReady) || !strings.Contains(err.Error(), "connecting") {
		t.Errorf("call to connecting server: %v", err)
	}
}

func TestInitTimeout(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	spec := stdio("hang", "-init-hang")
	spec.ConnectTimeout = 300 * time.Millisecond
	m := start(t, opts, spec)
	st, _ := m.Status("hang")
	if st.State != mcpclient.StateFailed || !strings.Contains(st.Error, "no answer within 300ms") {
		t.Errorf("%+v", st)
	}
}

func TestCallErrors(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	m := start(t, opts, stdio("s"), mcpclient.ServerSpec{Name: "off", Command: "x", Disabled: true})
	ctx := context.Background()
	for _, tc := range []struct {
		server, tool string
		want         error
		text         string
	}{
		{"nope", "echo", mcpclient.ErrUnknownServer, `"nope"`},
		{"s", "nope", mcpclient.ErrUnknownTool, `no tool "nope"`},
		{"off", "echo", mcpclient.ErrNotReady, "closed"},
	} {
		_, err := m.CallTool(ctx, tc.server, tc.tool, nil)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%s/%s: %v, want %v mentioning %s", tc.server, tc.tool, err, tc.want, tc.text)
		}
	}
}

func TestCrashRestart(t *testing.T) {
	t.Parallel()
	opts, logs := fastOpts(t)
	events := newEventLog()
	opts.OnEvent = events.add
	m := start(t, opts, stdio("c", "-crash-after", "1"))
	call(t, m, "c", "echo", map[string]any{"text": "1"})
	_, err := m.CallTool(context.Background(), "c", "echo", map[string]any{"text": "2"})
	if !errors.Is(err, mcpclient.ErrServerExited) || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("in-flight call: %v", err)
	}
	events.wait(t, "restarting", func(e mcpclient.Event) bool { return e.Status.State == mcpclient.StateRestarting })
	events.wait(t, "ready after restart", func(e mcpclient.Event) bool {
		return e.Kind == mcpclient.EventToolsChanged && e.Status.State == mcpclient.StateReady && e.Status.Restarts == 1 && len(m.Tools()) > 0 && restarted(logs)
	})
	if got := text(t, call(t, m, "c", "echo", map[string]any{"text": "3"})); got != "3" {
		t.Errorf("after restart: %q", got)
	}
}

func restarted(logs *testbin.SyncBuffer) bool {
	return strings.Contains(logs.String(), "restarting MCP server")
}

func TestRestartLimit(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	marker := filepath.Join(t.TempDir(), "started")
	// Starts fine once; every restart exits at once.
	spec := mcpclient.ServerSpec{
		Name: "flaky", Command: "/bin/sh", MaxRestarts: 2,
		Args: []string{"-c", `if [ -e "$1" ]; then echo "refusing restart" >&2; exit 9; fi; touch "$1"; exec "$2"`, "sh", marker, serverBin},
	}
	events := newEventLog()
	opts.OnEvent = events.add
	m := start(t, opts, spec)
	mustReady(t, m, "flaky")
	_, err := m.CallTool(context.Background(), "flaky", "crash", nil)
	if !errors.Is(err, mcpclient.ErrServerExited) {
		t.Fatalf("crash call: %v", err)
	}
	e := events.wait(t, "failed", func(e mcpclient.Event) bool { return e.Status.State == mcpclient.StateFailed })
	if !errors.Is(e.Status.Err, mcpclient.ErrGaveUp) || !strings.Contains(e.Status.Error, "exit status 9") ||
		!strings.Contains(e.Status.Stderr, "refusing restart") {
		t.Errorf("failed status: %+v", e.Status)
	}
	if len(m.Tools()) != 0 {
		t.Error("failed server still offers tools")
	}
}

func TestEnvironmentAndCwd(t *testing.T) {
	t.Setenv("ACPGATE_TEST_SECRET", "sk-do-not-leak")
	opts, _ := fastOpts(t)
	cwd := t.TempDir()
	spec := stdio("s")
	spec.Env = map[string]string{"GIVEN": "yes"}
	spec.Cwd = cwd
	m := start(t, opts, spec, stdio("default-cwd"))
	for name, want := range map[string]string{
		"ACPGATE_TEST_SECRET": "(unset)",
		"GIVEN":               "yes",
		"HOME":                os.Getenv("HOME"),
		"PATH":                os.Getenv("PATH"),
	} {
		if got := text(t, call(t, m, "s", "env", map[string]any{"name": name})); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if got := text(t, call(t, m, "s", "cwd", nil)); got != cwd {
		t.Errorf("cwd %q, want %q", got, cwd)
	}
	if got := text(t, call(t, m, "default-cwd", "cwd", nil)); got != opts.Cwd {
		t.Errorf("default cwd %q, want %q", got, opts.Cwd)
	}
}

func TestCallTimeoutAndProgress(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	spec := stdio("s")
	spec.CallTimeout = 300 * time.Millisecond
	m := start(t, opts, spec)
	_, err := m.CallTool(context.Background(), "s", "sleep", map[string]any{"ms": 10000})
	if !errors.Is(err, mcpclient.ErrCallTimeout) || !strings.Contains(err.Error(), "300ms") {
		t.Fatalf("sleep: %v", err)
	}
	// 6 steps 100 ms apart outlast the 300 ms timeout only because each
	// progress notification restarts it.
	var mu sync.Mutex
	var seen []mcpclient.Progress
	res, err := m.CallTool(context.Background(), "s", "progress", map[string]any{"steps": 6, "interval_ms": 100},
		mcpclient.WithProgress(func(p mcpclient.Progress) {
			mu.Lock()
			seen = append(seen, p)
			mu.Unlock()
		}))
	if err != nil {
		t.Fatalf("progress: %v", err)
	}
	if got := text(t, res); got != "done 6" {
		t.Errorf("progress result %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 6 || seen[5].Progress != 6 {
		t.Errorf("progress notifications %+v", seen)
	}
}

func TestCancellationReachesServer(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"stdio", "http", "sse"} {
		t.Run(mode, func(t *testing.T) { testCancellation(t, mode) })
	}
}

func testCancellation(t *testing.T, mode string) {
	opts, _ := fastOpts(t)
	rec, lines := recordFile(t)
	spec := stdio("s", "-record", rec)
	var srv *exec.Cmd
	if mode != "stdio" {
		var url string
		url, srv = netServerAt(t, mode, "127.0.0.1:0", "-record", rec)
		spec = mcpclient.ServerSpec{Name: "s", Transport: mcpclient.Transport(mode), URL: url}
	}
	m := start(t, opts, spec)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := m.CallTool(ctx, "s", "sleep", map[string]any{"ms": 20000})
		done <- err
	}()
	testbin.WaitFor(t, "sleep call recorded", func() bool { return hasLine(lines(), "call sleep") })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	testbin.WaitFor(t, "server-side cancellation", func() bool { return hasLine(lines(), "cancelled sleep") })
	testbin.WaitFor(t, "notifications/cancelled", func() bool { return hasLine(lines(), "notice cancelled") })
	// The server is still fine.
	call(t, m, "s", "echo", map[string]any{"text": "x"})

	// Exactly one notice: once the manager is closed (it waits for its
	// notices, and stdin is closed) and the server has stopped (it
	// records a notice on receipt), the record is complete.
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if srv != nil {
		_ = srv.Process.Signal(syscall.SIGTERM)
		_ = srv.Wait()
	}
	n := 0
	for _, l := range lines() {
		if strings.HasPrefix(l, "notice cancelled") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%s: %d notifications/cancelled for one cancelled call, want 1:\n%s", mode, n, strings.Join(lines(), "\n"))
	}
}

func TestListChanged(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	events := newEventLog()
	opts.OnEvent = events.add
	m := start(t, opts, stdio("s"))
	call(t, m, "s", "add_tool", map[string]any{"name": "late"})
	events.wait(t, "tools changed", func(e mcpclient.Event) bool {
		return e.Kind == mcpclient.EventToolsChanged && hasTool(m, "s", "late")
	})
	if got := text(t, call(t, m, "s", "late", nil)); !strings.Contains(got, "late") {
		t.Errorf("late tool said %q", got)
	}
	call(t, m, "s", "remove_tool", map[string]any{"name": "late"})
	events.wait(t, "tool removed", func(mcpclient.Event) bool { return !hasTool(m, "s", "late") })
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	limited := stdio("limited")
	limited.CallsPerMinute = 3
	unlimited := stdio("unlimited")
	unlimited.CallsPerMinute = mcpclient.Unlimited
	opts.CallsPerMinute = 2
	m := start(t, opts, limited, unlimited, stdio("default"))
	for i := 0; i < 3; i++ {
		call(t, m, "limited", "echo", map[string]any{"text": "x"})
	}
	_, err := m.CallTool(context.Background(), "limited", "echo", map[string]any{"text": "x"})
	if !errors.Is(err, mcpclient.ErrRateLimited) || !strings.Contains(err.Error(), "3 calls per minute") {
		t.Errorf("4th call: %v", err)
	}
	for i := 0; i < 2; i++ {
		call(t, m, "default", "echo", map[string]any{"text": "x"})
	}
	if _, err := m.CallTool(context.Background(), "default", "echo", map[string]any{"text": "x"}); !errors.Is(err, mcpclient.ErrRateLimited) {
		t.Errorf("default limit: %v", err)
	}
	for i := 0; i < 150; i++ {
		call(t, m, "unlimited", "echo", map[string]any{"text": "x"})
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	opts.MaxServers = 2
	opts.MaxTools = 40 // room for the test server's built-in tools, which grow
	m := start(t, opts, stdio("a", "-tools", "1"), stdio("b", "-tools", "30"), stdio("c"))
	c, _ := m.Status("c")
	if c.State != mcpclient.StateFailed || !strings.Contains(c.Error, "at most 2 servers") {
		t.Errorf("c: %+v", c)
	}
	a, _ := m.Status("a")
	b, _ := m.Status("b")
	if a.Tools+b.Tools != 40 || a.Dropped != 0 || b.Dropped == 0 || !strings.Contains(b.Warning, "not offered") {
		t.Errorf("a %+v\nb %+v", a, b)
	}
	if n := len(m.Tools()); n != 40 {
		t.Errorf("%d tools offered", n)
	}
	// Deterministic: b keeps its first tools in its own order.
	last := m.Tools()[39]
	if last.Server != "b" {
		t.Errorf("last tool %+v", last)
	}
	if _, err := m.CallTool(context.Background(), "b", "tool_29", nil); !errors.Is(err, mcpclient.ErrUnknownTool) {
		t.Errorf("dropped tool callable: %v", err)
	}
}

func TestJunkOnStdout(t *testing.T) {
	t.Parallel()
	opts, logs := fastOpts(t)
	opts.MaxMessageSize = 1 << 20
	m := start(t, opts, stdio("junk", "-junk-stdout", "-huge-line", "3000000"))
	if got := text(t, call(t, m, "junk", "echo", map[string]any{"text": "fine"})); got != "fine" {
		t.Errorf("echo %q", got)
	}
	for _, w := range []string{"skipped non-JSON line", "this is not json", "bytes=3000001"} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("logs lack %q", w)
		}
	}
}

func TestServerLogsAndStderr(t *testing.T) {
	t.Parallel()
	opts, logs := fastOpts(t)
	m := start(t, opts, stdio("talky", "-stderr-lines", "2"))
	call(t, m, "talky", "log", map[string]any{"level": "warning", "message": "disk almost full"})
	testbin.WaitFor(t, "log lines", func() bool {
		l := logs.String()
		return strings.Contains(l, `level=WARN msg="server log" server=talky`) && strings.Contains(l, "disk almost full") &&
			strings.Contains(l, `msg="server stderr" server=talky line="stderr line 2"`)
	})
}

func TestCloseIsIdempotentAndConcurrent(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	m, err := mcpclient.New([]mcpclient.ServerSpec{stdio("a"), stdio("b")}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.Close(context.Background()); err != nil {
				t.Errorf("Close: %v", err)
			}
		}()
	}
	wg.Wait()
	for _, st := range m.Statuses() {
		if st.State != mcpclient.StateClosed {
			t.Errorf("%s: %s", st.Name, st.State)
		}
	}
	if _, err := m.CallTool(context.Background(), "a", "echo", nil); !errors.Is(err, mcpclient.ErrNotReady) {
		t.Errorf("call after close: %v", err)
	}
	if err := m.Close(context.Background()); err != nil {
		t.Errorf("Close again: %v", err)
	}
}

func TestNewRejectsAmbiguousSpecs(t *testing.T) {
	t.Parallel()
	for _, specs := range [][]mcpclient.ServerSpec{
		{{Name: "a", Command: "x"}, {Name: "a", Command: "y"}},
		{{Command: "x"}},
	} {
		if _, err := mcpclient.New(specs, nil); !errors.Is(err, mcpclient.ErrInvalidSpec) {
			t.Errorf("%+v: %v", specs, err)
		}
	}
	m, err := mcpclient.New([]mcpclient.ServerSpec{
		{Name: "nocmd"},
		{Name: "remote", URL: "http://example.com/mcp"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"nocmd": "requires a command", "remote": "loopback"} {
		if st, _ := m.Status(name); st.State != mcpclient.StateFailed || !strings.Contains(st.Error, want) {
			t.Errorf("%s: %+v", name, st)
		}
	}
}

func TestInputSchemaVerbatim(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	m := start(t, opts, stdio("s"))
	for _, st := range m.Tools() {
		if st.Tool.Name != "schema_rich" {
			continue
		}
		var got, want any
		if err := json.Unmarshal(st.Tool.RawInputSchema, &got); err != nil {
			t.Fatalf("raw schema %q: %v", st.Tool.RawInputSchema, err)
		}
		_ = json.Unmarshal([]byte(richSchema), &want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("schema changed:\n got %s\nwant %s", st.Tool.RawInputSchema, richSchema)
		}
		return
	}
	t.Fatal("schema_rich not listed")
}

// richSchema is internal/testsupport/fake/mcpserver's RichSchema.
const richSchema = `{"type":"object","$defs":{"point":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"]}},"properties":{"mode":{"type":"string","enum":["fast","slow"]},"at":{"$ref":"#/$defs/point"},"nested":{"type":"object","properties":{"deep":{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}}},"anyOf":[{"required":["mode"]},{"required":["at"]}],"description":"top-level keywords must survive"}`

func TestPrepareRunsAtEveryStart(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	var mu sync.Mutex
	starts := 0
	opts.Prepare = func(_ context.Context, spec mcpclient.ServerSpec) (mcpclient.ServerSpec, error) {
		mu.Lock()
		defer mu.Unlock()
		starts++
		if spec.Name == "bad" {
			return spec, errors.New("env TOKEN: secret://env/NOPE: not set")
		}
		spec.Env = map[string]string{"RESOLVED": fmt.Sprintf("value-%d", starts)}
		return spec, nil
	}
	m := start(t, opts, stdio("good"), stdio("bad"))
	if got := text(t, call(t, m, "good", "env", map[string]any{"name": "RESOLVED"})); !strings.HasPrefix(got, "value-") {
		t.Errorf("prepared env not used: %q", got)
	}
	bad, _ := m.Status("bad")
	if bad.State != mcpclient.StateFailed || !strings.Contains(bad.Error, "secret://env/NOPE") {
		t.Errorf("bad: %+v", bad)
	}
	_, _ = m.CallTool(context.Background(), "good", "crash", nil)
	testbin.WaitFor(t, "restart with a fresh prepare", func() bool {
		mu.Lock()
		defer mu.Unlock()
		st, _ := m.Status("good")
		return starts >= 3 && st.State == mcpclient.StateReady
	})
}

func TestReconfigure(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	rec, lines := recordFile(t)
	events := newEventLog()
	opts.OnEvent = events.add
	keep := stdio("keep", "-record", rec)
	change := stdio("change")
	m := start(t, opts, keep, change, stdio("drop"))
	before := recordedPIDs(t, lines(), "started")
	change.Env = map[string]string{"NEW": "1"}
	restarted, err := m.Reconfigure(context.Background(), []mcpclient.ServerSpec{keep, change, stdio("added")})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(restarted, ",") != "change,added" {
		t.Errorf("restarted %v", restarted)
	}
	mustReady(t, m, "keep", "change", "added")
	if _, ok := m.Status("drop"); ok || hasTool(m, "drop", "echo") {
		t.Error("dropped server still listed")
	}
	if got := text(t, call(t, m, "change", "env", map[string]any{"name": "NEW"})); got != "1" {
		t.Errorf("changed server runs the old spec: NEW=%q", got)
	}
	if after := recordedPIDs(t, lines(), "started"); len(after) != len(before) {
		t.Errorf("unchanged server was restarted: %v -> %v", before, after)
	}
	if _, err := m.Reconfigure(context.Background(), []mcpclient.ServerSpec{keep, keep}); !errors.Is(err, mcpclient.ErrInvalidSpec) {
		t.Errorf("duplicate names: %v", err)
	}
}

// Restart replaces one server's process with a new one of the same spec
// and leaves the others running; an unknown name is ErrUnknownServer.
func TestRestart(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	recA, linesA := recordFile(t)
	recB, linesB := recordFile(t)
	m := start(t, opts, stdio("a", "-record", recA), stdio("b", "-record", recB))
	first := recordedPIDs(t, linesA(), "started")
	if err := m.Restart(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	mustReady(t, m, "a", "b")
	pids := recordedPIDs(t, linesA(), "started")
	if len(first) != 1 || len(pids) != 2 || pids[1] == pids[0] {
		t.Fatalf("a started as %v, want a second, new process", pids)
	}
	if testbin.Alive(pids[0]) {
		t.Errorf("a's old process %d is still running", pids[0])
	}
	if got := recordedPIDs(t, linesB(), "started"); len(got) != 1 {
		t.Errorf("b was restarted too: %v", got)
	}
	if got := text(t, call(t, m, "a", "echo", map[string]any{"text": "again"})); got != "again" {
		t.Errorf("after the restart: %q", got)
	}
	if err := m.Restart(context.Background(), "nope"); !errors.Is(err, mcpclient.ErrUnknownServer) {
		t.Errorf("unknown server: %v", err)
	}
}

// TestClientInfo: servers see the client name and version of the Options
// in initialize, and the defaults without them.
func TestClientInfo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, version, want string
	}{
		{"editor-agent", "9.8.7", "client editor-agent 9.8.7"},
		{"", "", "client " + mcpclient.DefaultClientName + " " + mcpclient.DefaultClientVersion},
	} {
		t.Run(tc.want, func(t *testing.T) {
			opts, _ := fastOpts(t)
			opts.ClientName, opts.ClientVersion = tc.name, tc.version
			rec, lines := recordFile(t)
			start(t, opts, stdio("s", "-record", rec))
			if !slices.Contains(lines(), tc.want) {
				t.Errorf("record %q, want the line %q", lines(), tc.want)
			}
		})
	}
}
