package mcpclient_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/mcpclient"
)

// everythingDir holds the pinned @modelcontextprotocol/server-everything
// (testdata/everything/package-lock.json); `make test` installs it.
var everythingDir = filepath.Join(testbin.ModuleRoot(), "testdata", "everything")

const everythingJS = "node_modules/@modelcontextprotocol/server-everything/dist/index.js"

func needEverything(t *testing.T) {
	t.Helper()
	testbin.SkipIfShort(t, "runs the reference MCP server on Node")
	if _, err := os.Stat(filepath.Join(everythingDir, everythingJS)); err != nil {
		t.Fatalf("the reference server is not installed (%v): run `make test`, or `make npm` once", err)
	}
}

// everythingNet starts the reference server in streamableHttp or sse mode
// bound to 127.0.0.1 on a free port, and returns its base URL.
func everythingNet(t *testing.T, mode string) string {
	t.Helper()
	cmd := exec.Command("node", "--require", "./loopback.cjs", everythingJS, mode)
	cmd.Dir = everythingDir
	cmd.Env = append(os.Environ(), "PORT=0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	listening := regexp.MustCompile(`^LISTENING (127\.0\.0\.1:\d+)$`)
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := listening.FindStringSubmatch(sc.Text()); m != nil {
			go func() { // keep draining so the server never blocks on stderr
				for sc.Scan() {
				}
			}()
			return "http://" + m[1]
		}
	}
	t.Fatalf("reference server (%s) exited before listening: %v", mode, sc.Err())
	return ""
}

func TestReferenceServerEverything(t *testing.T) {
	t.Parallel()
	needEverything(t)
	specs := []mcpclient.ServerSpec{
		{Name: "stdio", Command: "node", Args: []string{everythingJS, "stdio"}, Cwd: everythingDir},
		{Name: "http", Transport: mcpclient.TransportHTTP, URL: everythingNet(t, "streamableHttp") + "/mcp"},
		{Name: "sse", Transport: mcpclient.TransportSSE, URL: everythingNet(t, "sse") + "/sse"},
	}
	opts, _ := fastOpts(t)
	m := start(t, opts, specs...)
	for _, spec := range specs {
		t.Run(spec.Name, func(t *testing.T) {
			mustReady(t, m, spec.Name)
			if !hasTool(m, spec.Name, "get-sum") {
				t.Fatalf("get-sum not listed; tools: %v", m.Tools())
			}
			res, err := m.CallTool(context.Background(), spec.Name, "get-sum", map[string]any{"a": 2, "b": 40})
			if err != nil {
				t.Fatal(err)
			}
			if got := text(t, res); got != "The sum of 2 and 40 is 42." {
				t.Errorf("get-sum: %q", got)
			}
		})
	}
}
