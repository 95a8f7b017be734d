package hooks_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/gateway/hooks"
	"github.com/acpgate/acpgate/internal/base/sandbox"
)

// TestMain makes the test binary the sandbox launcher, as acpgate's
// binary is.
func TestMain(m *testing.M) {
	sandbox.LaunchIfAsked()
	os.Exit(m.Run())
}

// TestRunSandboxed runs hooks under a workspace-write policy: a hook
// writes inside its workspace (and its own TMPDIR), is refused writing
// outside it and reading a hidden directory, and its grandchild is too;
// a policy the system cannot enforce keeps a strict hook from starting
// and lets a best-effort one run unconfined, saying so.
func TestRunSandboxed(t *testing.T) {
	if s := sandbox.System.Probe(); !s.Files {
		t.Skipf("no Landlock file rules here: %s", s)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	ws, outside := filepath.Join(home, "project"), filepath.Join(home, "elsewhere")
	secret := filepath.Join(home, ".ssh", "id_ed25519")
	for _, d := range []string{ws, outside, filepath.Dir(secret)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(secret, []byte("PRIVATE"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &hooks.Runner{Env: []string{"PATH=" + os.Getenv("PATH")}, Sandbox: &sandbox.Launcher{Exe: exe, Places: sandbox.Places{Home: home}},
		Policy: sandbox.Policy{Files: sandbox.FilesWorkspaceWrite}, Workspace: []string{ws}}
	in := hooks.Input{SessionID: "s1", Cwd: ws, HookEventName: hooks.PreToolUse, ToolName: "mcp__s__echo"}
	ctx := context.Background()

	o := r.Run(ctx, hook(t, hooks.PreToolUse, `echo in > inside.txt && echo t > "$TMPDIR/t" && sh -c 'echo g > grand.txt'`, ""), ws, in)
	if o.Err != nil || o.Status != 0 || !o.Sandbox.Enforced || o.Sandbox.String() != "workspace-write, enforced" {
		t.Fatalf("inside the workspace: %+v", o)
	}
	for _, f := range []string{"inside.txt", "grand.txt"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for name, line := range map[string]string{
		"write outside":            `echo x > ` + outside + `/a`,
		"grandchild write outside": `sh -c 'echo x > ` + outside + `/b'`,
		"read hidden":              `cat ` + secret,
	} {
		o := r.Run(ctx, hook(t, hooks.PreToolUse, line, ""), ws, in)
		// (dash exits 2, "blocks", when a redirection fails, cat 1.)
		if o.Status <= 0 || strings.Contains(o.Stdout, "PRIVATE") || !strings.Contains(strings.ToLower(o.Stderr), "permission denied") {
			t.Errorf("%s: %+v, want a failing status with permission denied", name, o)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written outside the workspace: %v", entries)
	}

	// Not enforceable here: strict refuses to start, best effort runs.
	unenforcing := sandbox.ProberFunc(func() sandbox.Support { return sandbox.Support{Why: "the fake kernel has no Landlock"} })
	r.Sandbox = &sandbox.Launcher{Exe: exe, Prober: unenforcing, Places: sandbox.Places{Home: home}}
	o = r.Run(ctx, hook(t, hooks.PreToolUse, `echo ran`, ""), ws, in)
	if !errors.Is(o.Err, hooks.ErrStart) || !strings.Contains(o.Err.Error(), "failIfUnavailable") || o.Stdout != "" {
		t.Errorf("strict, not enforceable: %+v", o)
	}
	best := false
	r.Policy.FailIfUnavailable = &best
	o = r.Run(ctx, hook(t, hooks.PreToolUse, `echo ran`, ""), ws, in)
	if o.Err != nil || o.Stdout != "ran\n" || o.Sandbox.Enforced || !strings.Contains(o.Sandbox.String(), "NOT enforced: ") {
		t.Errorf("best effort, not enforceable: %+v (%s)", o, o.Sandbox)
	}
}
