package mcpclient_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/acpgate/acpgate/mcpclient"
	"github.com/acpgate/acpgate/testdata/testbin"
)

// BenchmarkCallToolLarge calls a tool whose result is one 15 MiB text
// over stdio and reports, besides B/op, the peak heap growth and the peak
// RSS during the call, in MB and as a multiple of the result's size:
//
//	go test -run '^$' -bench CallToolLarge -benchtime 10x ./mcpclient/
func BenchmarkCallToolLarge(b *testing.B) {
	const size = 15 << 20
	m, err := mcpclient.New([]mcpclient.ServerSpec{{Name: "s", Command: serverBin, CallsPerMinute: mcpclient.Unlimited}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close(context.Background())
	if err := m.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	args := map[string]any{"bytes": size}
	if _, err := m.CallTool(ctx, "s", "big", args); err != nil { // warm up
		b.Fatal(err)
	}
	var peakHeap, peakRSS uint64
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		p := testbin.StartMemPeak()
		b.StartTimer()
		res, err := m.CallTool(ctx, "s", "big", args)
		b.StopTimer()
		heap, rss := p.Stop()
		b.StartTimer()
		if err != nil {
			b.Fatal(err)
		}
		runtime.KeepAlive(res)
		peakHeap, peakRSS = max(peakHeap, heap), max(peakRSS, rss)
	}
	b.ReportMetric(float64(peakHeap)/1e6, "peak-heap-MB")
	b.ReportMetric(float64(peakHeap)/size, "peak-heap-x")
	b.ReportMetric(float64(peakRSS)/1e6, "peak-RSS-MB")
}
