package mcpclient_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/base/sandbox"
	"github.com/acpgate/acpgate/internal/testsupport/loopback"
	"github.com/acpgate/acpgate/mcpclient"
)

// needLandlock skips where the kernel cannot enforce network rules (the
// machines of this project can: Landlock ABI 7).
func needLandlock(t *testing.T) {
	t.Helper()
	if s := sandbox.System.Probe(); !s.Network {
		t.Skipf("no Landlock network rules: %s", s)
	}
}

func TestSandboxedServerFiles(t *testing.T) {
	needLandlock(t)
	opts, _ := fastOpts(t)
	home := t.TempDir()
	opts.Sandbox.Places.Home = home
	opts.Workspace = []string{opts.Cwd}
	secret := filepath.Join(home, ".ssh", "id_ed25519")
	if err := os.MkdirAll(filepath.Dir(secret), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("PRIVATE"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	spec := mcpclient.ServerSpec{Name: "fs", Command: serverBin, Args: []string{"-sandbox-tools"}, Sandbox: sandbox.Policy{Files: sandbox.FilesWorkspaceWrite}}
	m := start(t, opts, spec)
	mustReady(t, m, "fs")
	st, _ := m.Status("fs")
	if st.Sandbox == nil || !st.Sandbox.Enforced || st.Sandbox.Policy != "workspace-write" {
		t.Fatalf("Sandbox = %+v", st.Sandbox)
	}
	if res := call(t, m, "fs", "write_path", map[string]any{"path": filepath.Join(opts.Cwd, "in.txt"), "text": "x"}); res.IsError {
		t.Errorf("writing the workspace: %s", text(t, res))
	}
	for what, args := range map[string]map[string]any{
		"write_path": {"path": filepath.Join(outside, "out.txt"), "text": "x"},
		"read_path":  {"path": secret},
	} {
		res := call(t, m, "fs", what, args)
		if out := text(t, res); !res.IsError || !strings.Contains(out, "permission denied") || strings.Contains(out, "PRIVATE") {
			t.Errorf("%s %v: %q, want permission denied", what, args, out)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "out.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("written outside the workspace: %v", err)
	}
}

func TestSandboxedServerNetwork(t *testing.T) {
	needLandlock(t)
	addr := loopback.Acceptor(t).String()
	for _, c := range []struct {
		network sandbox.Net
		ok      bool
	}{{sandbox.NetAll, true}, {sandbox.NetNone, false}} {
		opts, _ := fastOpts(t)
		spec := mcpclient.ServerSpec{Name: "net", Command: serverBin, Args: []string{"-sandbox-tools"},
			Sandbox: sandbox.Policy{Files: sandbox.FilesReadOnly, Network: c.network}}
		m := start(t, opts, spec)
		mustReady(t, m, "net")
		for _, child := range []bool{false, true} {
			res := call(t, m, "net", "dial", map[string]any{"addr": addr, "via_child": child})
			if res.IsError == c.ok {
				t.Errorf("network %s, via child %v: %q", c.network, child, text(t, res))
			}
			if !c.ok && !strings.Contains(text(t, res), "permission denied") {
				t.Errorf("network %s, via child %v: %q, want permission denied", c.network, child, text(t, res))
			}
		}
	}
}

// unenforcing is a system without Landlock network rules.
var unenforcing = sandbox.ProberFunc(func() sandbox.Support {
	return sandbox.Support{Mechanism: "landlock ABI 3", Files: true, Why: "Landlock ABI 3 has no network rules"}
})

func TestSandboxRefusesWhatItCannotEnforce(t *testing.T) {
	opts, _ := fastOpts(t)
	opts.Sandbox.Prober = unenforcing
	best := false
	m := start(t, opts,
		mcpclient.ServerSpec{Name: "strict", Command: serverBin, NoRestart: true, Sandbox: sandbox.Policy{Files: sandbox.FilesReadOnly, Network: sandbox.NetNone}},
		mcpclient.ServerSpec{Name: "lenient", Command: serverBin, Sandbox: sandbox.Policy{Files: sandbox.FilesReadOnly, Network: sandbox.NetNone, FailIfUnavailable: &best}},
	)
	st, _ := m.Status("strict")
	if st.State != mcpclient.StateFailed || !errors.Is(st.Err, sandbox.ErrUnavailable) || !strings.Contains(st.Error, "failIfUnavailable") {
		t.Errorf("strict: %s %v", st.State, st.Err)
	}
	if st.Sandbox == nil || st.Sandbox.Enforced {
		t.Errorf("strict: Sandbox = %+v", st.Sandbox)
	}
	mustReady(t, m, "lenient")
	st, _ = m.Status("lenient")
	if st.Sandbox == nil || st.Sandbox.Enforced || !strings.Contains(st.Sandbox.Note, "no network rules") {
		t.Errorf("lenient: Sandbox = %+v", st.Sandbox)
	}
}

func TestSandboxHint(t *testing.T) {
	needLandlock(t)
	opts, _ := fastOpts(t)
	// The recorder's file is outside the workspace: the server cannot
	// open it and exits at start.
	opts.Workspace = []string{opts.Cwd}
	rec := filepath.Join(t.TempDir(), "rec")
	m := start(t, opts, mcpclient.ServerSpec{Name: "denied", Command: serverBin, Args: []string{"-record", rec}, NoRestart: true,
		Sandbox: sandbox.Policy{Files: sandbox.FilesWorkspaceWrite}})
	st, _ := m.Status("denied")
	if st.State != mcpclient.StateFailed || st.Sandbox == nil || !strings.Contains(st.Sandbox.Hint, "policy workspace-write") {
		t.Errorf("denied: %s %q, sandbox %+v", st.State, st.Error, st.Sandbox)
	}
}

// TestSandboxPendingBeforeStart: a stdio server's policy is in its status
// from the start, as not started yet, until its first start says how it
// is confined; an off policy and an HTTP server have none.
func TestSandboxPendingBeforeStart(t *testing.T) {
	needLandlock(t)
	opts, _ := fastOpts(t)
	m, err := mcpclient.New([]mcpclient.ServerSpec{
		{Name: "confined", Command: serverBin, Sandbox: sandbox.Policy{Files: sandbox.FilesReadOnly, Network: sandbox.NetNone}},
		{Name: "open", Command: serverBin},
	}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	st, _ := m.Status("confined")
	if st.Sandbox == nil || !st.Sandbox.Pending || st.Sandbox.Enforced || st.Sandbox.Policy != "read-only, network none" {
		t.Fatalf("before the start: Sandbox = %+v", st.Sandbox)
	}
	if st, _ := m.Status("open"); st.Sandbox != nil {
		t.Errorf("off policy: Sandbox = %+v", st.Sandbox)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	mustReady(t, m, "confined")
	if st, _ := m.Status("confined"); st.Sandbox == nil || st.Sandbox.Pending || !st.Sandbox.Enforced {
		t.Errorf("after the start: Sandbox = %+v", st.Sandbox)
	}
}
