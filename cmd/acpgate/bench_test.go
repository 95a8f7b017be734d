package main_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"testing"

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
	cmd := exec.Command(agentBin, "--state-dir", stateDir, "--log-level", "error")
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

// BenchmarkCall compares a /call round trip through acpgate (prompt in,
// tool_call updates and response out, the call fdatasynced to the session
// log) with a direct MCP call to the same stdio server. via=acpgate-tmpfs
// keeps the session store in /dev/shm, where fdatasync costs nothing, to
// show acpgate's own overhead apart from the disk.
func BenchmarkCall(b *testing.B) {
	run := func(b *testing.B, stateDir string) {
		conn, stop := benchAgentIn(b, stateDir)
		defer stop()
		ctx := context.Background()
		resp, err := conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: b.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("s")}})
		if err != nil {
			b.Fatal(err)
		}
		req := acpsdk.PromptRequest{SessionId: resp.SessionId, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(`/call mcp__s__echo {"text":"hello"}`)}}
		b.ResetTimer()
		for b.Loop() {
			if _, err := conn.Prompt(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
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
		b.ResetTimer()
		for b.Loop() {
			if _, err := c.CallTool(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
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
