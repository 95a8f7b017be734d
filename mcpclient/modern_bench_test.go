package mcpclient_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/acpgate/acpgate/mcpclient"
)

// BenchmarkStartProtocol starts 1 and 10 stdio servers that take 300 ms to
// start (-start-delay: nothing is read before), for each
// revision the server speaks; target: 10 servers ≤ 1.2 × one server, with
// no probe timeout paid by servers that refuse 2026-07-28. ignoring: one
// server that never answers unknown methods (no delay), which mcp-go's own
// probe would hold for 5 s.
func BenchmarkStartProtocol(b *testing.B) {
	for _, proto := range []string{"2025-11-25", "2026-07-28"} {
		for _, n := range []int{1, 10} {
			b.Run(fmt.Sprintf("protocol=%s/servers=%d", proto, n), func(b *testing.B) {
				specs := tenServers("-protocol", proto, "-start-delay", "300ms")[:n]
				benchStart(b, specs, proto)
			})
		}
	}
	b.Run("protocol=ignoring/servers=1", func(b *testing.B) {
		benchStart(b, []mcpclient.ServerSpec{{
			Name: "old", Command: os.Args[0], Env: map[string]string{"MCPCLIENT_TEST_OLD_SERVER": "1", "OLD_SERVER_IGNORE_UNKNOWN": "1"},
		}}, "2024-11-05")
	})
}

// BenchmarkStartReady is BenchmarkStartProtocol with servers that are
// ready 300 ms after the client starts them (-ready-at), their own
// start-up work (runtime, building the server: ~45 ms of CPU each)
// included, as a server whose start is mostly waiting (npx, a network
// fetch) is. On 2 cores ten such starts fit in the 300 ms, so the ratio is
// the client's own cost of ten servers; target 10 ≤ 1.2 × 1.
func BenchmarkStartReady(b *testing.B) {
	for _, proto := range []string{"2025-11-25", "2026-07-28"} {
		for _, n := range []int{1, 10} {
			b.Run(fmt.Sprintf("protocol=%s/servers=%d", proto, n), func(b *testing.B) {
				benchStartWith(b, func() []mcpclient.ServerSpec {
					at := strconv.FormatInt(time.Now().Add(300*time.Millisecond).UnixNano(), 10)
					return tenServers("-protocol", proto, "-ready-at", at)[:n]
				}, proto)
			})
		}
	}
}

// benchStart measures Start of specs; every server must be ready on proto.
func benchStart(b *testing.B, specs []mcpclient.ServerSpec, proto string) {
	benchStartWith(b, func() []mcpclient.ServerSpec { return specs }, proto)
}

// benchStartWith measures Start of the specs made for each round; every
// server must be ready on proto.
func benchStartWith(b *testing.B, specs func() []mcpclient.ServerSpec, proto string) {
	defer reportServerCPU(b)()
	for b.Loop() {
		m, err := mcpclient.New(specs(), nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		for _, st := range m.Statuses() {
			if st.State != mcpclient.StateReady || st.ProtocolVersion != proto {
				b.Fatalf("%+v", st)
			}
		}
		_ = m.Close(context.Background())
		b.StartTimer()
	}
}

// BenchmarkStartHTTP connects to a running streamable HTTP test server per
// revision it speaks: 2025-11-25 (the server/discover probe is refused,
// then initialize, initialized and the GET stream), 2026-07-28
// (server/discover only), and both (2026-07-28 is used). The difference
// between the first two is what the probe costs a legacy server.
func BenchmarkStartHTTP(b *testing.B) {
	for _, proto := range []string{"2025-11-25", "2026-07-28", "both"} {
		b.Run("protocol="+proto, func(b *testing.B) {
			want := proto
			if proto == "both" {
				want = "2026-07-28"
			}
			url := netServer(b, "http", "-protocol", proto)
			benchStart(b, []mcpclient.ServerSpec{{Name: "s", Transport: mcpclient.TransportHTTP, URL: url}}, want)
		})
	}
}
