package telemetry

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// AgentName is gen_ai.agent.name, and the turn span's name's target.
const AgentName = "acpgate"

// Span names that are not made of a target (see docs/telemetry.md).
const (
	SpanTurn        = "invoke_agent " + AgentName
	SpanCompaction  = "acpgate.compaction"
	SpanSignIn      = "acpgate.sign_in"          // + " {server}"
	SpanServerStart = "acpgate.mcp.server.start" // + " {server}"
)

// Outcomes (KeyOutcome).
const (
	OutcomeOK        = "ok"
	OutcomeError     = "error"
	OutcomeCancelled = "cancelled"
)

// kind says which metric a span records when it ends.
type kind uint8

const (
	kindPlain kind = iota // no duration metric
	kindChat              // gen_ai.client.operation.duration
	kindTool              // acpgate.tool.call.duration
	kindMCP               // mcp.client.operation.duration
)

// Span is one piece of work being recorded: a trace span, and the
// duration metric of its kind. The methods of a nil *Span do nothing; End
// must be called once, from the goroutine that started it or after every
// other method's call has returned.
type Span struct {
	t       *Telemetry
	span    trace.Span // nil: no tracer
	start   time.Time
	kind    kind
	metric  []attribute.KeyValue // the duration metric's attributes
	errType string               // error.type, once the work failed
	retries atomic.Int32         // HTTP attempts so far (Transport)
}

// start makes a span named name with attrs; metricAttrs are also the
// duration metric's (when k has one).
func (t *Telemetry) start(ctx context.Context, name string, sk trace.SpanKind, k kind, attrs, metricAttrs []attribute.KeyValue) (context.Context, *Span) {
	s := &Span{t: t, start: time.Now(), kind: k, metric: metricAttrs}
	if t.tracer != nil {
		all := make([]attribute.KeyValue, 0, len(attrs)+len(metricAttrs))
		ctx, s.span = t.tracer.Start(ctx, name, trace.WithSpanKind(sk), trace.WithAttributes(append(append(all, metricAttrs...), attrs...)...))
	}
	return context.WithValue(ctx, spanKey{}, s), s
}

type spanKey struct{}

// current is the Span of ctx's innermost piece of work started here, or
// nil.
func current(ctx context.Context) *Span {
	s, _ := ctx.Value(spanKey{}).(*Span)
	return s
}

// StartTurn starts the span of one prompt turn of the session sessionID
// (invoke_agent acpgate). Its parent is ctx's span: the editor's, when
// the request carried a trace context (Extract).
func (t *Telemetry) StartTurn(ctx context.Context, sessionID string) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	return t.start(ctx, SpanTurn, trace.SpanKindInternal, kindPlain, []attribute.KeyValue{
		KeyOperationName.String("invoke_agent"), KeyAgentName.String(AgentName), KeyAgentVersion.String(t.version),
		KeyConversationID.String(t.redact(sessionID)),
	}, nil)
}

// Chat names a model request: the provider (gen_ai.provider.name:
// "openai", "anthropic") and the model requested.
type Chat struct {
	Provider, Model string
}

// StartChat starts the span of one model request (chat {model}). Retries
// of its HTTP request (Transport) are events of the span.
func (t *Telemetry) StartChat(ctx context.Context, c Chat) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	model := t.redact(c.Model)
	name := "chat"
	if model != "" {
		name += " " + model
	}
	return t.start(ctx, name, trace.SpanKindClient, kindChat, nil, []attribute.KeyValue{
		KeyOperationName.String("chat"), KeyProviderName.String(c.Provider), KeyRequestModel.String(model),
	})
}

// Tool names a tool call: the tool (as the model calls it), the call's id
// and, for a server's tool, the server.
type Tool struct {
	Name, CallID, Server string
}

// StartTool starts the span of one tool call (execute_tool {tool}).
func (t *Telemetry) StartTool(ctx context.Context, c Tool) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	typ := "function"
	if c.Server != "" {
		typ = "extension"
	}
	name := t.redact(c.Name)
	return t.start(ctx, "execute_tool "+name, trace.SpanKindInternal, kindTool,
		[]attribute.KeyValue{KeyOperationName.String("execute_tool"), KeyToolCallID.String(t.redact(c.CallID)), KeyToolType.String(typ)},
		[]attribute.KeyValue{KeyToolName.String(name), KeyServer.String(t.redact(c.Server))})
}

// MCPRequest names an MCP request: the server (its name in the session)
// and transport ("stdio", "http", "sse", "acp"), the method, its target (the
// tool of tools/call, the prompt of prompts/get, the resource of
// resources/read; "" for none), the server's MCP session id and the
// protocol revision, where known.
type MCPRequest struct {
	Server, Transport, Method, Target, SessionID, ProtocolVersion string
}

// StartMCP starts the span of one MCP request ({mcp.method.name}
// {target}).
func (t *Telemetry) StartMCP(ctx context.Context, r MCPRequest) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	name := r.Method
	target := t.redact(r.Target)
	metricAttrs := []attribute.KeyValue{KeyMCPMethodName.String(r.Method), KeyServer.String(t.redact(r.Server)), KeyTransport.String(r.Transport), networkTransport(r.Transport)}
	if r.ProtocolVersion != "" {
		metricAttrs = append(metricAttrs, KeyMCPProtocolVersion.String(r.ProtocolVersion))
	}
	var attrs []attribute.KeyValue
	if target != "" {
		name += " " + target
		switch r.Method {
		case "tools/call":
			metricAttrs = append(metricAttrs, KeyToolName.String(target))
			attrs = append(attrs, KeyOperationName.String("execute_tool"))
		case "prompts/get":
			metricAttrs = append(metricAttrs, KeyPromptName.String(target))
		case "resources/read", "resources/subscribe", "resources/unsubscribe":
			attrs = append(attrs, KeyMCPResourceURI.String(target))
		}
	}
	if r.SessionID != "" {
		attrs = append(attrs, KeyMCPSessionID.String(t.redact(r.SessionID)))
	}
	return t.start(ctx, name, trace.SpanKindClient, kindMCP, attrs, metricAttrs)
}

// networkTransport is network.transport for an MCP transport: pipe for
// stdio and MCP over ACP (the editor's pipe), tcp for HTTP.
func networkTransport(tr string) attribute.KeyValue {
	switch tr {
	case "stdio", "acp":
		return KeyNetworkTransport.String("pipe")
	}
	return KeyNetworkTransport.String("tcp")
}

// StartSignIn starts the span of a sign-in to server.
func (t *Telemetry) StartSignIn(ctx context.Context, server string) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	srv := t.redact(server)
	return t.start(ctx, SpanSignIn+" "+srv, trace.SpanKindInternal, kindPlain, []attribute.KeyValue{KeyServer.String(srv)}, nil)
}

// StartServer starts the span of one start of a server (the connection and
// the handshake; a restart is a start).
func (t *Telemetry) StartServer(ctx context.Context, server, transport string) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	srv := t.redact(server)
	return t.start(ctx, SpanServerStart+" "+srv, trace.SpanKindInternal, kindPlain, []attribute.KeyValue{KeyServer.String(srv), KeyTransport.String(transport)}, nil)
}

// StartCompaction starts the span of a compaction of the conversation.
func (t *Telemetry) StartCompaction(ctx context.Context) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	return t.start(ctx, SpanCompaction, trace.SpanKindInternal, kindPlain, nil, nil)
}

// Set adds attrs to the span (string values are redacted).
func (s *Span) Set(attrs ...attribute.KeyValue) {
	if s == nil || s.span == nil {
		return
	}
	for i, a := range attrs {
		if a.Value.Type() == attribute.STRING {
			attrs[i] = a.Key.String(s.t.redact(a.Value.AsString()))
		}
	}
	s.span.SetAttributes(attrs...)
}

// SetContent records value (a prompt, an answer, a tool's arguments or
// result) as the attribute key, redacted, but only when Options.Content
// opted in; value is called only then.
func (s *Span) SetContent(key attribute.Key, value func() string) {
	if s == nil || s.span == nil || !s.t.content {
		return
	}
	s.span.SetAttributes(key.String(s.t.redact(value())))
}

// Fail marks the work failed without ending it: errType is error.type (a
// JSON-RPC error code, "tool_error"), msg the status description.
func (s *Span) Fail(errType, msg string) {
	if s == nil {
		return
	}
	s.errType = errType
	if s.span != nil {
		s.span.SetStatus(codes.Error, s.t.redact(msg))
	}
}

// Usage records a model request's tokens: on the span, and in the token
// usage metrics (input counts every input token, cached ones included, as
// the conventions define it).
func (s *Span) Usage(ctx context.Context, input, output, cacheRead, cacheWrite int) {
	if s == nil {
		return
	}
	all := input + cacheRead + cacheWrite
	if s.span != nil {
		s.span.SetAttributes(KeyUsageInputTokens.Int(all), KeyUsageOutputTokens.Int(output),
			KeyUsageCacheReadTokens.Int(cacheRead), KeyUsageCacheCreationTokens.Int(cacheWrite))
	}
	if s.t.inst == nil {
		return
	}
	in := metric.WithAttributes(append(s.metric[:len(s.metric):len(s.metric)], KeyTokenType.String("input"))...)
	out := metric.WithAttributes(append(s.metric[:len(s.metric):len(s.metric)], KeyTokenType.String("output"))...)
	s.t.inst.tokens.Record(ctx, int64(all), in)
	s.t.inst.tokens.Record(ctx, int64(output), out)
	if cacheRead > 0 {
		s.t.inst.cached.Add(ctx, int64(cacheRead), metric.WithAttributes(append(s.metric[:len(s.metric):len(s.metric)], KeyCache.String("read"))...))
	}
	if cacheWrite > 0 {
		s.t.inst.cached.Add(ctx, int64(cacheWrite), metric.WithAttributes(append(s.metric[:len(s.metric):len(s.metric)], KeyCache.String("creation"))...))
	}
}

// retry records that the span's HTTP request is being sent again (attempt
// 2 is the first retry), after status (0: no answer).
func (s *Span) attempt() {
	if s == nil {
		return
	}
	n := s.retries.Add(1)
	if n > 1 && s.span != nil {
		s.span.AddEvent("gen_ai.request.retry", trace.WithAttributes(KeyAttempt.Int(int(n))))
	}
}

// End ends the span: err, if not nil, fails it (error.type "cancelled" for a
// cancelled context, else what Fail set, else "_OTHER"), and the duration
// metric of its kind is recorded with the outcome.
func (s *Span) End(ctx context.Context, err error) {
	if s == nil {
		return
	}
	outcome := OutcomeOK
	switch {
	case err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		outcome, s.errType = OutcomeCancelled, "cancelled"
		if errors.Is(err, context.DeadlineExceeded) {
			s.errType = "timeout"
		}
	case err != nil:
		outcome = OutcomeError
		if s.errType == "" {
			s.errType = "_OTHER"
		}
	case s.errType != "":
		outcome = OutcomeError
	}
	if s.span != nil {
		if err != nil {
			s.span.SetStatus(codes.Error, s.t.redact(err.Error()))
		}
		if s.errType != "" {
			s.span.SetAttributes(KeyErrorType.String(s.errType))
		}
		s.span.End()
	}
	s.record(ctx, outcome)
}

// record records the duration metric of the span's kind.
func (s *Span) record(ctx context.Context, outcome string) {
	inst := s.t.inst
	if inst == nil || s.kind == kindPlain {
		return
	}
	d := time.Since(s.start).Seconds()
	attrs := s.metric[:len(s.metric):len(s.metric)]
	if s.errType != "" {
		attrs = append(attrs, KeyErrorType.String(s.errType))
	}
	switch s.kind {
	case kindChat:
		inst.genaiDur.Record(ctx, d, metric.WithAttributes(attrs...))
	case kindMCP:
		inst.mcpDur.Record(ctx, d, metric.WithAttributes(attrs...))
	case kindTool:
		inst.toolDur.Record(ctx, d, metric.WithAttributes(append(attrs, KeyOutcome.String(outcome))...))
	}
}

// JSONRPCErrorType is error.type for a JSON-RPC error code, as the MCP
// conventions write it.
func JSONRPCErrorType(code int) string { return strconv.Itoa(code) }
