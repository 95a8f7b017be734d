package main_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// TestNoModelsBuild: acpgate built with the nomodels and notelemetry
// tags (make demo's build) does not link the model SDKs nor the
// OpenTelemetry SDK and its exporters (gRPC), serves its MCP servers as the
// whole binary does, and answers a prompt for a model with the error that
// says how to build the providers.
func TestNoModelsBuild(t *testing.T) {
	t.Parallel()
	root := testbin.ModuleRoot()
	list := exec.Command("go", "list", "-deps", "-tags", "nomodels,notelemetry", "./cmd/acpgate")
	list.Dir = root
	deps, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if !strings.Contains(string(deps), "github.com/acpgate/acpgate/mcpclient\n") {
		t.Fatalf("go list -deps lists no mcpclient: %s", deps)
	}
	for _, sdk := range []string{"github.com/openai/openai-go", "github.com/anthropics/anthropic-sdk-go", "go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters", "google.golang.org/grpc"} {
		if strings.Contains(string(deps), sdk) {
			t.Errorf("the nomodels build depends on %s", sdk)
		}
	}
	bin := filepath.Join(t.TempDir(), "acpgate-nomodels")
	build := exec.Command("go", "build", "-tags", "nomodels,notelemetry", "-o", bin, "./cmd/acpgate")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags nomodels: %v\n%s", err, out)
	}
	a := startAgentWith(t, t.TempDir(), agentSetup{bin: bin}, "--model", "some-model", "--base-url", "http://127.0.0.1:1/v1")
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("demo")}})
	if err != nil {
		t.Fatal(err)
	}
	prompt(t, a, resp.SessionId, "/tools echo")
	if text := agentText(a.client.all()); !strings.Contains(text, "mcp__demo__echo") {
		t.Errorf("/tools in the nomodels build:\n%s", text)
	}
	before := len(a.client.all())
	prompt(t, a, resp.SessionId, "hello")
	if text := agentText(a.client.all()[before:]); !strings.Contains(text, "built without model providers") {
		t.Errorf("a prompt for a model in the nomodels build said:\n%s", text)
	}
}
