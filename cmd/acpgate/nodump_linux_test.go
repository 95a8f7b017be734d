package main_test

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// TestChildrenCannotReadKeys: the API keys in acpgate's environment are
// kept out of its servers' environments, and its servers cannot read them
// from /proc either. acpgate runs as an unprivileged user (nobody when the
// test runs as root: root may read any process's memory, which no
// attribute prevents); a stdio server, a shell running as that user too,
// tries /proc/$PPID/environ (acpgate's) and every other process's environ
// it can open, the watchdog's included. None of them may hold the key.
func TestChildrenCannotReadKeys(t *testing.T) {
	key := "sk-nodump-" + randomHex(t)
	dir := worldDir(t)
	bins := worldDir(t)
	agent, server := copyExec(t, agentBin, bins), copyExec(t, serverBin, bins)
	out := func(name string) string { return filepath.Join(dir, name) }
	setup := agentSetup{
		bin: agent,
		env: []string{"OPENAI_API_KEY=" + key, "ANTHROPIC_API_KEY=" + key, "HOME=" + dir, "XDG_CONFIG_HOME=" + dir},
		cmd: func(c *exec.Cmd) { c.SysProcAttr = unprivileged(t) },
	}
	a := startAgentWith(t, worldDir(t), setup)
	script := `echo $PPID > ` + out("ppid") + `
cat /proc/$PPID/environ > ` + out("parent") + ` 2>/dev/null; echo $? > ` + out("status") + `
for p in /proc/[0-9]*; do cat $p/environ 2>/dev/null; done > ` + out("all") + `
exec ` + server + ` -name probe`
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: dir, McpServers: []acpsdk.McpServer{
		{Stdio: &acpsdk.McpServerStdio{Name: "probe", Command: "/bin/sh", Args: []string{"-c", script}, Env: []acpsdk.EnvVariable{}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if meta := a.serversUntil(t, resp, "the probe ready", settled); !containsFields(meta, `"name":"probe","state":"ready"`) {
		t.Fatalf("servers: %s", meta)
	}
	if got, want := strings.TrimSpace(readFile(t, out("ppid"))), strconv.Itoa(a.cmd.Process.Pid); got != want {
		t.Fatalf("the server's parent is %s, not acpgate (%s)", got, want)
	}
	if status := strings.TrimSpace(readFile(t, out("status"))); status == "0" {
		t.Errorf("a server read acpgate's environment (/proc/$PPID/environ): %d bytes", len(readFile(t, out("parent"))))
	}
	// After the session is ready the watchdog runs: the test reads every
	// environment the unprivileged user can, as that user.
	probe := exec.Command("/bin/sh", "-c", `for p in /proc/[0-9]*; do cat $p/environ 2>/dev/null; done; true`)
	probe.SysProcAttr = unprivileged(t)
	seen, err := probe.Output()
	if err != nil {
		t.Fatal(err)
	}
	for where, text := range map[string]string{"acpgate's environment": readFile(t, out("parent")),
		"the environments a server could read": readFile(t, out("all")), "the environments its user can read": string(seen)} {
		if strings.Contains(text, key) {
			t.Errorf("the API key is in %s", where)
		}
	}
	if len(seen) == 0 {
		t.Error("the probe read no environment at all (not even its own): it proves nothing")
	}
}

// unprivileged returns the attributes that run a process as nobody when
// the test runs as root, and as the test's own user otherwise.
func unprivileged(t *testing.T) *syscall.SysProcAttr {
	if os.Geteuid() != 0 {
		return nil
	}
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
}

// worldDir is a temporary directory anyone may use (the unprivileged
// user's state, home and output), under the system's temporary
// directory (t.TempDir's parent is the test's own, closed to others).
func worldDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "acpgate-world-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// copyExec copies the executable at src into dir, executable by anyone.
func copyExec(t *testing.T, src, dir string) string {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dst := filepath.Join(dir, filepath.Base(src))
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func randomHex(t *testing.T) string {
	t.Helper()
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}
