package acp_test

import (
	"encoding/json"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/internal/base/telemetry"
	"github.com/acpgate/acpgate/mcpclient"
)

// The editor's trace contexts (W3C traceparent): one sent with
// session/new, one with session/prompt.
const (
	editorTrace    = "4bf92f3577b34da6a3ce929d0e0e4736"
	newSessionSpan = "00f067aa0ba902b7"
	promptSpan     = "b7ad6b7169203331"
)

func traceparent(span string) string { return "00-" + editorTrace + "-" + span + "-01" }

// What the prompt and the tool's result say; neither may leave in
// telemetry without the opt-in.
const (
	secretPrompt = "please use the trace tool on the quarterly numbers"
)

// traceTurn runs a session whose model calls the test server's trace tool
// once, with tel (nil: off) and the editor's trace context in session/new
// and session/prompt, and returns what the tool saw.
func traceTurn(t *testing.T, tel *telemetry.Telemetry) (meta map[string]string, ups []acpsdk.SessionUpdate) {
	t.Helper()
	m := scripted(calls("c1", "mcp__alpha__trace", `{}`), says("done"))
	h := newHarness(t, acp.Options{Provider: m, Telemetry: tel, MCP: mcpclient.Options{Telemetry: tel}}, nil)
	resp, err := h.conn.NewSession(h.ctx(), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("alpha")},
		Meta: map[string]any{"traceparent": traceparent(newSessionSpan)}})
	if err != nil {
		t.Fatal(err)
	}
	from := h.fc.rec.len()
	if _, err := h.conn.Prompt(h.ctx(), acpsdk.PromptRequest{SessionId: resp.SessionId, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(secretPrompt)},
		Meta: map[string]any{"traceparent": traceparent(promptSpan), "tracestate": "zed=1"}}); err != nil {
		t.Fatal(err)
	}
	ups = h.fc.rec.since(from, resp.SessionId)
	var got struct {
		Meta map[string]string `json:"meta"`
	}
	if err := json.Unmarshal([]byte(toolText(ups, "c1")), &got); err != nil {
		t.Fatalf("the trace tool's result %q: %v", toolText(ups, "c1"), err)
	}
	h.closeSession(resp.SessionId)
	return got.Meta, ups
}

// A turn is one trace under the editor's prompt span: turn → model
// request, turn → tool call → MCP request; the server's start is under
// session/new's span; the MCP server is given the MCP request's span as
// its parent; and neither the prompt nor the tool's result is in any
// attribute (no opt-in). The metrics of the session are recorded.
func TestTurnTrace(t *testing.T) {
	t.Parallel()
	spans := tracetest.NewInMemoryExporter()
	reader := sdkmetric.NewManualReader()
	tel, err := telemetry.New(telemetry.Options{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans)),
		MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
	if err != nil {
		t.Fatal(err)
	}
	meta, ups := traceTurn(t, tel)

	byName := map[string]tracetest.SpanStub{}
	for _, s := range spans.GetSpans() {
		if _, dup := byName[s.Name]; !dup || s.Name != "tools/list" {
			byName[s.Name] = s
		}
		for _, a := range s.Attributes {
			if v := a.Value.String(); strings.Contains(v, "quarterly") || strings.Contains(v, editorTrace) {
				t.Errorf("span %q attribute %s = %q: content without the opt-in", s.Name, a.Key, v)
			}
		}
	}
	tree := []struct{ name, parent string }{
		{"invoke_agent acpgate", promptSpan},
		{"chat", "invoke_agent acpgate"},
		{"execute_tool mcp__alpha__trace", "invoke_agent acpgate"},
		{"tools/call trace", "execute_tool mcp__alpha__trace"},
		{"acpgate.mcp.server.start alpha", newSessionSpan},
		{"initialize", "acpgate.mcp.server.start alpha"},
	}
	for _, n := range tree {
		s, ok := byName[n.name]
		if !ok {
			t.Fatalf("no span %q; spans: %v", n.name, keys(byName))
		}
		want := n.parent
		if p, ok := byName[n.parent]; ok {
			want = p.SpanContext.SpanID().String()
		}
		if got := s.Parent.SpanID().String(); got != want || s.SpanContext.TraceID().String() != editorTrace {
			t.Errorf("%s: parent %s in trace %s, want %s (%s) in the editor's", n.name, got, s.SpanContext.TraceID(), want, n.parent)
		}
	}
	call := byName["tools/call trace"].SpanContext.SpanID().String()
	if meta["traceparent"] != traceparent(call) || meta["tracestate"] != "zed=1" {
		t.Errorf("the server got %v, want the MCP request's span %s and the editor's tracestate", meta, call)
	}
	if agentText(ups) != "done" {
		t.Errorf("the turn said %q", agentText(ups))
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			seen[m.Name] = true
		}
	}
	for _, name := range []string{telemetry.MetricToolDuration, telemetry.MetricMCPDuration, telemetry.MetricGenAIDuration, telemetry.MetricSessions, telemetry.MetricSessionsActive, telemetry.MetricServerStates} {
		if !seen[name] {
			t.Errorf("no metric %s; have %v", name, seen)
		}
	}
}

// With telemetry off the editor's trace context still reaches the MCP
// server, as it came.
func TestTurnTraceOff(t *testing.T) {
	t.Parallel()
	meta, _ := traceTurn(t, nil)
	if meta["traceparent"] != traceparent(promptSpan) || meta["tracestate"] != "zed=1" {
		t.Errorf("the server got %v, want the prompt's trace context", meta)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
