package testbin

import (
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// HeapLive is the bytes of live and not yet swept heap objects
// (runtime/metrics /memory/classes/heap/objects:bytes).
func HeapLive() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// MemPeak measures the peak heap and peak RSS of the process while a piece
// of code runs: StartMemPeak collects garbage, resets the kernel's peak RSS
// (Linux clear_refs) and samples HeapLive every 100µs until Stop.
type MemPeak struct {
	base uint64
	mu   sync.Mutex
	peak uint64
	stop chan struct{}
	wg   sync.WaitGroup
}

// StartMemPeak starts a measurement.
func StartMemPeak() *MemPeak {
	runtime.GC()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	p := &MemPeak{base: HeapLive(), stop: make(chan struct{})}
	p.peak = p.base
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(100 * time.Microsecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.sample()
			}
		}
	}()
	return p
}

func (p *MemPeak) sample() {
	h := HeapLive()
	p.mu.Lock()
	p.peak = max(p.peak, h)
	p.mu.Unlock()
}

// Stop ends the measurement and returns the peak heap growth over the
// start and the peak RSS (VmHWM; 0 where /proc is unavailable), in bytes.
func (p *MemPeak) Stop() (heap, rss uint64) {
	close(p.stop)
	p.wg.Wait()
	p.sample()
	return p.peak - p.base, vmHWM()
}

func vmHWM() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// Allocated returns the bytes the whole process allocated on the heap
// while fn ran (runtime/metrics /gc/heap/allocs:bytes): a measure of
// copies that does not depend on when the collector runs.
func Allocated(fn func()) uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	before := s[0].Value.Uint64()
	fn()
	metrics.Read(s)
	return s[0].Value.Uint64() - before
}

// BenchPeak runs call b.N times (after one warm-up call) and reports, besides
// the usual figures, the peak heap growth and the peak RSS during a call, in
// MB and (heap) as a multiple of size, the result's size in bytes. call's
// result is kept alive until the peak is taken.
func BenchPeak(b *testing.B, size int, call func() (any, error)) {
	b.Helper()
	if _, err := call(); err != nil { // warm up
		b.Fatal(err)
	}
	var peakHeap, peakRSS uint64
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		p := StartMemPeak()
		b.StartTimer()
		res, err := call()
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
	b.ReportMetric(float64(peakHeap)/float64(size), "peak-heap-x")
	b.ReportMetric(float64(peakRSS)/1e6, "peak-RSS-MB")
}
