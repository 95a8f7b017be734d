package main_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	acpsdk "github.com/coder/acp-go-sdk"
	mcpgo "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// benchACP starts an ACP agent (acpgate or the minimal agent) and
// initializes it.
func benchACP(b *testing.B, bin string, args ...string) (*acpsdk.ClientSideConnection, *exec.Cmd, func()) {
	b.Helper()
	return benchACPClient(b, newClient(), bin, args...)
}

// benchACPClient is benchACP with the client the connection dispatches to.
func benchACPClient(b *testing.B, c *client, bin string, args ...string) (*acpsdk.ClientSideConnection, *exec.Cmd, func()) {
	b.Helper()
	conn, cmd, stdin := startBench(b, c, bin, args...)
	return conn, cmd, func() { _ = stdin.Close(); _ = cmd.Wait() }
}

// startBench starts bin with args and initializes it as client c; the
// caller closes stdin and waits for cmd.
func startBench(b *testing.B, c *client, bin string, args ...string) (*acpsdk.ClientSideConnection, *exec.Cmd, io.WriteCloser) {
	b.Helper()
	cmd := exec.Command(bin, args...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	conn := acpsdk.NewClientSideConnection(c, stdin, stdout)
	conn.SetLogger(slog.New(slog.DiscardHandler))
	if _, err := conn.Initialize(context.Background(), acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber}); err != nil {
		b.Fatal(err)
	}
	return conn, cmd, stdin
}

// cpuTime is the CPU time the threads of process pid have used, from
// /proc/PID/task/*/schedstat (ns); 0 where there is no such file.
func cpuTime(pid int) time.Duration {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		var ns int64
		if _, err := fmt.Sscan(string(b), &ns); err == nil {
			sum += time.Duration(ns)
		}
	}
	return sum
}

// latencies times each iteration of a benchmark loop and reports their
// median as the p50-ns/op metric (ns/op is their mean).
type latencies []time.Duration

func (l *latencies) loop(b *testing.B, op func()) {
	*l = (*l)[:0]
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		op()
		*l = append(*l, time.Since(t0))
	}
	b.StopTimer()
	if len(*l) > 0 {
		slices.Sort(*l)
		b.ReportMetric(float64((*l)[len(*l)/2].Nanoseconds()), "p50-ns/op")
	}
}

// BenchmarkCall runs the same /call round trip, in the same run, four
// ways: through acpgate (prompt in; tool_call, in_progress and completed
// updates and the response out; the call written to the session log,
// whose fdatasync is group-committed in the background), the same with
// the store on tmpfs (via=acpgate-tmpfs), through internal/testsupport/minagent, the
// least ACP agent on the same SDKs (via=minagent: the floor), and as a
// direct mcp-go call to the same stdio server (via=mcp).
func BenchmarkCall(b *testing.B) {
	var lat latencies
	// acpCall runs the benchmark through an agent, and reports the CPU
	// time the agent's process (not its MCP server) used per call.
	acpCall := func(b *testing.B, bin string, args ...string) {
		conn, cmd, stop := benchACP(b, bin, args...)
		defer stop()
		ctx := context.Background()
		resp, err := conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: b.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("s")}})
		if err != nil {
			b.Fatal(err)
		}
		req := acpsdk.PromptRequest{SessionId: resp.SessionId, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(`/call mcp__s__echo {"text":"hello"}`)}}
		cpu0 := cpuTime(cmd.Process.Pid)
		lat.loop(b, func() {
			if _, err := conn.Prompt(ctx, req); err != nil {
				b.Fatal(err)
			}
		})
		if cpu := cpuTime(cmd.Process.Pid) - cpu0; cpu > 0 {
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "agent-cpu-ns/op")
		}
	}
	run := func(b *testing.B, stateDir string) {
		acpCall(b, agentBin, "--state-dir", stateDir, "--log-level", "error")
	}
	b.Run("via=acpgate", func(b *testing.B) { run(b, b.TempDir()) })
	b.Run("via=acpgate-tmpfs", func(b *testing.B) {
		dir, err := os.MkdirTemp("/dev/shm", "acpgate-bench-")
		if err != nil {
			b.Skip("no /dev/shm:", err)
		}
		defer os.RemoveAll(dir)
		run(b, dir)
	})
	b.Run("via=minagent", func(b *testing.B) {
		acpCall(b, minAgentBin)
	})
	b.Run("via=mcp", func(b *testing.B) {
		c, err := mcpgo.NewStdioMCPClient(serverBin, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		ctx := context.Background()
		init := mcp.InitializeRequest{}
		init.Params.ProtocolVersion = "2025-11-25"
		if _, err := c.Initialize(ctx, init); err != nil {
			b.Fatal(err)
		}
		req := mcp.CallToolRequest{}
		req.Params.Name = "echo"
		req.Params.Arguments = map[string]any{"text": "hello"}
		req.Params.Meta = &mcp.Meta{ProgressToken: "bench"}
		lat.loop(b, func() {
			if _, err := c.CallTool(ctx, req); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// BenchmarkSessionNewSlow opens a session with one and with 10 stdio
// servers whose initialize takes 300 ms, in the same run. session/new
// answers at once, listing them connecting (target: ≤ 50 ms); the /tools
// sent right after it waits for them and lists every server's tools
// (tools-ns/op: from session/new to the /tools answer; floor 300 ms).
func BenchmarkSessionNewSlow(b *testing.B) {
	for _, n := range []int{1, 10} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			servers := make([]acpsdk.McpServer, n)
			var tools []string
			for i := range servers {
				servers[i] = stdioServer(fmt.Sprintf("s%d", i), "-init-delay", "300ms")
				tools = append(tools, fmt.Sprintf("`mcp__s%d__echo`", i))
			}
			benchSessionNew(b, servers, tools)
		})
	}
}

// BenchmarkSandboxStart is BenchmarkSessionNewSlow's measure for one
// server that answers at once, with clientServerSandbox off and
// workspace-write: tools-ns/op, from session/new to the /tools answer
// that lists the server's tools, is what the sandbox adds to a server's
// start (the re-executed launcher, the walk around the hidden paths,
// Landlock; with network none also the seccomp filter); ns/op is
// session/new itself, which does not wait.
func BenchmarkSandboxStart(b *testing.B) {
	for _, c := range []struct{ name, policy string }{
		{"off", `"off"`},
		{"workspace-write", `"workspace-write"`},
		{"workspace-write+network-none", `{"files":"workspace-write","network":"none"}`},
	} {
		b.Run("policy="+c.name, func(b *testing.B) {
			cfg := filepath.Join(b.TempDir(), "config.json")
			if err := os.WriteFile(cfg, []byte(`{"agents":{"defaults":{"clientServerSandbox":`+c.policy+`}}}`), 0o600); err != nil {
				b.Fatal(err)
			}
			benchSessionNew(b, []acpsdk.McpServer{stdioServer("s0")}, []string{"`mcp__s0__echo`"}, "--config", cfg)
		})
	}
}

// BenchmarkSessionNewHang opens a session with one healthy server and one
// that never answers initialize (target: ≤ 50 ms); the response lists
// both connecting (or the healthy one ready).
func BenchmarkSessionNewHang(b *testing.B) {
	benchSessionNew(b, []acpsdk.McpServer{stdioServer("ok"), stdioServer("stuck", "-init-hang")}, nil)
}

// benchSessionNew times session/new with servers on one acpgate, closing
// each session (untimed). It reports the median too, and the CPU time of
// acpgate's own process per session (opening and closing it; the
// servers' CPU is not counted). With tools, a /tools follows each
// session/new and must list them; tools-ns/op is the median time from
// session/new to its answer.
func benchSessionNew(b *testing.B, servers []acpsdk.McpServer, tools []string, args ...string) {
	client := newClient()
	conn, cmd, stop := benchACPClient(b, client, agentBin, append([]string{"--state-dir", b.TempDir(), "--log-level", "error"}, args...)...)
	defer stop()
	ctx := context.Background()
	cwd := b.TempDir()
	var lat, toTools []time.Duration
	cpu0 := cpuTime(cmd.Process.Pid)
	for b.Loop() {
		t0 := time.Now()
		resp, err := conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: cwd, McpServers: servers})
		lat = append(lat, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if meta := mustJSON(resp.Meta); strings.Count(meta, `"name":`) != len(servers) {
			b.Fatalf("unexpected servers: %s", meta)
		}
		if len(tools) > 0 {
			before := len(client.all())
			if _, err := conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: resp.SessionId, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("/tools")}}); err != nil {
				b.Fatal(err)
			}
			toTools = append(toTools, time.Since(t0))
			text := agentText(client.all()[before:])
			for _, tool := range tools {
				if !strings.Contains(text, tool) {
					b.Fatalf("/tools right after session/new lacks %s: %s", tool, text)
				}
			}
		}
		if _, err := conn.CloseSession(ctx, acpsdk.CloseSessionRequest{SessionId: resp.SessionId}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns/op")
	if len(toTools) > 0 {
		slices.Sort(toTools)
		b.ReportMetric(float64(toTools[len(toTools)/2].Nanoseconds()), "tools-ns/op")
	}
	if cpu := cpuTime(cmd.Process.Pid) - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "agent-cpu-ns/op")
	}
}

// BenchmarkExitConnecting times stdin EOF to acpgate's exit with a
// session whose servers are one healthy (ready) and, with stuck=1, one
// that never answers initialize (target: ≤ 100 ms; the connect is
// cancelled, not waited for). Every server process must be gone when
// acpgate has exited.
func BenchmarkExitConnecting(b *testing.B) {
	for _, stuck := range []bool{false, true} {
		b.Run(fmt.Sprintf("stuck=%v", stuck), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				rec := filepath.Join(b.TempDir(), "record")
				servers := []acpsdk.McpServer{stdioServer("ok", "-record", rec)}
				if stuck {
					servers = append(servers, stdioServer("stuck", "-init-hang", "-record", rec))
				}
				client := newClient()
				conn, cmd, stdin := startBench(b, client, agentBin, "--state-dir", b.TempDir(), "--log-level", "error")
				_, err := conn.NewSession(context.Background(), acpsdk.NewSessionRequest{Cwd: b.TempDir(), McpServers: servers})
				if err != nil {
					b.Fatal(err)
				}
				client.waitUpdate(b, "ok ready", func(u acpsdk.SessionUpdate) bool {
					return u.SessionInfoUpdate != nil && serverStates(b, u.SessionInfoUpdate.Meta)["ok"] == "ready"
				})
				b.StartTimer()
				_ = stdin.Close()
				_ = cmd.Wait()
				b.StopTimer()
				record, _ := os.ReadFile(rec)
				for _, pid := range pids(string(record)) {
					if testbin.Alive(pid) {
						b.Fatalf("server %d outlived acpgate", pid)
					}
				}
				b.StartTimer()
			}
		})
	}
}

// BenchmarkStartToInitialize measures process start to the initialize
// response, in the same run, for acpgate (its usual start: watchdog,
// store, configuration) and internal/testsupport/minagent, the least ACP agent on the same SDKs
// (via=minagent: the floor; target: acpgate ≤ 1.2 × the floor).
func BenchmarkStartToInitialize(b *testing.B) {
	start := func(b *testing.B, bin string, args ...string) {
		for b.Loop() {
			_, _, stop := benchACP(b, bin, args...) // exec + initialize
			b.StopTimer()
			stop()
			b.StartTimer()
		}
	}
	b.Run("via=acpgate", func(b *testing.B) {
		dir := b.TempDir()
		start(b, agentBin, "--state-dir", dir, "--log-level", "error")
	})
	b.Run("via=minagent", func(b *testing.B) { start(b, minAgentBin) })
}
