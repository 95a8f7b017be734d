package mcpclient_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/mcpclient"
)

// countingWriter counts the bytes written through it to w.
type countingWriter struct {
	w io.Writer
	n atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	return c.w.Write(p)
}

// cpuTime is the CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCallDuringFlood measures an echo call to one server while
// another server of the same Manager floods stderr, its stdout or log
// notifications without pause, and reports the log bytes written (a text
// log in a file) and the CPU this process used per second of the flood:
//
//	go test -run '^$' -bench CallDuringFlood -benchtime 3s ./mcpclient/
func BenchmarkCallDuringFlood(b *testing.B) {
	for _, kind := range []string{"none", "stderr", "stdout", "notify"} {
		b.Run("flood="+kind, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "log"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			logBytes := &countingWriter{w: f}
			opts := &mcpclient.Options{Logger: slog.New(slog.NewTextHandler(logBytes, nil))}
			m, err := mcpclient.New([]mcpclient.ServerSpec{
				{Name: "flood", Command: serverBin, CallsPerMinute: mcpclient.Unlimited},
				{Name: "calm", Command: serverBin, CallsPerMinute: mcpclient.Unlimited},
			}, opts)
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close(context.Background())
			if err := m.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			ctx, stop := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			if kind != "none" {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for ctx.Err() == nil {
						_, _ = m.CallTool(ctx, "flood", "flood", map[string]any{"kind": kind, "lines": 20000})
					}
				}()
				testbin.WaitFor(b, "the flood", func() bool { return logBytes.n.Load() > 0 })
			}
			args := map[string]any{"text": "hello"}
			startLog, startCPU, start := logBytes.n.Load(), cpuTime(), time.Now()
			for b.Loop() {
				if _, err := m.CallTool(context.Background(), "calm", "echo", args); err != nil {
					b.Fatal(err)
				}
			}
			wall := time.Since(start).Seconds()
			b.ReportMetric(float64(logBytes.n.Load()-startLog)/wall/1e6, "log-MB/s")
			b.ReportMetric((cpuTime()-startCPU).Seconds()/wall, "cpu-cores")
			stop()
			wg.Wait()
		})
	}
}
