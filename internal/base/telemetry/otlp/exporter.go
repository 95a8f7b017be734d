package otlp

import (
	"context"
	"log/slog"
	"sync/atomic"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// health counts what the exporters lost and warns once when the collector
// stops answering (and says when it answers again); the exporters' errors
// go nowhere else (not to OpenTelemetry's global error handler). Safe for
// concurrent use.
type health struct {
	logger      *slog.Logger
	endpoint    string
	failing     atomic.Bool
	spansLost   atomic.Int64
	metricsLost atomic.Int64
}

func (h *health) report(signal string, err error) {
	if err == nil {
		if h.failing.CompareAndSwap(true, false) {
			h.logger.Info("telemetry: the collector answers again", "endpoint", h.endpoint)
		}
		return
	}
	if h.failing.CompareAndSwap(false, true) {
		h.logger.Warn("telemetry: the collector does not answer; spans and metrics are dropped until it does", "endpoint", h.endpoint, "signal", signal, "err", err)
		return
	}
	h.logger.Debug("telemetry: export failed", "signal", signal, "err", err)
}

// spanExporter reports the exports of the exporter it wraps to h; a
// failed export is dropped (and counted), not returned.
type spanExporter struct {
	sdktrace.SpanExporter
	h *health
}

// ExportSpans implements sdktrace.SpanExporter.
func (e spanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.SpanExporter.ExportSpans(ctx, spans)
	if err != nil {
		e.h.spansLost.Add(int64(len(spans)))
	}
	e.h.report("traces", err)
	return nil
}

// metricExporter is spanExporter for metrics.
type metricExporter struct {
	sdkmetric.Exporter
	h *health
}

// Export implements sdkmetric.Exporter.
func (e metricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	err := e.Exporter.Export(ctx, rm)
	if err != nil {
		e.h.metricsLost.Add(1)
	}
	e.h.report("metrics", err)
	return nil
}
