package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

// otelcolEnv names the test collector binary (testdata/otelcol, built by
// `make otelcol`); `make telemetry-e2e`, which .ci/run runs after `make
// test`, sets it.
const otelcolEnv = "ACPGATE_OTELCOL"

// collector is a running OpenTelemetry Collector: its otlp receiver on
// 127.0.0.1 (HTTP and gRPC), its file exporter writing to out.
type collector struct {
	cmd        *exec.Cmd
	http, grpc string // the receiver's endpoints, as URLs
	out        string
	exited     chan struct{}
}

// freePort returns a port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startCollector runs the test collector and waits until it says it is
// ready.
func startCollector(t *testing.T) *collector {
	t.Helper()
	bin := os.Getenv(otelcolEnv)
	if bin == "" {
		t.Skipf("%s is not set: the collector end-to-end test runs in `make telemetry-e2e` (which .ci/run runs)", otelcolEnv)
	}
	dir := t.TempDir()
	hp, gp := freePort(t), freePort(t)
	c := &collector{http: fmt.Sprintf("http://127.0.0.1:%d", hp), grpc: fmt.Sprintf("http://127.0.0.1:%d", gp), out: filepath.Join(dir, "out.jsonl"), exited: make(chan struct{})}
	conf := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http: {endpoint: "127.0.0.1:%d"}
      grpc: {endpoint: "127.0.0.1:%d"}
exporters:
  file: {path: %q, flush_interval: 100ms}
service:
  telemetry:
    metrics: {level: none}
  pipelines:
    traces: {receivers: [otlp], exporters: [file]}
    metrics: {receivers: [otlp], exporters: [file]}
`, hp, gp, c.out)
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	c.cmd = exec.Command(bin, "--config", "file:"+cfg)
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	var log bytes.Buffer
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if !once && strings.Contains(sc.Text(), "Everything is ready") {
				once = true
				close(ready)
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	go func() { _ = c.cmd.Wait(); close(c.exited) }()
	t.Cleanup(func() { _ = c.cmd.Process.Kill(); <-c.exited })
	select {
	case <-ready:
	case <-c.exited:
		t.Fatalf("the collector exited before it was ready")
	case <-time.After(60 * time.Second):
		t.Fatalf("the collector was not ready within a minute")
	}
	return c
}

// stop stops the collector (its file exporter flushes) and returns what
// it wrote.
func (c *collector) stop(t *testing.T) []byte {
	t.Helper()
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the collector did not stop on SIGTERM")
	}
	b, err := os.ReadFile(c.out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// otlpFile is a line of the file exporter's output (OTLP JSON).
type otlpFile struct {
	ResourceSpans []struct {
		Resource   otlpResource `json:"resource"`
		ScopeSpans []struct {
			Spans []otlpSpan `json:"spans"`
		} `json:"scopeSpans"`
	} `json:"resourceSpans"`
	ResourceMetrics []struct {
		Resource     otlpResource `json:"resource"`
		ScopeMetrics []struct {
			Metrics []struct {
				Name string `json:"name"`
			} `json:"metrics"`
		} `json:"scopeMetrics"`
	} `json:"resourceMetrics"`
}

type otlpResource struct {
	Attributes []otlpAttr `json:"attributes"`
}

type otlpAttr struct {
	Key   string         `json:"key"`
	Value map[string]any `json:"value"`
}

type otlpSpan struct {
	TraceID      string     `json:"traceId"`
	SpanID       string     `json:"spanId"`
	ParentSpanID string     `json:"parentSpanId"`
	Name         string     `json:"name"`
	StartTime    string     `json:"startTimeUnixNano"`
	Attributes   []otlpAttr `json:"attributes"`
}

func (s otlpSpan) attr(key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			for _, v := range a.Value {
				return fmt.Sprint(v)
			}
		}
	}
	return ""
}

// received decodes the collector's output: the spans, the metric names,
// and the service names of the resources.
func received(t *testing.T, out []byte) (spans []otlpSpan, metrics, services map[string]bool) {
	t.Helper()
	metrics, services = map[string]bool{}, map[string]bool{}
	service := func(r otlpResource) {
		for _, a := range r.Attributes {
			if a.Key == "service.name" {
				services[fmt.Sprint(a.Value["stringValue"])] = true
			}
		}
	}
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var f otlpFile
		if err := json.Unmarshal(line, &f); err != nil {
			t.Fatalf("the collector's output: %v: %.200s", err, line)
		}
		for _, rs := range f.ResourceSpans {
			service(rs.Resource)
			for _, ss := range rs.ScopeSpans {
				spans = append(spans, ss.Spans...)
			}
		}
		for _, rm := range f.ResourceMetrics {
			service(rm.Resource)
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					metrics[m.Name] = true
				}
			}
		}
	}
	return spans, metrics, services
}

// The editor's trace (W3C traceparent) of the session and of its prompt.
const (
	e2eTrace      = "0af7651916cd43dd8448eb211c80319c"
	e2eNewSession = "b7ad6b7169203331"
	e2ePrompt     = "00f067aa0ba902b7"
	e2eSecret     = "the-prompt-says-zebra"
)

// TestTelemetryCollector: with OTEL_EXPORTER_OTLP_ENDPOINT set, a real
// collector (its otlp receiver, over HTTP and over gRPC) receives a
// session's trace — turn, model request, tool call and MCP request, in
// that tree, joined to the editor's trace — and its metrics; the model
// request carries the traceparent header, the MCP servers (the reference
// server, the test server) the trace context; nothing of the prompt or of
// the tool's result leaves.
func TestTelemetryCollector(t *testing.T) {
	t.Parallel()
	for _, proto := range []string{"http/protobuf", "grpc"} {
		t.Run(strings.ReplaceAll(proto, "/", "-"), func(t *testing.T) {
			t.Parallel()
			col := startCollector(t)
			endpoint := col.http
			if proto == "grpc" {
				endpoint = col.grpc
			}
			llm := fakellm.Start(
				fakellm.Turn{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "mcp__e__echo", Arguments: `{"message":"` + e2eSecret + `-echoed"}`}}},
				fakellm.Turn{Text: "done", Usage: &fakellm.Usage{PromptTokens: 120, CompletionTokens: 7}},
			)
			defer llm.Close()
			a := startAgentEnv(t, t.TempDir(), []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL=" + proto, "OTEL_METRIC_EXPORT_INTERVAL=600000"},
				"--model", "fake-model", "--base-url", llm.URL, "--startup-budget", "20s")
			a.client.mu.Lock()
			a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
			a.client.mu.Unlock()
			index := filepath.Join(everythingDist(t), "index.js")
			sess, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{
				{Stdio: &acpsdk.McpServerStdio{Name: "e", Command: "node", Args: []string{index, "stdio"}, Env: []acpsdk.EnvVariable{}}},
				stdioServer("f"),
			}, Meta: map[string]any{"traceparent": "00-" + e2eTrace + "-" + e2eNewSession + "-01"}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.conn.Prompt(ctx30(t), acpsdk.PromptRequest{SessionId: sess.SessionId, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("echo " + e2eSecret)},
				Meta: map[string]any{"traceparent": "00-" + e2eTrace + "-" + e2ePrompt + "-01"}}); err != nil {
				t.Fatal(err)
			}
			var seen struct {
				Meta map[string]string `json:"meta"`
			}
			if err := json.Unmarshal([]byte(callText(t, a, sess.SessionId, "mcp__f__trace", `{}`)), &seen); err != nil {
				t.Fatal(err)
			}
			_ = a.stdin.Close() // acpgate exits, exporting what it has
			select {
			case <-a.exited:
			case <-time.After(30 * time.Second):
				t.Fatal("acpgate did not exit")
			}
			out := col.stop(t)
			spans, metrics, services := received(t, out)
			chats := checkTree(t, spans)
			// The /call turn: under session/new's span (its prompt
			// carried none), and the test server saw its MCP request.
			callTurn := only(t, spans, "invoke_agent acpgate", e2eNewSession)
			callTool := only(t, spans, "execute_tool mcp__f__trace", callTurn.SpanID)
			callReq := only(t, spans, "tools/call trace", callTool.SpanID)
			if tp := seen.Meta["traceparent"]; tp != "00-"+e2eTrace+"-"+callReq.SpanID+"-01" {
				t.Errorf("the test server's trace tool saw traceparent %q, want its request's span %s in the editor's trace", tp, callReq.SpanID)
			}
			reqs := llm.Requests()
			if len(reqs) != len(chats) {
				t.Fatalf("%d model requests, %d chat spans", len(reqs), len(chats))
			}
			for i, r := range reqs {
				if h := r.Header.Get("traceparent"); h != "00-"+e2eTrace+"-"+chats[i].SpanID+"-01" {
					t.Errorf("model request %d: traceparent header %q, want its span %s", i+1, h, chats[i].SpanID)
				}
			}
			for _, name := range []string{"gen_ai.client.token.usage", "gen_ai.client.operation.duration", "mcp.client.operation.duration", "acpgate.tool.call.duration", "acpgate.sessions", "acpgate.mcp.server.state_changes"} {
				if !metrics[name] {
					t.Errorf("the collector got no metric %s; got %v", name, metrics)
				}
			}
			if !services["acpgate"] {
				t.Errorf("service names %v, want acpgate", services)
			}
			if bytes.Contains(out, []byte(e2eSecret)) {
				t.Errorf("the prompt or the tool's result reached the collector without the opt-in")
			}
		})
	}
}

// checkTree checks the span tree of the model turn: turn (under the
// editor's prompt span) → model requests (two: the tool call, then the
// answer; returned in the order they started), turn → tool call → MCP
// request, all in the editor's trace; and the servers' starts under
// session/new's.
func checkTree(t *testing.T, spans []otlpSpan) []otlpSpan {
	t.Helper()
	turn := only(t, spans, "invoke_agent acpgate", e2ePrompt)
	var chats []otlpSpan
	for _, s := range spans {
		if s.Name == "chat fake-model" && s.ParentSpanID == turn.SpanID {
			chats = append(chats, s)
		}
	}
	slices.SortFunc(chats, func(a, b otlpSpan) int { return strings.Compare(a.StartTime, b.StartTime) })
	if len(chats) != 2 {
		t.Fatalf("%d chat spans under the turn, want 2", len(chats))
	}
	tool := only(t, spans, "execute_tool mcp__e__echo", turn.SpanID)
	call := only(t, spans, "tools/call echo", tool.SpanID)
	only(t, spans, "acpgate.mcp.server.start e", e2eNewSession)
	only(t, spans, "acpgate.mcp.server.start f", e2eNewSession)
	for _, s := range []otlpSpan{turn, chats[0], chats[1], tool, call} {
		if s.TraceID != e2eTrace {
			t.Errorf("%s is in trace %s, want the editor's %s", s.Name, s.TraceID, e2eTrace)
		}
	}
	if a := chats[1]; a.attr("gen_ai.usage.output_tokens") != "7" || a.attr("gen_ai.provider.name") != "openai" || a.attr("gen_ai.request.model") != "fake-model" {
		t.Errorf("the second chat span's attributes %+v", a.Attributes)
	}
	if call.attr("mcp.method.name") != "tools/call" || call.attr("acpgate.mcp.server") != "e" || call.attr("network.transport") != "pipe" {
		t.Errorf("MCP request span attributes %+v", call.Attributes)
	}
	return chats
}

// only returns the span named name whose parent is parent ("": any),
// failing unless there is exactly one.
func only(t *testing.T, spans []otlpSpan, name, parent string) otlpSpan {
	t.Helper()
	var found []otlpSpan
	var names []string
	for _, s := range spans {
		names = append(names, s.Name+"<"+s.ParentSpanID)
		if s.Name == name && (parent == "" || s.ParentSpanID == parent) {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans %q under %q, want one; spans: %s", len(found), name, parent, strings.Join(names, ", "))
	}
	return found[0]
}

// TestOTELEnvStaysWithAcpgate: acpgate's OTEL_* variables do not reach an
// MCP server (claude-code#45644) unless the server's configuration names
// one, and a collector that cannot be reached costs a /call nothing but a
// warning.
func TestOTELEnvStaysWithAcpgate(t *testing.T) {
	t.Parallel()
	a := startAgentEnv(t, t.TempDir(), []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer otlp-secret-4711", "OTEL_SERVICE_NAME=from-acpgate"})
	a.client.mu.Lock()
	a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
	a.client.mu.Unlock()
	plain := stdioServer("plain")
	named := stdioServer("named")
	named.Stdio.Env = []acpsdk.EnvVariable{{Name: "OTEL_SERVICE_NAME", Value: "for-this-server"}}
	sess, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{plain, named}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ server, name, want string }{
		{"plain", "OTEL_EXPORTER_OTLP_ENDPOINT", "(unset)"},
		{"plain", "OTEL_EXPORTER_OTLP_HEADERS", "(unset)"},
		{"plain", "OTEL_SERVICE_NAME", "(unset)"},
		{"named", "OTEL_SERVICE_NAME", "for-this-server"},
	} {
		if got := callText(t, a, sess.SessionId, "mcp__"+c.server+"__env", `{"name":"`+c.name+`"}`); got != c.want {
			t.Errorf("%s sees %s=%q, want %q", c.server, c.name, got, c.want)
		}
	}
	_ = a.stdin.Close()
	select {
	case <-a.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("acpgate did not exit")
	}
	logs := a.stderr.String()
	if !strings.Contains(logs, "telemetry on") {
		t.Errorf("the log does not say telemetry is on:\n%s", logs)
	}
	if strings.Contains(logs, "otlp-secret-4711") {
		t.Errorf("the OTLP header's value is in the log:\n%s", logs)
	}
}
