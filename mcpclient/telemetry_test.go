package mcpclient_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/acpgate/acpgate/internal/base/telemetry"
	"github.com/acpgate/acpgate/mcpclient"
)

// traceServer is an in-process server (for the tunnel) with the test
// server's trace tool: it answers with the trace context of the call's
// _meta.
func traceServer() *server.MCPServer {
	s := server.NewMCPServer("traced", "1.0.0", server.WithToolCapabilities(true))
	s.AddTool(mcp.NewTool("trace"), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		got := map[string]any{}
		if m := req.Params.Meta; m != nil {
			for _, k := range []string{"traceparent", "tracestate", "baggage"} {
				if v, ok := m.AdditionalFields[k]; ok {
					got[k] = v
				}
			}
		}
		b, _ := json.Marshal(map[string]any{"meta": got})
		return mcp.NewToolResultText(string(b)), nil
	})
	return s
}

// remoteParent is ctx with a trace context as an editor sends it: a
// remote parent with tracestate, and baggage.
func remoteParent(t *testing.T) (context.Context, trace.SpanContext) {
	t.Helper()
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ts, err := trace.ParseTraceState("editor=abc")
	if err != nil {
		t.Fatal(err)
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: true})
	m, _ := baggage.NewMemberRaw("user", "u1")
	bag, _ := baggage.New(m)
	ctx := baggage.ContextWithBaggage(trace.ContextWithRemoteSpanContext(context.Background(), sc), bag)
	return ctx, sc
}

// traced is what the trace tool answered.
type traced struct {
	Meta   map[string]string `json:"meta"`
	Header string            `json:"header"`
}

// Every request carries the trace context of its context in its _meta,
// on every transport (stdio, streamable HTTP, SSE, MCP over ACP), and to
// an HTTP server in the traceparent header: with telemetry off the
// editor's context goes on as it came; with telemetry on the request has
// a span of its own (a child of the editor's), and the server is given
// that span as its parent.
func TestRequestsCarryTraceContext(t *testing.T) {
	t.Parallel()
	specs := map[string]func(t *testing.T, opts *mcpclient.Options) mcpclient.ServerSpec{
		"stdio": func(*testing.T, *mcpclient.Options) mcpclient.ServerSpec { return stdio("s") },
		"http": func(t *testing.T, _ *mcpclient.Options) mcpclient.ServerSpec {
			return mcpclient.ServerSpec{Name: "s", Transport: mcpclient.TransportHTTP, URL: netServer(t, "http")}
		},
		"sse": func(t *testing.T, _ *mcpclient.Options) mcpclient.ServerSpec {
			return mcpclient.ServerSpec{Name: "s", Transport: mcpclient.TransportSSE, URL: netServer(t, "sse")}
		},
		"acp": func(_ *testing.T, opts *mcpclient.Options) mcpclient.ServerSpec {
			tun := newFakeTunnel()
			tun.servers["id-1"] = traceServer()
			opts.Tunnel = tun
			return acpServer("s", "id-1")
		},
	}
	for name, spec := range specs {
		for _, on := range []bool{false, true} {
			label := name + "/off"
			if on {
				label = name + "/on"
			}
			t.Run(label, func(t *testing.T) {
				t.Parallel()
				opts, _ := fastOpts(t)
				var spans *tracetest.InMemoryExporter
				if on {
					spans = tracetest.NewInMemoryExporter()
					tel, err := telemetry.New(telemetry.Options{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))})
					if err != nil {
						t.Fatal(err)
					}
					opts.Telemetry = tel
				}
				m := start(t, opts, spec(t, opts))
				mustReady(t, m, "s")
				ctx, editor := remoteParent(t)
				ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				defer cancel()
				res, err := m.CallTool(ctx, "s", "trace", map[string]any{})
				if err != nil {
					t.Fatal(err)
				}
				var got traced
				if err := json.Unmarshal([]byte(text(t, res)), &got); err != nil {
					t.Fatal(err)
				}
				parent := editor.SpanID().String()
				if on {
					call := findSpan(t, spans.GetSpans(), "tools/call trace")
					if call.Parent.SpanID() != editor.SpanID() || call.SpanContext.TraceID() != editor.TraceID() {
						t.Errorf("the request's span has parent %s in trace %s, want the editor's %s in %s", call.Parent.SpanID(), call.SpanContext.TraceID(), editor.SpanID(), editor.TraceID())
					}
					want := map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "trace", "acpgate.mcp.server": "s", "acpgate.mcp.transport": name}
					for k, v := range want {
						if a := attr(call.Attributes, k); a != v {
							t.Errorf("span attribute %s = %q, want %q", k, a, v)
						}
					}
					parent = call.SpanContext.SpanID().String()
				}
				wantTP := "00-" + editor.TraceID().String() + "-" + parent + "-01"
				if got.Meta["traceparent"] != wantTP {
					t.Errorf("_meta.traceparent = %q, want %q", got.Meta["traceparent"], wantTP)
				}
				if got.Meta["tracestate"] != "editor=abc" || got.Meta["baggage"] != "user=u1" {
					t.Errorf("_meta tracestate %q, baggage %q: want the editor's", got.Meta["tracestate"], got.Meta["baggage"])
				}
				if name == "http" && got.Header != wantTP {
					t.Errorf("traceparent header = %q, want %q", got.Header, wantTP)
				}
			})
		}
	}
}

// A request whose context has no trace context goes as it was: no
// traceparent in its _meta.
func TestRequestWithoutTraceContext(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	m := start(t, opts, stdio("s"))
	res := call(t, m, "s", "trace", map[string]any{})
	if s := text(t, res); s != `{"meta":{}}` {
		t.Errorf("trace = %s, want no trace context", s)
	}
}

func findSpan(t *testing.T, spans tracetest.SpanStubs, name string) tracetest.SpanStub {
	t.Helper()
	var names []string
	for _, s := range spans {
		if s.Name == name {
			return s
		}
		names = append(names, s.Name)
	}
	t.Fatalf("no span %q among %s", name, strings.Join(names, ", "))
	return tracetest.SpanStub{}
}

func attr(attrs []attribute.KeyValue, key string) string {
	for _, a := range attrs {
		if string(a.Key) == key {
			return a.Value.String()
		}
	}
	return ""
}
