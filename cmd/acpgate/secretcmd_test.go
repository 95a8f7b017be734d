//go:build linux

package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/oauthtest"
)

// serverErrors returns the error of each server in a session's
// _meta.acpgate.mcpServers (as JSON), by name.
func serverErrors(t testing.TB, meta string) map[string]string {
	t.Helper()
	var m struct {
		Acpgate struct {
			McpServers []struct{ Name, Error string } `json:"mcpServers"`
		} `json:"acpgate"`
	}
	if err := json.Unmarshal([]byte(meta), &m); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range m.Acpgate.McpServers {
		got[s.Name] = s.Error
	}
	return got
}

// TestSecretCommandsBoundedThroughTheBinary (issue 34, item 7): a secret
// manager's CLI (secret://gcp, a fake gcloud on PATH) and a workload token
// command that print 100 MB are killed once over their limits — acpgate's
// peak RSS stays small — and their servers fail with errors naming the
// command and the limit; when they hang, the errors name the command and
// how long it was given, before the server's connect timeout (never "no
// answer" from the server's initialize).
func TestSecretCommandsBoundedThroughTheBinary(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	// The fake gcloud prints 100 MB for secret "big" and hangs for "hang".
	gcloud := "#!/bin/sh\ncase \"$*\" in *--secret=big*) exec head -c 100000000 /dev/zero;; esac\nexec sleep 600\n"
	if err := os.WriteFile(filepath.Join(bin, "gcloud"), []byte(gcloud), 0o755); err != nil {
		t.Fatal(err)
	}
	srv := oauthtest.New(t, oauthtest.Config{WorkloadToken: "eyJ.workload.token", NoRegistration: true})
	// The workload token command runs in the sign-in's token flight, which
	// has a deadline of its own (60 s), so the command gets CommandTimeout
	// (10 s); the handshake meets the 401 twice (the server/discover probe,
	// then initialize), and each time a flight runs the command: the
	// hanging one's connect timeout (25 s) leaves room for two.
	workload := func(cmd string, timeout int) string {
		return mustJSON(map[string]any{"url": srv.MCPURL(), "timeout": timeout, "oauth": map[string]any{
			"grantType": "urn:ietf:params:oauth:grant-type:jwt-bearer", "clientId": "workload",
			"workloadToken": map[string]any{"command": []string{"sh", "-c", cmd}}}})
	}
	cfg := writeConfig(t, `{"mcpServers": {
	  "gcp-big": {"command": "SERVER", "timeout": 4000, "env": {"API_TOKEN": "secret://gcp/big"}},
	  "gcp-hang": {"command": "SERVER", "timeout": 4000, "env": {"API_TOKEN": "secret://gcp/hang"}},
	  "wl-big": `+workload("head -c 100000000 /dev/zero", 4000)+`,
	  "wl-hang": `+workload("exec sleep 600", 25000)+`}}`)
	a := startAgentWith(t, t.TempDir(), agentSetup{bin: plainAgentBin(t), env: []string{"PATH=" + bin + ":" + os.Getenv("PATH")}}, "--config", cfg)
	pid := a.cmd.Process.Pid
	resetPeak(t, pid)
	base := procStatus(t, pid, "VmHWM")
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	meta := a.serversUntil(t, resp, "servers failed", func(states map[string]string) bool {
		return len(states) == 4 && states["gcp-big"] == "failed" && states["gcp-hang"] == "failed" && states["wl-big"] == "failed" && states["wl-hang"] == "failed"
	})
	growth := procStatus(t, pid, "VmHWM") - base
	t.Logf("VmHWM growth with two commands printing 100 MB each: %.1f MB", float64(growth)/1e6)
	if growth > 32<<20 {
		t.Errorf("acpgate's VmHWM grew by %d bytes, over 32 MiB", growth)
	}
	errs := serverErrors(t, meta)
	for name, want := range map[string][]string{
		"gcp-big":  {"secret://gcp/big", "gcloud: standard output over its limit (1048576 bytes)"},
		"gcp-hang": {"secret://gcp/hang", "gcloud: timed out after"},
		"wl-big":   {"workload token: command sh -c head -c 100000000 /dev/zero: sh: standard output over its limit (65536 bytes)"},
		"wl-hang":  {"workload token: command sh -c exec sleep 600: sh: timed out after"},
	} {
		for _, w := range want {
			if !strings.Contains(errs[name], w) {
				t.Errorf("%s: error %q, want it to contain %q", name, errs[name], w)
			}
		}
		if strings.Contains(errs[name], "no answer") {
			t.Errorf("%s: error %q blames the server", name, errs[name])
		}
	}
}
