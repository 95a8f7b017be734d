package main_test

import (
	"bufio"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpgate/acpgate/acp/config"
	"github.com/acpgate/acpgate/testdata/fakellm"
	"github.com/acpgate/acpgate/testdata/testbin"
)

// TestSetupInteractive: in a terminal (a pseudo-terminal), setup lists the
// providers, asks for the URL, the key without echo and the model from
// the endpoint's list; the key never shows on the terminal.
func TestSetupInteractive(t *testing.T) {
	t.Parallel()
	master, slave, err := testbin.OpenPTY()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer master.Close()
	llm := fakellm.Start()
	defer llm.Close()
	llm.SetModels("first-model", "second-model")
	cfgPath := filepath.Join(t.TempDir(), "acpgate", "config.json")
	cmd := exec.Command(agentBin, "setup", "--config", cfgPath)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = slave.Close() // the child has it; EOF on master when it exits
	screen := &testbin.SyncBuffer{}
	shown := make(chan struct{}, 1)
	go func() {
		r := bufio.NewReader(master)
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			_, _ = screen.Write(buf[:n])
			select {
			case shown <- struct{}{}:
			default:
			}
			if err != nil {
				close(shown)
				return
			}
		}
	}()
	// waitFor waits until the screen shows s, then types answer.
	waitFor := func(s, answer string) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for !strings.Contains(screen.String(), s) {
			select {
			case _, ok := <-shown:
				if !ok && !strings.Contains(screen.String(), s) {
					t.Fatalf("setup ended before showing %q:\n%s", s, screen.String())
				}
			case <-deadline:
				t.Fatalf("the screen never showed %q:\n%s", s, screen.String())
			}
		}
		if _, err := io.WriteString(master, answer+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	waitFor("6) Another OpenAI-compatible endpoint", "6")
	waitFor("Base URL of the endpoint", llm.URL)
	waitFor("API key (Enter for none): ", setupKey)
	waitFor("Model [number or name, Enter: first-model]: ", "2")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("setup: %v\n%s", err, screen.String())
	}
	for range shown {
	}
	if strings.Contains(screen.String(), setupKey) {
		t.Errorf("the key was shown:\n%s", screen.String())
	}
	c, _, err := config.Load(cfgPath, true)
	if err != nil || c.Model.Model != "second-model" || c.Model.BaseURL != llm.URL || !strings.HasSuffix(c.Model.APIKey, "keys/custom.key") {
		t.Errorf("loaded %+v, %v\n%s", c.Model, err, screen.String())
	}
}
