package nodump_test

import (
	"errors"
	"runtime"
	"testing"

	"github.com/acpgate/acpgate/internal/nodump"
)

// TestProtect: after Protect the process is undumpable on Linux (the
// attribute the kernel checks before it shows /proc/<pid>/environ to
// another process), and a second call is harmless; elsewhere it says it
// is unsupported.
func TestProtect(t *testing.T) {
	if runtime.GOOS != "linux" {
		if err := nodump.Protect(); !errors.Is(err, nodump.ErrUnsupported) {
			t.Fatalf("Protect on %s: %v, want ErrUnsupported", runtime.GOOS, err)
		}
		return
	}
	if nodump.Protected() {
		t.Fatal("the test process is undumpable before Protect: the test proves nothing")
	}
	for range 2 {
		if err := nodump.Protect(); err != nil {
			t.Fatal(err)
		}
		if !nodump.Protected() {
			t.Fatal("still dumpable after Protect")
		}
	}
}
