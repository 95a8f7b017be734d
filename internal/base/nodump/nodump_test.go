package nodump_test

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/acpgate/acpgate/internal/base/nodump"
)

// childEnv marks the test binary run as the process TestProtect protects:
// the attribute lasts for the process, so each run needs a fresh one.
const childEnv = "NODUMP_TEST_CHILD"

// TestProtect: after Protect a fresh process is undumpable on Linux (the
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
	if os.Getenv(childEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestProtect$", "-test.count", "1")
		cmd.Env = append(os.Environ(), childEnv+"=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the protected process: %v\n%s", err, out)
		}
		return
	}
	if nodump.Protected() {
		t.Fatal("a fresh process is undumpable before Protect: the test proves nothing")
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
