package mcpclient_test

import (
	"syscall"
	"testing"
	"time"
)

func syscallGetpgid(pid int) (int, error) { return syscall.Getpgid(pid) }

// reportServerCPU reports the CPU time (user + system) the servers a
// benchmark started and stopped used per operation, from this process's
// reaped children: on a machine with few cores, what N servers need to
// start bounds how fast N can be ready, whatever the client does.
// It reports the client's own CPU time (this process) too.
func reportServerCPU(b *testing.B) func() {
	servers, client := cpuOf(syscall.RUSAGE_CHILDREN), cpuOf(syscall.RUSAGE_SELF)
	return func() {
		per := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(b.N) }
		b.ReportMetric(per(cpuOf(syscall.RUSAGE_CHILDREN)-servers), "server-cpu-ms/op")
		b.ReportMetric(per(cpuOf(syscall.RUSAGE_SELF)-client), "client-cpu-ms/op")
	}
}

// cpuOf is the CPU time used so far by who (RUSAGE_SELF, or
// RUSAGE_CHILDREN: this process's reaped children).
func cpuOf(who int) time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(who, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
