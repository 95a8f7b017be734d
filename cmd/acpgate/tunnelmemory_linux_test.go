//go:build linux

package main_test

import (
	"encoding/json"
	"io"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/mcptunnel"
)

// tunnelResult is the size of the MCP-over-ACP answer the memory test
// asks for: 9 MiB, under the 10 MiB a client's message may have.
const tunnelResult = 9 << 20

// startBigTunnelAgent starts acpgate with one session whose server
// "tools" lives in the client (MCP over ACP), warmed up with a small
// result.
func startBigTunnelAgent(t testing.TB) *bigAgent {
	t.Helper()
	g := &bigUpdates{sizes: map[acpsdk.SessionId][]int{}}
	var tc *mcptunnel.Client
	a := startAgentWith(t, t.TempDir(), agentSetup{bin: plainAgentBin(t), stdout: g.filter, pipes: func(in io.Writer, out io.Reader) (io.Writer, io.Reader) {
		tc = mcptunnel.NewClient(in)
		return tc.Input(), tc.Output(out)
	}}, "--log-level", "info")
	tc.Serve("srv-big", mcptunnel.NewServer("client-tools"))
	a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
	raw, err := tc.Call(ctx30(t), acpsdk.AgentMethodSessionNew, map[string]any{"cwd": t.TempDir(),
		"mcpServers": []any{map[string]any{"type": "acp", "name": "tools", "serverId": "srv-big"}}})
	if err != nil {
		t.Fatal(err)
	}
	var resp acpsdk.NewSessionResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatal(err)
	}
	a.serversUntil(t, resp, "the acp server ready", func(st map[string]string) bool { return st["tools"] == "ready" })
	b := &bigAgent{agent: a, big: g, sessions: []acpsdk.SessionId{resp.SessionId}, tool: "mcp__tools__big", arg: "size"}
	if err := b.call(ctx30(t), resp.SessionId, 1000); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTunnelResultMemoryThroughTheBinary: one 9 MiB result of a server
// reached over MCP over ACP (the client's mcp/message answer, its decoding,
// the bridge, the update to the editor) raises acpgate's peak RSS by at
// most 3× the result, as results of the other transports do (issue 34).
func TestTunnelResultMemoryThroughTheBinary(t *testing.T) {
	growth := startBigTunnelAgent(t).peakGrowth(t, tunnelResult)
	t.Logf("VmHWM growth for one %d-byte MCP-over-ACP result: %.1f MB (%.2f×)", tunnelResult, float64(growth)/1e6, float64(growth)/tunnelResult)
	if limit := uint64(3 * tunnelResult); growth > limit {
		t.Errorf("one %d-byte MCP-over-ACP result raised acpgate's VmHWM by %d bytes (%.2f×), over 3× (%d)", tunnelResult, growth, float64(growth)/tunnelResult, limit)
	}
}

// BenchmarkTunnelResultMemory reports how much one 9 MiB MCP-over-ACP
// result raises acpgate's peak RSS (VmHWM-growth-MB, the largest over the
// iterations, and x-result, that over the result's size).
func BenchmarkTunnelResultMemory(b *testing.B) {
	a := startBigTunnelAgent(b)
	var peak uint64
	for b.Loop() {
		peak = max(peak, a.peakGrowth(b, tunnelResult))
	}
	b.ReportMetric(float64(peak)/1e6, "VmHWM-growth-MB")
	b.ReportMetric(float64(peak)/tunnelResult, "x-result")
}
