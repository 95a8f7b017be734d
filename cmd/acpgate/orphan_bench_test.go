package main_test

import (
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// BenchmarkKilledAgentCleanup measures the time from SIGKILL of acpgate
// (no teardown runs) until its server — one that ignores stdin EOF and
// SIGTERM — and the server's setsid grandchild are gone: the watchdog's
// and the parent-death signal's work.
//
//	go test -run '^$' -bench KilledAgentCleanup -benchtime 10x ./cmd/acpgate/
func BenchmarkKilledAgentCleanup(b *testing.B) {
	b.StopTimer()
	for range b.N {
		a := startAgent(b, b.TempDir())
		_, procs := openStubborn(b, a, "s")
		pids := procs()
		b.StartTimer()
		_ = a.cmd.Process.Kill()
		for _, pid := range pids {
			for testbin.Alive(pid) {
				time.Sleep(100 * time.Microsecond)
			}
		}
		b.StopTimer()
		<-a.exited
	}
}
