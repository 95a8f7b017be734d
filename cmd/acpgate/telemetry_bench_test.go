package main_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// BenchmarkCallTelemetry is BenchmarkCall's /call round trip through
// acpgate (the store on tmpfs where there is one, so that the disk does
// not drown the difference), each prompt carrying an editor's
// traceparent, with telemetry off (the context is still passed on to the
// server), on with a collector that accepts everything (an OTLP/HTTP sink
// on 127.0.0.1: what acpgate pays is the same whoever receives), and on
// with a collector that cannot be reached (every export refused).
func BenchmarkCallTelemetry(b *testing.B) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer sink.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close()
	var lat latencies
	run := func(b *testing.B, endpoint string) {
		if endpoint != "" {
			b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
			b.Setenv("OTEL_METRIC_EXPORT_INTERVAL", "1000")
		}
		dir, err := os.MkdirTemp("/dev/shm", "acpgate-bench-")
		if err != nil {
			dir = b.TempDir()
		} else {
			defer os.RemoveAll(dir)
		}
		conn, cmd, stop := benchACP(b, agentBin, "--state-dir", dir, "--log-level", "error")
		defer stop()
		ctx := context.Background()
		resp, err := conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: b.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("s")}})
		if err != nil {
			b.Fatal(err)
		}
		req := acpsdk.PromptRequest{SessionId: resp.SessionId, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(`/call mcp__s__echo {"text":"hello"}`)},
			Meta: map[string]any{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}
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
	b.Run("telemetry=off", func(b *testing.B) { run(b, "") })
	b.Run("telemetry=on", func(b *testing.B) { run(b, sink.URL) })
	b.Run("telemetry=dead-collector", func(b *testing.B) { run(b, dead) })
}
