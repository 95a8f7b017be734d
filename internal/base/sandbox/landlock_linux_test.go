//go:build linux

package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/internal/testsupport/loopback"
)

// TestMain makes the test binary the launcher (LaunchArg) and a dialer
// (dialEnv), as acpgate's binary and a server would be.
func TestMain(m *testing.M) {
	LaunchIfAsked()
	if addr := os.Getenv(dialEnv); addr != "" {
		if err := loopback.Dial(os.Getenv(protoEnv), addr); err != nil {
			fmt.Println("dial:", err)
			os.Exit(3)
		}
		fmt.Println("connected")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const (
	dialEnv  = "SANDBOX_TEST_DIAL"
	protoEnv = "SANDBOX_TEST_PROTO"
)

// landlockOrSkip skips where the kernel has no Landlock network rules:
// the machines this project runs on have ABI 7 (ACPGATE_REQUIRE_LANDLOCK
// makes it a failure there).
func landlockOrSkip(t *testing.T) {
	t.Helper()
	if s := probe(); !s.Network {
		if os.Getenv("ACPGATE_REQUIRE_LANDLOCK") != "" {
			t.Fatalf("Landlock required: %s", s)
		}
		t.Skipf("no Landlock network rules here: %s", s)
	}
}

// confinedRun runs argv under p (workspace ws, home home) and returns its
// output and error.
func confinedRun(t *testing.T, p Policy, home, ws string, env []string, argv ...string) (string, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	l := &Launcher{Exe: exe, Places: Places{Home: home}}
	cmd, conf, err := l.Command(p, []string{ws}, append(os.Environ(), env...), argv[0], argv[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	defer conf.Close()
	if !conf.Enforced {
		t.Fatalf("not enforced: %+v", conf)
	}
	cmd.Dir = ws
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.String(), err
}

func TestLandlockFiles(t *testing.T) {
	landlockOrSkip(t)
	home := t.TempDir()
	ws := filepath.Join(home, "project")
	outside := filepath.Join(home, "elsewhere")
	for _, d := range []string{ws, outside, filepath.Join(home, ".ssh")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(home, ".ssh", "id_ed25519")
	if err := os.WriteFile(secret, []byte("PRIVATE"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "notes"), []byte("public\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Inside the workspace: written; its grandchild too.
	out, err := confinedRun(t, Policy{Files: FilesWorkspaceWrite}, home, ws, nil,
		"sh", "-c", `echo ok > `+ws+`/a && sh -c 'echo ok > `+ws+`/b' && cat `+home+`/notes && echo tmp > "$TMPDIR/t" && cat "$TMPDIR/t"`)
	if err != nil || out != "public\ntmp\n" {
		t.Fatalf("inside the workspace: %v: %q", err, out)
	}
	for _, f := range []string{"a", "b"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err != nil {
			t.Errorf("workspace file %s: %v", f, err)
		}
	}
	// Outside: refused, for the child and its grandchild.
	for name, line := range map[string]string{
		"write outside":            `echo x > ` + outside + `/a`,
		"grandchild write outside": `sh -c 'echo x > ` + outside + `/b'`,
		"read hidden":              `cat ` + secret,
		"grandchild read hidden":   `sh -c 'cat ` + secret + `'`,
		"list hidden":              `ls ` + filepath.Dir(secret),
		"write /tmp directly":      `echo x > /tmp/acpgate-sandbox-test-$$`,
	} {
		out, err := confinedRun(t, Policy{Files: FilesWorkspaceWrite}, home, ws, nil, "sh", "-c", line)
		if err == nil || strings.Contains(out, "PRIVATE") || !strings.Contains(strings.ToLower(out), "permission denied") {
			t.Errorf("%s: err %v, output %q: want permission denied", name, err, out)
		}
	}
	// read-only: not even the workspace.
	if out, err := confinedRun(t, Policy{Files: FilesReadOnly}, home, ws, nil, "sh", "-c", `echo x > `+ws+`/c`); err == nil {
		t.Errorf("read-only wrote the workspace: %q", out)
	}
}

func TestLandlockNetwork(t *testing.T) {
	landlockOrSkip(t)
	tcp := loopback.Acceptor(t)
	addr, p := tcp.String(), uint16(tcp.Port)
	exe, _ := os.Executable()
	ws := t.TempDir()
	env := []string{dialEnv + "=" + addr}
	for _, c := range []struct {
		name string
		p    Policy
		ok   bool
	}{
		{"all", Policy{Files: FilesReadOnly}, true},
		{"none", Policy{Files: FilesReadOnly, Network: NetNone}, false},
		{"its port", Policy{Files: FilesReadOnly, Network: NetPorts, Connect: []uint16{p}}, true},
		{"another port", Policy{Files: FilesReadOnly, Network: NetPorts, Connect: []uint16{p + 1}}, false},
	} {
		out, err := confinedRun(t, c.p, t.TempDir(), ws, env, exe)
		if c.ok != (err == nil) {
			t.Errorf("network %s: err %v, output %q", c.name, err, out)
		}
		if !c.ok && !strings.Contains(out, "permission denied") {
			t.Errorf("network %s: %q, want permission denied", c.name, out)
		}
	}
	// A grandchild (through sh) is refused as well.
	out, err := confinedRun(t, Policy{Files: FilesReadOnly, Network: NetNone}, t.TempDir(), ws, env, "sh", "-c", exe)
	if err == nil {
		t.Errorf("grandchild connected under network none: %q", out)
	}
}

func TestLauncherRefusesBadArguments(t *testing.T) {
	var stderr bytes.Buffer
	if code := Main([]string{"not base64!", "--", "true"}, &stderr); code != ExitLaunch || !strings.Contains(stderr.String(), "decoding rules") {
		t.Errorf("Main = %d, %q", code, stderr.String())
	}
	stderr.Reset()
	if code := Main([]string{"x"}, &stderr); code != ExitLaunch || !strings.Contains(stderr.String(), "usage") {
		t.Errorf("Main = %d, %q", code, stderr.String())
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip(err)
	}
}
