package telemetry

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// SemconvVersion is the version of the OpenTelemetry semantic conventions
// that spans, metrics and attributes follow (the newest that has both the
// GenAI and the MCP conventions).
const SemconvVersion = "1.41.0"

// ScopeName is the instrumentation scope of every span and metric.
const ScopeName = "github.com/acpgate/acpgate"

// Options configures New.
type Options struct {
	// TracerProvider makes the spans; nil: none.
	TracerProvider trace.TracerProvider
	// MeterProvider makes the metrics; nil: none.
	MeterProvider metric.MeterProvider
	// Content opts in to prompt text, model output, tool arguments and
	// results in span attributes (Span.SetContent). Off by default.
	Content bool
	// Redact, if set, is applied to every string attribute value (names,
	// errors, content) before it is recorded. It must be safe for
	// concurrent use.
	Redact func(string) string
	// Version is acpgate's version (gen_ai.agent.version).
	Version string
}

// Telemetry records the spans and metrics of one acpgate process. A nil
// *Telemetry is telemetry off (see the package doc). Safe for concurrent
// use.
type Telemetry struct {
	tracer  trace.Tracer // nil: no spans
	content bool
	redact  func(string) string
	version string
	inst    *instruments // nil: no metrics
}

// instruments are the metrics, made once in New.
type instruments struct {
	tokens      metric.Int64Histogram   // gen_ai.client.token.usage
	cached      metric.Int64Counter     // acpgate.gen_ai.token.cached
	genaiDur    metric.Float64Histogram // gen_ai.client.operation.duration
	cost        metric.Float64Counter   // acpgate.gen_ai.cost
	mcpDur      metric.Float64Histogram // mcp.client.operation.duration
	toolDur     metric.Float64Histogram // acpgate.tool.call.duration
	states      metric.Int64Counter     // acpgate.mcp.server.state_changes
	sessions    metric.Int64Counter     // acpgate.sessions
	sessionsNow metric.Int64UpDownCounter
}

// Metric names (see docs/telemetry.md).
const (
	MetricTokenUsage     = "gen_ai.client.token.usage"
	MetricCachedTokens   = "acpgate.gen_ai.token.cached"
	MetricGenAIDuration  = "gen_ai.client.operation.duration"
	MetricCost           = "acpgate.gen_ai.cost"
	MetricMCPDuration    = "mcp.client.operation.duration"
	MetricToolDuration   = "acpgate.tool.call.duration"
	MetricServerStates   = "acpgate.mcp.server.state_changes"
	MetricSessions       = "acpgate.sessions"
	MetricSessionsActive = "acpgate.sessions.active"
)

// durationBuckets are the semantic conventions' advice for GenAI and MCP
// durations, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}

// tokenBuckets are the GenAI conventions' advice for token counts.
var tokenBuckets = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}

// New returns the Telemetry of opts, or nil (off) when opts names neither
// a tracer nor a meter provider.
func New(opts Options) (*Telemetry, error) {
	if opts.TracerProvider == nil && opts.MeterProvider == nil {
		return nil, nil
	}
	t := &Telemetry{content: opts.Content, redact: opts.Redact, version: opts.Version}
	if t.redact == nil {
		t.redact = func(s string) string { return s }
	}
	if opts.TracerProvider != nil {
		t.tracer = opts.TracerProvider.Tracer(ScopeName, trace.WithInstrumentationVersion(opts.Version), trace.WithSchemaURL(SchemaURL))
	}
	if opts.MeterProvider != nil {
		inst, err := newInstruments(opts.MeterProvider.Meter(ScopeName, metric.WithInstrumentationVersion(opts.Version), metric.WithSchemaURL(SchemaURL)))
		if err != nil {
			return nil, err
		}
		t.inst = inst
	}
	return t, nil
}

func newInstruments(m metric.Meter) (*instruments, error) {
	var i instruments
	var errs [9]error
	i.tokens, errs[0] = m.Int64Histogram(MetricTokenUsage, metric.WithUnit("{token}"),
		metric.WithDescription("Number of input and output tokens used."), metric.WithExplicitBucketBoundaries(tokenBuckets...))
	i.genaiDur, errs[1] = m.Float64Histogram(MetricGenAIDuration, metric.WithUnit("s"),
		metric.WithDescription("GenAI operation duration."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	i.cost, errs[2] = m.Float64Counter(MetricCost, metric.WithUnit("{currency}"),
		metric.WithDescription("What the model requests cost, by model and currency (where the model's pricing is configured)."))
	i.mcpDur, errs[3] = m.Float64Histogram(MetricMCPDuration, metric.WithUnit("s"),
		metric.WithDescription("The duration of the MCP request as observed on the sender from the time it was sent until the response is received."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	i.toolDur, errs[4] = m.Float64Histogram(MetricToolDuration, metric.WithUnit("s"),
		metric.WithDescription("Tool calls: how many and how long, by server and outcome."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	i.states, errs[5] = m.Int64Counter(MetricServerStates, metric.WithUnit("{change}"),
		metric.WithDescription("MCP server state changes (ready, restarting, failed, needs_auth, closed) and sign-ins."))
	i.sessions, errs[6] = m.Int64Counter(MetricSessions, metric.WithUnit("{session}"),
		metric.WithDescription("Sessions opened (new, loaded, resumed, forked)."))
	i.sessionsNow, errs[7] = m.Int64UpDownCounter(MetricSessionsActive, metric.WithUnit("{session}"),
		metric.WithDescription("Sessions open now."))
	i.cached, errs[8] = m.Int64Counter(MetricCachedTokens, metric.WithUnit("{token}"),
		metric.WithDescription("Input tokens read from (acpgate.cache=read) or written to (creation) the provider's prompt cache."))
	if err := errors.Join(errs[:]...); err != nil {
		return nil, fmt.Errorf("telemetry: instruments: %w", err)
	}
	return &i, nil
}

// Content reports whether content (prompts, output, arguments, results)
// may be recorded.
func (t *Telemetry) Content() bool { return t != nil && t.content }

// Attribute keys of acpgate's own, beside the semantic conventions'.
const (
	KeyServer      = attribute.Key("acpgate.mcp.server")       // the server's name in the session
	KeyServerState = attribute.Key("acpgate.mcp.server.state") // a state change's new state
	KeyOutcome     = attribute.Key("acpgate.outcome")          // ok, error or cancelled
	KeyCurrency    = attribute.Key("acpgate.currency")         // a cost's ISO 4217 code
	KeyAttempt     = attribute.Key("acpgate.attempt")          // a retry's attempt (2 for the first retry)
	KeyCache       = attribute.Key("acpgate.cache")            // read or creation (acpgate.gen_ai.token.cached)
	KeyTransport   = attribute.Key("acpgate.mcp.transport")    // stdio, http, sse or acp
)

// ServerState counts a state change of server (to state, e.g. "ready",
// "restarting", "failed", "needs_auth", "signed_in").
func (t *Telemetry) ServerState(ctx context.Context, server, state string) {
	if t == nil || t.inst == nil {
		return
	}
	t.inst.states.Add(ctx, 1, metric.WithAttributes(KeyServer.String(t.redact(server)), KeyServerState.String(state)))
}

// SessionOpened counts a session opened (new, loaded, resumed or forked).
func (t *Telemetry) SessionOpened(ctx context.Context) {
	if t == nil || t.inst == nil {
		return
	}
	t.inst.sessions.Add(ctx, 1)
	t.inst.sessionsNow.Add(ctx, 1)
}

// SessionClosed counts a session closed.
func (t *Telemetry) SessionClosed(ctx context.Context) {
	if t == nil || t.inst == nil {
		return
	}
	t.inst.sessionsNow.Add(ctx, -1)
}

// Cost records amount (in currency, an ISO 4217 code) spent on model.
func (t *Telemetry) Cost(ctx context.Context, model, currency string, amount float64) {
	if t == nil || t.inst == nil || amount <= 0 {
		return
	}
	t.inst.cost.Add(ctx, amount, metric.WithAttributes(KeyRequestModel.String(t.redact(model)), KeyCurrency.String(currency)))
}
