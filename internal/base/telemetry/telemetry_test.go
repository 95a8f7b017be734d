package telemetry_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/acpgate/acpgate/internal/base/telemetry"
)

func newTel(t *testing.T, content bool, redact func(string) string) (*telemetry.Telemetry, *tracetest.InMemoryExporter, *sdkmetric.ManualReader) {
	t.Helper()
	spans := tracetest.NewInMemoryExporter()
	reader := sdkmetric.NewManualReader()
	tel, err := telemetry.New(telemetry.Options{
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans)),
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
		Content:        content, Redact: redact, Version: "1.2.3",
	})
	if err != nil {
		t.Fatal(err)
	}
	return tel, spans, reader
}

func attrs(kv []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, a := range kv {
		m[string(a.Key)] = a.Value.String()
	}
	return m
}

const editorTP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// A turn's spans nest as the work does (turn → model request, turn →
// tool call → MCP request), under the editor's span, named and attributed
// per the GenAI and MCP conventions; each kind records its metric.
func TestSpanTree(t *testing.T) {
	tel, spans, reader := newTel(t, false, nil)
	ctx := telemetry.Extract(context.Background(), map[string]any{"traceparent": editorTP})
	ctx, turn := tel.StartTurn(ctx, "sess-1")
	cctx, chat := tel.StartChat(ctx, telemetry.Chat{Provider: "openai", Model: "gpt-test"})
	chat.Usage(cctx, 100, 20, 30, 0)
	chat.End(cctx, nil)
	tctx, tool := tel.StartTool(ctx, telemetry.Tool{Name: "mcp__s__add", CallID: "call_1", Server: "s"})
	mctx, req := tel.StartMCP(tctx, telemetry.MCPRequest{Server: "s", Transport: "stdio", Method: "tools/call", Target: "add", ProtocolVersion: "2025-11-25"})
	req.End(mctx, nil)
	tool.End(tctx, nil)
	turn.End(ctx, nil)

	byName := map[string]tracetest.SpanStub{}
	for _, s := range spans.GetSpans() {
		byName[s.Name] = s
	}
	parentOf := map[string]string{
		"invoke_agent acpgate":     "",
		"chat gpt-test":            "invoke_agent acpgate",
		"execute_tool mcp__s__add": "invoke_agent acpgate",
		"tools/call add":           "execute_tool mcp__s__add",
	}
	for name, parent := range parentOf {
		s, ok := byName[name]
		if !ok {
			t.Fatalf("no span %q among %v", name, byName)
		}
		want := "00f067aa0ba902b7" // the editor's
		if parent != "" {
			want = byName[parent].SpanContext.SpanID().String()
		}
		if got := s.Parent.SpanID().String(); got != want {
			t.Errorf("%s: parent %s, want %s (%s)", name, got, want, parent)
		}
		if s.SpanContext.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
			t.Errorf("%s: trace %s, want the editor's", name, s.SpanContext.TraceID())
		}
	}
	checks := map[string]map[string]string{
		"invoke_agent acpgate":     {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "acpgate", "gen_ai.conversation.id": "sess-1", "gen_ai.agent.version": "1.2.3"},
		"chat gpt-test":            {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-test", "gen_ai.usage.input_tokens": "130", "gen_ai.usage.output_tokens": "20", "gen_ai.usage.cache_read.input_tokens": "30"},
		"execute_tool mcp__s__add": {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "mcp__s__add", "gen_ai.tool.call.id": "call_1", "gen_ai.tool.type": "extension", "acpgate.mcp.server": "s"},
		"tools/call add":           {"mcp.method.name": "tools/call", "gen_ai.tool.name": "add", "mcp.protocol.version": "2025-11-25", "network.transport": "pipe", "gen_ai.operation.name": "execute_tool"},
	}
	for name, want := range checks {
		got := attrs(byName[name].Attributes)
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q", name, k, got[k], v)
			}
		}
	}
	if k := byName["chat gpt-test"].SpanKind; k != trace.SpanKindClient {
		t.Errorf("chat span kind %v, want client", k)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			got[m.Name] = true
		}
	}
	for _, name := range []string{telemetry.MetricTokenUsage, telemetry.MetricCachedTokens, telemetry.MetricGenAIDuration, telemetry.MetricToolDuration, telemetry.MetricMCPDuration} {
		if !got[name] {
			t.Errorf("no metric %s among %v", name, got)
		}
	}
}

// Content (prompts, answers, arguments, results) is recorded only with
// the opt-in, and redacted; so is every other string attribute and an
// error's message.
func TestContentAndRedaction(t *testing.T) {
	redact := func(s string) string { return strings.ReplaceAll(s, "sk-secret", "[REDACTED]") }
	for _, content := range []bool{false, true} {
		tel, spans, _ := newTel(t, content, redact)
		ctx, s := tel.StartTool(context.Background(), telemetry.Tool{Name: "tool-sk-secret", CallID: "1"})
		called := false
		s.SetContent("gen_ai.tool.call.arguments", func() string { called = true; return `{"key":"sk-secret"}` })
		s.End(ctx, errors.New("failed with sk-secret"))
		got := spans.GetSpans()[0]
		a := attrs(got.Attributes)
		if got.Name != "execute_tool tool-[REDACTED]" || a["gen_ai.tool.name"] != "tool-[REDACTED]" {
			t.Errorf("name %q, tool %q: want redacted", got.Name, a["gen_ai.tool.name"])
		}
		if got.Status.Code != codes.Error || got.Status.Description != "failed with [REDACTED]" {
			t.Errorf("status %+v, want the redacted error", got.Status)
		}
		args, has := a["gen_ai.tool.call.arguments"]
		switch {
		case !content && (has || called):
			t.Errorf("without the opt-in the arguments were recorded (%q) or read (%v)", args, called)
		case content && args != `{"key":"[REDACTED]"}`:
			t.Errorf("with the opt-in the arguments are %q, want them redacted", args)
		}
	}
}

// A nil Telemetry is off: every method returns at once, no span is made,
// and trace context still goes on.
func TestOff(t *testing.T) {
	var tel *telemetry.Telemetry
	ctx := telemetry.Extract(context.Background(), map[string]any{"traceparent": editorTP, "tracestate": "a=b"})
	ctx2, s := tel.StartTurn(ctx, "x")
	if s != nil || ctx2 != ctx {
		t.Fatal("a nil Telemetry made a span")
	}
	s.Usage(ctx, 1, 1, 1, 1)
	s.Set(attribute.String("a", "b"))
	s.Fail("x", "y")
	s.End(ctx, errors.New("x"))
	tel.ServerState(ctx, "s", "ready")
	tel.SessionOpened(ctx)
	tel.SessionClosed(ctx)
	tel.Cost(ctx, "m", "USD", 1)
	if got := telemetry.MetaFields(ctx); got["traceparent"] != editorTP || got["tracestate"] != "a=b" {
		t.Errorf("MetaFields = %v, want the editor's context", got)
	}
	if telemetry.MetaFields(context.Background()) != nil {
		t.Error("MetaFields of a context without trace context is not nil")
	}
	allocs := testing.AllocsPerRun(100, func() {
		c, s := tel.StartTool(ctx, telemetry.Tool{Name: "t"})
		s.End(c, nil)
	})
	if allocs != 0 {
		t.Errorf("a span with telemetry off allocates %v times", allocs)
	}
}

// What a peer sends is bounded and checked: an invalid or oversized
// traceparent, a non-string value, an oversized tracestate are ignored.
func TestExtractHostile(t *testing.T) {
	for name, meta := range map[string]map[string]any{
		"invalid":   {"traceparent": "00-zz-yy-01"},
		"zero":      {"traceparent": "00-00000000000000000000000000000000-0000000000000000-01"},
		"number":    {"traceparent": 42},
		"oversized": {"traceparent": editorTP + strings.Repeat("0", 200)},
		"none":      {},
	} {
		if ctx := telemetry.Extract(context.Background(), meta); telemetry.Has(ctx) {
			t.Errorf("%s: %v was taken as a trace context", name, meta)
		}
	}
	ctx := telemetry.Extract(context.Background(), map[string]any{"traceparent": editorTP, "tracestate": strings.Repeat("a=b,", 200)})
	if got := telemetry.MetaFields(ctx); got["traceparent"] != editorTP || got["tracestate"] != "" {
		t.Errorf("an oversized tracestate: %v, want the traceparent alone", got)
	}
}

// Transport puts the trace context in the headers (of a copy of the
// request) and makes each retry of a model request an event of its span.
func TestTransport(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	fails := 2
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, r.Header.Get("traceparent"))
		if fails > 0 {
			fails--
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	tel, spans, _ := newTel(t, false, nil)
	ctx := telemetry.Extract(context.Background(), map[string]any{"traceparent": editorTP})
	ctx, chat := tel.StartChat(ctx, telemetry.Chat{Provider: "openai", Model: "m"})
	client := &http.Client{Transport: telemetry.Transport(nil)}
	for range 3 { // the SDK's retries: the same context, three attempts
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if req.Header.Get("traceparent") != "" {
			t.Fatal("Transport changed the caller's request")
		}
	}
	chat.End(ctx, nil)
	sc := trace.SpanContextFromContext(ctx)
	want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"
	for i, h := range seen {
		if h != want {
			t.Errorf("attempt %d: traceparent %q, want %q", i+1, h, want)
		}
	}
	ev := spans.GetSpans()[0].Events
	if len(ev) != 2 || ev[0].Name != "gen_ai.request.retry" || attrs(ev[1].Attributes)["acpgate.attempt"] != "3" {
		t.Errorf("events %+v, want two retries (attempts 2 and 3)", ev)
	}
}
