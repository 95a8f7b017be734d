// Package telemetry is what the rest of acpgate knows of OpenTelemetry:
// the spans of the work (a prompt turn, a model request, a tool call, an
// MCP request, a sign-in, a compaction, a server start), the metrics, and
// the W3C trace context carried in and out (ACP and MCP `_meta`, HTTP
// headers). It names spans and attributes per the OpenTelemetry semantic
// conventions v1.41.0 (SemconvVersion): GenAI and MCP (names.go writes
// the keys out, so that the instrumented packages need not compile the
// conventions' package).
//
// A nil *Telemetry is telemetry off, and every method of it returns at
// once: no span is made, nothing is recorded, nothing allocates. Trace
// context is propagated all the same (Extract, MetaFields, Transport work
// on the context alone): what an editor sends goes on to the MCP servers
// and model endpoints whether or not acpgate exports anything.
//
// The exporters (OTLP over HTTP or gRPC) are package
// internal/base/telemetry/otlp's; this package imports only the
// OpenTelemetry API, so that the packages that are instrumented do not
// import the SDK.
//
// Where things are:
//
//	doc.go        this map
//	telemetry.go  Telemetry, Options, the instruments, the metrics that are not spans
//	span.go       Span and the Start functions, one per kind of work
//	propagate.go  W3C trace context in and out: Extract, MetaFields, Transport
//	names.go      the conventions' attribute keys that are recorded
package telemetry
