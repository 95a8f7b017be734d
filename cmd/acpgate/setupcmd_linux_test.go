package main_test

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// terminal is `acpgate setup` running on a pseudo-terminal, the test
// being the person at its keyboard.
type terminal struct {
	t      *testing.T
	master *os.File
	cmd    *exec.Cmd
	screen *testbin.SyncBuffer // everything the terminal showed
	shown  chan struct{}       // a signal after each read; closed at the end
}

// startTerminal runs `acpgate setup args...` as the session leader of a
// new pseudo-terminal, its controlling terminal.
func startTerminal(t *testing.T, args ...string) *terminal {
	t.Helper()
	master, slave, err := testbin.OpenPTY()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { _ = master.Close() })
	cmd := exec.Command(agentBin, append([]string{"setup"}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = slave.Close() // the child has it: reading master ends when it exits
	tm := &terminal{t: t, master: master, cmd: cmd, screen: &testbin.SyncBuffer{}, shown: make(chan struct{}, 1)}
	go func() {
		defer close(tm.shown)
		r := bufio.NewReader(master)
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			_, _ = tm.screen.Write(buf[:n])
			select {
			case tm.shown <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	return tm
}

// answer waits until the screen shows question, then types keys.
func (tm *terminal) answer(question, keys string) {
	tm.t.Helper()
	deadline := time.After(30 * time.Second)
	for !strings.Contains(tm.screen.String(), question) {
		select {
		case _, ok := <-tm.shown:
			if !ok && !strings.Contains(tm.screen.String(), question) {
				tm.t.Fatalf("setup ended before showing %q:\n%s", question, tm.screen.String())
			}
		case <-deadline:
			tm.t.Fatalf("the screen never showed %q:\n%s", question, tm.screen.String())
		}
	}
	if _, err := io.WriteString(tm.master, keys); err != nil {
		tm.t.Fatal(err)
	}
}

// wait waits for setup to exit and for the screen to be complete.
func (tm *terminal) wait() error {
	err := tm.cmd.Wait()
	for range tm.shown {
	}
	return err
}

// TestSetupInteractive: in a terminal (a pseudo-terminal), setup lists the
// providers, asks for the URL, the key without echo and the model from
// the endpoint's list; the key never shows on the terminal.
func TestSetupInteractive(t *testing.T) {
	t.Parallel()
	llm := fakellm.Start()
	defer llm.Close()
	llm.SetModels("first-model", "second-model")
	cfgPath := filepath.Join(t.TempDir(), "acpgate", "config.json")
	tm := startTerminal(t, "--config", cfgPath)
	tm.answer("7) Another OpenAI-compatible endpoint", "7\n")
	tm.answer("Base URL of the endpoint", llm.URL+"\n")
	tm.answer("API key (Enter for none): ", setupKey+"\n")
	tm.answer("Model [number or name, Enter: first-model]: ", "2\n")
	if err := tm.wait(); err != nil {
		t.Fatalf("setup: %v\n%s", err, tm.screen.String())
	}
	if strings.Contains(tm.screen.String(), setupKey) {
		t.Errorf("the key was shown:\n%s", tm.screen.String())
	}
	c, _, err := config.Load(cfgPath, true)
	if err != nil || c.Model.Model != "second-model" || c.Model.BaseURL != llm.URL || !strings.HasSuffix(c.Model.APIKey, "keys/custom.key") {
		t.Errorf("loaded %+v, %v\n%s", c.Model, err, tm.screen.String())
	}
}

// TestSetupInterrupted: Ctrl-C while the key is typed (echo off) ends
// setup as SIGINT does, with the terminal's echo back on and nothing
// written.
func TestSetupInterrupted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tm := startTerminal(t, "--config", filepath.Join(dir, "config.json"), "--provider", "openai")
	tm.answer("API key: ", "sk-half-typed\x03")
	err := tm.wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGINT {
		t.Fatalf("setup ended with %v, want SIGINT\n%s", err, tm.screen.String())
	}
	tios, err := unix.IoctlGetTermios(int(tm.master.Fd()), unix.TCGETS)
	if err != nil || tios.Lflag&unix.ECHO == 0 {
		t.Errorf("echo left off: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("written: %v", entries)
	}
}
