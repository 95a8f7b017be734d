// Package otlp turns telemetry on: it reads the configuration (acpgate's
// file and the standard OTEL_* environment variables), makes the
// OpenTelemetry SDK's tracer and meter providers with OTLP exporters over
// HTTP or gRPC, and returns the [telemetry.Telemetry] the rest of acpgate
// records with. Export never blocks a turn (a bounded queue; what does not
// fit is dropped and counted) and a collector that cannot be reached is
// one warning in the log, not a failure.
//
// Where things are:
//
//	otlp.go      Config, Setup, Exporters: the providers and their shutdown
//	env.go       what the OTEL_* variables say, merged with the file's settings
//	exporter.go  the exporters' wrappers: failures counted and warned of once
//	queue.go     the span processor: a bounded queue, batches, drops counted
package otlp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/acpgate/acpgate/internal/base/telemetry"
)

// Config is what acpgate's configuration file says of telemetry (its
// "telemetry" block); the environment's OTEL_* variables win over it.
type Config struct {
	// Enabled turns telemetry on (true) or off (false) whatever the
	// environment says; nil: on when an OTEL_EXPORTER_OTLP_*ENDPOINT
	// variable is set (and OTEL_SDK_DISABLED is not true).
	Enabled *bool
	// Endpoint is the collector's base URL (for http/protobuf, /v1/traces
	// and /v1/metrics are added); default http://localhost:4318, or
	// http://localhost:4317 for grpc.
	Endpoint string
	// Protocol is "http/protobuf" (default) or "grpc".
	Protocol string
	// Headers are sent with every export (values are secrets).
	Headers map[string]string
	// ServiceName is service.name (default "acpgate").
	ServiceName string
	// ResourceAttributes are added to the resource.
	ResourceAttributes map[string]string
	// Traces and Metrics are "otlp" (default) or "none".
	Traces, Metrics string
	// LogContent opts in to prompts, answers, tool arguments and results
	// in span attributes.
	LogContent bool
	// MetricInterval is how often metrics are exported (default 60 s, or
	// OTEL_METRIC_EXPORT_INTERVAL).
	MetricInterval time.Duration
}

// Options are Setup's inputs beside the Config.
type Options struct {
	// Getenv reads the environment (os.Getenv).
	Getenv func(string) string
	// Logger gets the warnings (a collector unreachable, settings not
	// supported). Default: discard.
	Logger *slog.Logger
	// Redact is applied to every string attribute (telemetry.Options).
	Redact func(string) string
	// Version is acpgate's (service.version).
	Version string
}

// Exporters are the providers Setup made. Shutdown is idempotent.
type Exporters struct {
	traces  *sdktrace.TracerProvider // nil: none
	metrics *sdkmetric.MeterProvider // nil: none
	queue   *queue
	health  *health
}

// Dropped returns how many spans were dropped so far (the queue full, or
// their export failed) and how many metric exports failed.
func (e *Exporters) Dropped() (spans, metricExports int64) {
	if e == nil {
		return 0, 0
	}
	spans = e.health.spansLost.Load()
	if e.queue != nil {
		spans += e.queue.dropped.Load()
	}
	return spans, e.health.metricsLost.Load()
}

// ForceFlush exports what is pending, within ctx.
func (e *Exporters) ForceFlush(ctx context.Context) error {
	if e == nil {
		return nil
	}
	var errs []error
	if e.traces != nil {
		errs = append(errs, e.traces.ForceFlush(ctx))
	}
	if e.metrics != nil {
		errs = append(errs, e.metrics.ForceFlush(ctx))
	}
	return errors.Join(errs...)
}

// Shutdown exports what is pending and stops the exporters, within ctx
// (an unreachable collector costs at most ctx's deadline).
func (e *Exporters) Shutdown(ctx context.Context) error {
	if e == nil {
		return nil
	}
	var errs []error
	if e.traces != nil {
		errs = append(errs, e.traces.Shutdown(ctx))
	}
	if e.metrics != nil {
		errs = append(errs, e.metrics.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// Setup returns the Telemetry that cfg and the environment ask for, and
// its exporters; both are nil when telemetry is off. An error means a
// setting is wrong (it names it); an unreachable collector is not one.
func Setup(ctx context.Context, cfg Config, opts Options) (*telemetry.Telemetry, *Exporters, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s, err := resolve(cfg, opts.Getenv)
	if err != nil || !s.on {
		return nil, nil, err
	}
	for _, w := range s.warnings {
		opts.Logger.Warn("telemetry: " + w)
	}
	res, err := newResource(ctx, cfg, opts)
	if err != nil {
		return nil, nil, err
	}
	e := &Exporters{health: &health{logger: opts.Logger, endpoint: s.endpointName()}}
	topts := telemetry.Options{Content: cfg.LogContent, Redact: opts.Redact, Version: opts.Version}
	if s.traces {
		exp, err := s.spanExporter(ctx)
		if err != nil {
			return nil, nil, err
		}
		e.queue = newQueue(spanExporter{SpanExporter: exp, h: e.health})
		e.traces = sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSpanProcessor(e.queue))
		topts.TracerProvider = e.traces
	}
	if s.metrics {
		exp, err := s.metricExporter(ctx)
		if err != nil {
			_ = e.Shutdown(ctx)
			return nil, nil, err
		}
		reader := sdkmetric.NewPeriodicReader(metricExporter{Exporter: exp, h: e.health}, sdkmetric.WithInterval(s.interval))
		e.metrics = sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(reader))
		topts.MeterProvider = e.metrics
	}
	t, err := telemetry.New(topts)
	if err != nil {
		_ = e.Shutdown(ctx)
		return nil, nil, err
	}
	opts.Logger.Info("telemetry on", "endpoint", s.endpointName(), "protocol", s.protocol, "traces", s.traces, "metrics", s.metrics, "content", cfg.LogContent)
	return t, e, nil
}

// newResource is the service's resource: service.name and version, the
// file's attributes, then OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
// (which win).
func newResource(ctx context.Context, cfg Config, opts Options) (*resource.Resource, error) {
	name := cfg.ServiceName
	if name == "" {
		name = telemetry.AgentName
	}
	attrs := []attribute.KeyValue{semconv.ServiceName(name), semconv.ServiceVersion(opts.Version)}
	for _, k := range slices.Sorted(maps.Keys(cfg.ResourceAttributes)) {
		attrs = append(attrs, attribute.String(k, cfg.ResourceAttributes[k]))
	}
	fromFile := resource.NewWithAttributes(semconv.SchemaURL, attrs...)
	fromEnv, err := resource.New(ctx, resource.WithFromEnv())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("telemetry: OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	res, err := resource.Merge(fromFile, fromEnv)
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	return res, nil
}
