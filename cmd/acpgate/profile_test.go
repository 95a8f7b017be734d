package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestProfiles checks the two debugging hooks: a session of acpgate run
// with ACPGATE_CPUPROFILE and ACPGATE_MEMPROFILE leaves both profiles
// (pprof files, gzip-compressed) where they name.
func TestProfiles(t *testing.T) {
	dir := t.TempDir()
	cpu, heap := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "heap.pprof")
	cmd := exec.Command(agentBin, "--state-dir", filepath.Join(dir, "state"), "--log-level", "error")
	cmd.Env = append(os.Environ(), "ACPGATE_CPUPROFILE="+cpu, "ACPGATE_MEMPROFILE="+heap)
	cmd.Stdin = bytes.NewReader([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n"))
	out, err := cmd.Output()
	if err != nil || !bytes.Contains(out, []byte(`"id":1,"result"`)) {
		t.Fatalf("acpgate: %v; stdout %s", err, out)
	}
	for _, p := range []string{cpu, heap} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%s: not a pprof file (%d bytes)", p, len(b))
		}
	}
}
