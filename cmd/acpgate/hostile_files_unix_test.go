//go:build unix

package main_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// mkfifo makes a named pipe at path, which no one ever writes: a plain
// open of it for reading waits forever.
func mkfifo(t *testing.T, path string) string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConfigFileFIFO: a named pipe as the configuration file does not hang
// acpgate, `acpgate setup` or `acpgate config check`: each ends at once
// with an error naming the file and what it is.
func TestConfigFileFIFO(t *testing.T) {
	t.Parallel()
	fifo := mkfifo(t, filepath.Join(t.TempDir(), "config.json"))
	for _, args := range [][]string{
		{"--config", fifo, "--log-level", "error"},
		{"config", "check", "--config", fifo},
		{"setup", "--config", fifo, "--provider", "custom", "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--api-key-stdin"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		cmd := exec.CommandContext(ctx, agentBin, args...)
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
		cmd.Stdin = strings.NewReader("sk-key\n")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		timedOut := ctx.Err() != nil
		cancel()
		var ee *exec.ExitError
		switch {
		case timedOut:
			t.Errorf("acpgate %s hung on the FIFO", strings.Join(args, " "))
		case !errors.As(err, &ee) || ee.ExitCode() == 0:
			t.Errorf("acpgate %s: %v, want a failure\n%s", strings.Join(args, " "), err, out.String())
		case !strings.Contains(out.String(), fifo) || !strings.Contains(out.String(), "named pipe"):
			t.Errorf("acpgate %s does not say the file is a named pipe:\n%s", strings.Join(args, " "), out.String())
		}
	}
}

// TestSetupThroughSymlink: `acpgate setup` on a configuration file that is
// a symbolic link (into a dotfiles repository) writes the file the link
// leads to, keeps the link, and says so.
func TestSetupThroughSymlink(t *testing.T) {
	t.Parallel()
	llm := fakellm.Start()
	defer llm.Close()
	llm.SetModels("fake-model")
	dotfiles, cfgDir := t.TempDir(), t.TempDir()
	target := testbin.WriteFile(t, dotfiles, "acpgate.json", `{"instructions": "keep me"}`+"\n")
	link := filepath.Join(cfgDir, "config.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runSetup(t, setupKey+"\n", "--config", link, "--provider", "custom", "--base-url", llm.URL, "--model", "fake-model", "--api-key-stdin")
	if code != 0 || !strings.Contains(stdout, "is a symbolic link: the file it leads to, "+target+", was written") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	c, _, err := config.Load(target, true)
	if err != nil || c.Model.Model != "fake-model" || c.Instructions != "keep me" {
		t.Errorf("the linked file holds %+v, %v", c, err)
	}
}

// TestHostileInstructionsFiles: a project whose AGENTS.md is a named pipe
// and whose subdirectory's AGENTS.md links to a file outside it (a key)
// neither wedges the session nor sends the file: the prompt is answered,
// /mcp and /context answer, the key reaches neither the model nor
// /context, and /context says why each file was not read.
func TestHostileInstructionsFiles(t *testing.T) {
	t.Parallel()
	repo, home := t.TempDir(), t.TempDir()
	cwd := filepath.Join(repo, "sub")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	const key = "-----BEGIN OPENSSH PRIVATE KEY----- hostile-files-7f1c"
	secret := testbin.WriteFile(t, home, "id_rsa", key)
	fifo := mkfifo(t, filepath.Join(repo, "AGENTS.md"))
	outside := filepath.Join(cwd, "AGENTS.md")
	if err := os.Symlink(secret, outside); err != nil {
		t.Fatal(err)
	}
	llm := fakellm.Start(fakellm.Turn{Text: "answered"})
	defer llm.Close()
	a := startAgent(t, t.TempDir(), "--model", "fake-model", "--base-url", llm.URL)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	prompt(t, a, resp.SessionId, "hi")
	prompt(t, a, resp.SessionId, "/mcp")
	prompt(t, a, resp.SessionId, "/context")
	said := agentText(a.client.all())
	if !strings.Contains(said, "answered") {
		t.Errorf("the prompt was not answered: %q", said)
	}
	for _, want := range []string{fifo + ": not a regular file", "named pipe", outside + ": it leads outside the project", secret} {
		if !strings.Contains(said, want) {
			t.Errorf("/context does not say %q:\n%s", want, said)
		}
	}
	if sys := systemMessage(t, llm, 0); strings.Contains(sys, key) || strings.Contains(said, key) {
		t.Errorf("the file outside the project was read:\n%s", sys)
	}
}
