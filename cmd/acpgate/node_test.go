package main_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// TestNodeSDKClient drives acpgate with the official TypeScript ACP SDK
// (testdata/acpnode, pinned in its package-lock.json): one session with the
// MCP reference server over stdio, streamable HTTP and SSE, and a
// `/call mcp__<server>__get-sum` prompt for each, then the server's
// question (trigger-elicitation-request) answered through the SDK's
// validated elicitation/create. See testdata/acpnode/e2e.mjs.
func TestNodeSDKClient(t *testing.T) {
	t.Parallel()
	root := testbin.ModuleRoot()
	script := filepath.Join(root, "testdata", "acpnode", "e2e.mjs")
	everything := filepath.Join(root, "testdata", "everything")
	for _, need := range []string{
		filepath.Join(root, "testdata", "acpnode", "node_modules", "@agentclientprotocol", "sdk", "package.json"),
		filepath.Join(everything, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"),
	} {
		if _, err := os.Stat(need); err != nil {
			t.Fatalf("the pinned Node packages are not installed (%v): run `make npm` (or `make test`)", err)
		}
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is needed for this test: %v", err)
	}

	// The script bounds itself to 60 s; this is a backstop. On timeout it
	// gets SIGINT (it then kills its children), and SIGKILL 10 s later.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, agentBin, everything)
	cmd.Dir = root
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()

	// Each output line goes to t.Log: shown live with -v, and on failure.
	var last string
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64*1024), 4<<20)
		for sc.Scan() {
			t.Log(sc.Text())
			if strings.HasPrefix(sc.Text(), "acpnode e2e: ") {
				last = sc.Text()
			}
		}
	}()
	err = cmd.Wait()
	<-done
	pr.Close()
	if ctx.Err() != nil {
		t.Fatalf("e2e.mjs did not finish within 90 s: %v", err)
	}
	if err != nil {
		t.Fatalf("e2e.mjs failed (%v): %s", err, last)
	}
	if last != "acpnode e2e: 4 passed, 0 failed" {
		t.Fatalf("e2e.mjs exited 0 but its result line is %q", last)
	}
}
