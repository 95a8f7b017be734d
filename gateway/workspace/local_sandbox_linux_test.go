package workspace_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/gateway/workspace"
	"github.com/acpgate/acpgate/internal/base/sandbox"
	"github.com/acpgate/acpgate/internal/testsupport/workspacetest"
)

// TestMain makes the test binary the sandbox launcher, as acpgate is.
func TestMain(m *testing.M) {
	sandbox.LaunchIfAsked()
	os.Exit(m.Run())
}

// sandboxedLocal is a Local backend whose commands run under p with ws
// as the workspace.
func sandboxedLocal(t *testing.T, p sandbox.Policy, home string, ws ...string) *workspace.Local {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return workspace.NewLocal(&workspace.LocalOptions{Sandbox: &sandbox.Launcher{Exe: exe, Places: sandbox.Places{Home: home}}, Policy: p, Workspace: ws})
}

// run runs line with l in cwd and returns its output and exit code.
func run(t *testing.T, l *workspace.Local, cwd, line string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p, err := l.Start(ctx, workspace.Command{Line: line, Cwd: cwd, OutputLimit: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release(ctx)
	st, err := p.Wait(ctx)
	if err != nil || st.Code == nil {
		t.Fatalf("%s: %v %+v", line, err, st)
	}
	out, _ := p.Output(ctx)
	return out.Text, *st.Code
}

// TestLocalSandboxed: the local run tool's commands run under the
// command policy: they write the workspace, not outside it, and cannot
// read a hidden directory; their children neither.
func TestLocalSandboxed(t *testing.T) {
	if s := sandbox.System.Probe(); !s.Files {
		t.Skipf("no Landlock: %s", s)
	}
	home := t.TempDir()
	ws, outside := filepath.Join(home, "ws"), t.TempDir()
	secret := filepath.Join(home, ".gnupg", "key")
	for _, d := range []string{ws, filepath.Dir(secret)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(secret, []byte("PRIVATE"), 0o600); err != nil {
		t.Fatal(err)
	}
	l := sandboxedLocal(t, sandbox.Policy{Files: sandbox.FilesWorkspaceWrite}, home, ws)
	if out, code := run(t, l, ws, "echo hi > a && sh -c 'cat a'"); code != 0 || out != "hi\n" {
		t.Errorf("in the workspace: %d %q", code, out)
	}
	for _, line := range []string{"echo x > " + outside + "/b", "sh -c 'cat " + secret + "'"} {
		if out, code := run(t, l, ws, line); code == 0 || !strings.Contains(out, "Permission denied") || strings.Contains(out, "PRIVATE") {
			t.Errorf("%s: %d %q, want Permission denied", line, code, out)
		}
	}
}

// TestLocalSandboxedRules runs the workspace tools' own tests over a
// backend whose commands are sandboxed (workspace-write over the whole
// temporary tree, where the tests work).
func TestLocalSandboxedRules(t *testing.T) {
	if s := sandbox.System.Probe(); !s.Files {
		t.Skipf("no Landlock: %s", s)
	}
	workspacetest.Run(t, func(t *testing.T) workspacetest.Backend {
		l := sandboxedLocal(t, sandbox.Policy{Files: sandbox.FilesWorkspaceWrite}, t.TempDir(), os.TempDir())
		return workspacetest.Backend{Files: l, Terminals: l}
	})
}
