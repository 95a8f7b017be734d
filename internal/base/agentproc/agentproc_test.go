package agentproc_test

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/acpgate/acpgate/internal/base/agentproc"
)

// TestMain makes the test binary a tiny "agent" when asked: it copies its
// stdin to its stdout and exits with status 3 at EOF.
func TestMain(m *testing.M) {
	if os.Getenv("AGENTPROC_ECHO") == "1" {
		_, _ = io.Copy(os.Stdout, os.Stdin)
		os.Exit(3)
	}
	os.Exit(m.Run())
}

// TestLastBytesSurviveExit: what the agent wrote before it exited is still
// read after Exited is closed, and the exit status is kept.
func TestLastBytesSurviveExit(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "AGENTPROC_ECHO=1")
	p, err := agentproc.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(p.Stdin, "last words\n"); err != nil {
		t.Fatal(err)
	}
	p.Stdin.Close()
	<-p.Exited()
	b, err := io.ReadAll(p.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "last words\n" {
		t.Errorf("stdout after exit = %q", b)
	}
	var exit *exec.ExitError
	if !errors.As(p.Err(), &exit) || exit.ExitCode() != 3 {
		t.Errorf("Err() = %v, want exit status 3", p.Err())
	}
	if p.Pid() <= 0 {
		t.Errorf("Pid() = %d", p.Pid())
	}
}

func TestStartFailureNamesTheCommand(t *testing.T) {
	_, err := agentproc.Start(exec.Command("/nonexistent/agent"))
	var pathErr *os.PathError
	if !errors.As(err, &pathErr) {
		t.Fatalf("err = %v, want an *os.PathError inside", err)
	}
}
