package bridge_test

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"

	"github.com/acpgate/acpgate/testdata/testbin"
)

// BenchmarkExecuteLargeResult runs a bridged tool whose result is one
// 15 MiB text (stdio test server) through the bridge's conversion and
// reports B/op, the peak heap growth and the peak RSS during the call:
//
//	go test -run '^$' -bench ExecuteLargeResult -benchtime 10x ./bridge/
func BenchmarkExecuteLargeResult(b *testing.B) {
	const size = 15 << 20
	tool, ok := session(b).Current().Lookup("mcp__srv__big")
	if !ok {
		b.Fatal("no tool mcp__srv__big")
	}
	args, _ := json.Marshal(map[string]any{"bytes": size})
	ctx := context.Background()
	if _, err := tool.Execute(ctx, args, nil); err != nil { // warm up
		b.Fatal(err)
	}
	var peakHeap, peakRSS uint64
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		p := testbin.StartMemPeak()
		b.StartTimer()
		res, err := tool.Execute(ctx, args, nil)
		b.StopTimer()
		heap, rss := p.Stop()
		b.StartTimer()
		if err != nil || res.IsError {
			b.Fatal(err, res.ForModel)
		}
		runtime.KeepAlive(res)
		peakHeap, peakRSS = max(peakHeap, heap), max(peakRSS, rss)
	}
	b.ReportMetric(float64(peakHeap)/1e6, "peak-heap-MB")
	b.ReportMetric(float64(peakHeap)/size, "peak-heap-x")
	b.ReportMetric(float64(peakRSS)/1e6, "peak-RSS-MB")
}
