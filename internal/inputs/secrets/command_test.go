//go:build unix

package secrets_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/inputs/secrets"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// TestRunCommandLimitOutput: output up to the limit is returned whole;
// over it, the command's whole process group is killed at once (a
// command that would print forever ends) and the error names the command
// and the limit, holding none of the output.
func TestRunCommandLimitOutput(t *testing.T) {
	t.Parallel()
	out, err := secrets.RunCommandLimit(context.Background(), 5, "printf", "12345")
	if err != nil || string(out) != "12345" {
		t.Fatalf("at the limit: %q, %v", out, err)
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	// A child of the shell in its group sleeps (off the output pipe, so
	// that only the group's kill ends it); the shell, once the child has
	// written its pid, prints forever.
	script := `sh -c 'echo $$ > PID; exec sleep 600' >/dev/null & while [ ! -s PID ]; do :; done; exec yes secret-line`
	_, err = secrets.RunCommandLimit(context.Background(), 4096, "sh", "-c", strings.ReplaceAll(script, "PID", pidFile))
	if !errors.Is(err, secrets.ErrOutputLimit) {
		t.Fatalf("over the limit: %v, want ErrOutputLimit", err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "sh: ") || !strings.Contains(msg, "(4096 bytes)") || strings.Contains(msg, "secret-line") || strings.Contains(msg, "y\n") {
		t.Errorf("error %q, want it to name sh and the limit and hold no output", msg)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	// The background child was killed with its group: it dies (a zombie
	// until reaped, or gone).
	testbin.WaitFor(t, "the command's child to die", func() bool {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		f := strings.Fields(string(st))
		return err != nil || (len(f) > 2 && f[2] == "Z")
	})
}

// TestRunCommandLimitTimeout: a command that hangs is killed at its own
// deadline, three quarters of what remains of the caller's (when sooner
// than CommandTimeout), and the error names the command and the time it
// was given, before the caller's deadline.
func TestRunCommandLimitTimeout(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err := secrets.RunCommandLimit(ctx, 1024, "sh", "-c", "sleep 600 & exec sleep 600")
	took := time.Since(start)
	t.Logf("a hanging command failed after %s", took)
	if !errors.Is(err, secrets.ErrCommandTimeout) {
		t.Fatalf("hanging: %v, want ErrCommandTimeout", err)
	}
	if ctx.Err() != nil {
		t.Errorf("the caller's deadline passed first (%s)", took)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "sh: timed out after 1.") {
		t.Errorf("error %q, want it to name sh and about 1.5 s", msg)
	}
	// Without a deadline of the caller's, the command still has one.
	ctx, cancel = context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if _, err := secrets.RunCommandLimit(ctx, 10, "true"); err != nil {
		t.Fatal(err)
	}
}
