package main_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	mcpgo "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// benchAgent starts acpgate for a benchmark.
func benchAgent(b *testing.B) (*acpsdk.ClientSideConnection, func()) {
	return benchAgentIn(b, b.TempDir())
}

func benchAgentIn(b *testing.B, stateDir string) (*acpsdk.ClientSideConnection, func()) {
	b.Helper()
	return benchACP(b, agentBin, "--state-dir", stateDir, "--log-level", "error")
}

// benchACP starts an ACP agent (acpgate or the minimal agent) and
// initializes it.
func benchACP(b *testing.B, bin string, args ...string) (*acpsdk.ClientSideConnection, func()) {
	b.Helper()
	cmd := exec.Command(bin, args...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	conn := acpsdk.NewClientSideConnection(newClient(), stdin, stdout)
	conn.SetLogger(slog.New(slog.DiscardHandler))
	if _, err := conn.Initialize(context.Background(), acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber}); err != nil {
		b.Fatal(err)
	}
	return conn, func() { _ = stdin.Close(); _ = cmd.Wait() }
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
// the store on tmpfs (via=acpgate-tmpfs), through testdata/minagent, the
// least ACP agent on the same SDKs (via=minagent: the floor), and as a
// direct mcp-go call to the same stdio server (via=mcp).
func BenchmarkCall(b *testing.B) {
	var lat latencies
	acpCall := func(b *testing.B, conn *acpsdk.ClientSideConnection) {
		ctx := context.Background()
		resp, err := conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: b.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("s")}})
		if err != nil {
			b.Fatal(err)
		}
		req := acpsdk.PromptRequest{SessionId: resp.SessionId, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(`/call mcp__s__echo {"text":"hello"}`)}}
		lat.loop(b, func() {
			if _, err := conn.Prompt(ctx, req); err != nil {
				b.Fatal(err)
			}
		})
	}
	run := func(b *testing.B, stateDir string) {
		conn, stop := benchAgentIn(b, stateDir)
		defer stop()
		acpCall(b, conn)
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
		conn, stop := benchACP(b, minAgentBin)
		defer stop()
		acpCall(b, conn)
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

// BenchmarkSessionNew10Slow opens a session with 10 stdio servers whose
// initialize takes 300 ms (target: 1.2 × 300 ms).
func BenchmarkSessionNew10Slow(b *testing.B) {
	conn, stop := benchAgent(b)
	defer stop()
	ctx := context.Background()
	servers := make([]acpsdk.McpServer, 10)
	for i := range servers {
		servers[i] = stdioServer(fmt.Sprintf("s%d", i), "-init-delay", "300ms")
	}
	cwd := b.TempDir()
	for b.Loop() {
		resp, err := conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: cwd, McpServers: servers})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if meta := mustJSON(resp.Meta); containsFields(meta, `"state":"connecting"`) {
			b.Fatalf("not all ready: %s", meta)
		}
		if _, err := conn.CloseSession(ctx, acpsdk.CloseSessionRequest{SessionId: resp.SessionId}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkStartToInitialize measures process start to the initialize
// response (target: 20 ms).
func BenchmarkStartToInitialize(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		_, stop := benchAgentIn(b, dir) // exec + initialize
		b.StopTimer()
		stop()
		b.StartTimer()
	}
}
