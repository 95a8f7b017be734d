package mcpclient_test

import (
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkClose10Subreaper is BenchmarkClose10 in a child subreaper, as
// acpgate runs on Linux: the common case is then told apart without a scan
// of every process (see tree.quicklyGone).
func BenchmarkClose10Subreaper(b *testing.B) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		b.Skip("no child subreaper:", err)
	}
	defer func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) }()
	close10(b)
}
