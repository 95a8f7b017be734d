package mcpclient_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/acpgate/acpgate/mcpclient"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// BenchmarkCallTool compares a CallTool round trip over stdio through the
// Manager with a bare mcp-go client talking to the same server.
func BenchmarkCallTool(b *testing.B) {
	args := map[string]any{"text": "hello"}
	b.Run("via=manager", func(b *testing.B) {
		m, err := mcpclient.New([]mcpclient.ServerSpec{{Name: "s", Command: serverBin, CallsPerMinute: mcpclient.Unlimited}}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer m.Close(context.Background())
		if err := m.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		b.ResetTimer()
		for b.Loop() {
			if _, err := m.CallTool(ctx, "s", "echo", args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("via=mcp-go", func(b *testing.B) {
		c, err := client.NewStdioMCPClient(serverBin, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		ctx := context.Background()
		init := mcp.InitializeRequest{}
		init.Params.ProtocolVersion = mcpclient.ProtocolVersion
		if _, err := c.Initialize(ctx, init); err != nil {
			b.Fatal(err)
		}
		req := mcp.CallToolRequest{}
		req.Params.Name = "echo"
		req.Params.Arguments = args
		// The same request on the wire as the Manager's (which always asks
		// for progress, to extend deadlines), so only client work differs.
		req.Params.Meta = &mcp.Meta{ProgressToken: "bench-1"}
		b.ResetTimer()
		for b.Loop() {
			if _, err := c.CallTool(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func tenServers(args ...string) []mcpclient.ServerSpec {
	specs := make([]mcpclient.ServerSpec, 10)
	for i := range specs {
		specs[i] = mcpclient.ServerSpec{Name: fmt.Sprintf("s%d", i), Command: serverBin, Args: args}
	}
	return specs
}

// BenchmarkStart10Slow starts 10 stdio servers whose initialize takes
// 300 ms each (target: at most 1.2 × 300 ms).
func BenchmarkStart10Slow(b *testing.B) {
	defer reportServerCPU(b)()
	for b.Loop() {
		m, err := mcpclient.New(tenServers("-init-delay", "300ms"), nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		for _, st := range m.Statuses() {
			if st.State != mcpclient.StateReady {
				b.Fatalf("%+v", st)
			}
		}
		_ = m.Close(context.Background())
		b.StartTimer()
	}
}

// BenchmarkClose10 closes 10 stdio servers that exit on stdin EOF (target:
// at most 100 ms).
func BenchmarkClose10(b *testing.B) { close10(b) }

// close10 measures Close of ten ready servers.
func close10(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		m, err := mcpclient.New(tenServers(), nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := m.Close(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
