package telemetry

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// The W3C trace context members of an ACP or MCP `_meta` object (at its
// root; MCP SEP-414, ACP's meta-propagation RFD), and the HTTP headers of
// the same names.
const (
	MetaTraceparent = "traceparent"
	MetaTracestate  = "tracestate"
	MetaBaggage     = "baggage"
)

// Bounds on what Extract takes from a peer: a traceparent is 55
// characters (version 00); W3C Trace Context bounds tracestate at 32
// members (512 characters is the size vendors are told to keep to), W3C
// Baggage bounds baggage at 8192 bytes. Longer values are ignored.
const (
	maxTraceparent = 128
	maxTracestate  = 512
	maxBaggage     = 8192
)

// propagator is W3C Trace Context and W3C Baggage (stateless: the one
// value is shared).
var propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// Extract returns ctx with the trace context of meta (an ACP or MCP
// `_meta` object: traceparent, tracestate and baggage at its root) as the
// remote parent of the spans started from it. ctx is returned as it is
// when meta carries no valid traceparent. Values that are not strings, or
// are longer than their bounds, are ignored. It works with telemetry off.
func Extract(ctx context.Context, meta map[string]any) context.Context {
	tp, ok := meta[MetaTraceparent].(string)
	if !ok || len(tp) > maxTraceparent {
		return ctx
	}
	c := propagation.MapCarrier{MetaTraceparent: tp}
	if ts, ok := meta[MetaTracestate].(string); ok && len(ts) <= maxTracestate {
		c[MetaTracestate] = ts
	}
	if b, ok := meta[MetaBaggage].(string); ok && len(b) <= maxBaggage {
		c[MetaBaggage] = b
	}
	out := propagator.Extract(ctx, c)
	if !trace.SpanContextFromContext(out).IsRemote() {
		return ctx // an invalid traceparent: nothing is taken
	}
	return out
}

// Parent is a trace context kept for later: the parent of work that starts
// after the request that carried it has been answered (a session's
// servers, its turns when a prompt carries no context of its own). The
// zero Parent is none.
type Parent struct {
	sc  trace.SpanContext
	bag baggage.Baggage
}

// ParentOf returns the trace context of ctx, to keep.
func ParentOf(ctx context.Context) Parent {
	return Parent{sc: trace.SpanContextFromContext(ctx), bag: baggage.FromContext(ctx)}
}

// Into returns ctx with p's trace context (ctx itself when p is none).
func (p Parent) Into(ctx context.Context) context.Context {
	if p.sc.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, p.sc)
	}
	if p.bag.Len() > 0 {
		ctx = baggage.ContextWithBaggage(ctx, p.bag)
	}
	return ctx
}

// Has reports whether ctx has a trace context to pass on.
func Has(ctx context.Context) bool {
	return trace.SpanContextFromContext(ctx).IsValid() || baggage.FromContext(ctx).Len() > 0
}

// MetaFields returns the trace context of ctx as `_meta` members
// (traceparent, and tracestate and baggage where set), or nil when ctx has
// none. It works with telemetry off: an incoming context is passed on.
func MetaFields(ctx context.Context) map[string]string {
	if !Has(ctx) {
		return nil
	}
	c := propagation.MapCarrier{}
	propagator.Inject(ctx, c)
	if len(c) == 0 {
		return nil
	}
	return c
}

// Transport returns base (nil: http.DefaultTransport) with the W3C trace
// context of each request's context added as the traceparent, tracestate
// and baggage headers, and each new attempt of a model request counted
// (the second and later are retry events of its span). A request whose
// context has no trace context goes as it is. The request is not
// modified: a request with headers to add is a shallow copy with its own
// header.
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return traceTransport{base: base}
}

type traceTransport struct{ base http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (t traceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if s := current(ctx); s != nil && s.kind == kindChat {
		s.attempt()
	}
	if !Has(ctx) {
		return t.base.RoundTrip(req)
	}
	r := *req
	r.Header = req.Header.Clone()
	if r.Header == nil {
		r.Header = http.Header{}
	}
	propagator.Inject(ctx, propagation.HeaderCarrier(r.Header))
	return t.base.RoundTrip(&r)
}
