//go:build !notelemetry

package main

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/acpgate/acpgate/internal/base/telemetry"
	"github.com/acpgate/acpgate/internal/base/telemetry/otlp"
	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/internal/inputs/secrets"
)

// This file is the one place the binary builds the OpenTelemetry SDK and
// its OTLP exporters in (gRPC and protobuf with them): a build with the
// notelemetry tag (make demo's) leaves it out for telemetry_off.go, since
// the demo exports nothing and they would be half again its first build
// (docs/benchmarks.md). The instrumented packages import only the API.

// telemetryShutdown bounds the export of what is pending when acpgate
// exits: an unreachable collector delays the exit by at most this.
const telemetryShutdown = 3 * time.Second

// startTelemetry turns telemetry on as the file's "telemetry" object and
// the OTEL_* environment say (docs/telemetry.md): nil and a no-op stop
// when it is off, or when a setting is wrong (logged: acpgate runs
// without). The headers' values are secrets: resolved here and redacted
// from the logs like every other secret (so are the OTEL_EXPORTER_OTLP_*
// HEADERS variables'), and every exported string attribute is redacted.
func startTelemetry(ctx context.Context, file config.Telemetry, res *secrets.Resolver, red *secrets.Redactor, logger *slog.Logger) (*telemetry.Telemetry, func()) {
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS"} {
		for _, kv := range strings.Split(os.Getenv(name), ",") {
			if _, v, ok := strings.Cut(kv, "="); ok {
				red.Register(strings.TrimSpace(v))
			}
		}
	}
	headers, err := res.ResolveMap(ctx, file.Headers)
	if err != nil {
		logger.Error("telemetry off: telemetry.headers", "err", err)
		return nil, func() {}
	}
	for _, v := range headers {
		red.Register(v)
	}
	if len(headers) == 0 {
		headers = nil
	}
	cfg := otlp.Config{
		Enabled: file.Enabled, Endpoint: file.Endpoint, Protocol: file.Protocol, Headers: headers,
		ServiceName: file.ServiceName, ResourceAttributes: file.ResourceAttributes,
		Traces: file.Traces, Metrics: file.Metrics, LogContent: file.LogContent,
		MetricInterval: time.Duration(file.MetricInterval) * time.Millisecond,
	}
	tel, exp, err := otlp.Setup(ctx, cfg, otlp.Options{Getenv: os.Getenv, Logger: logger, Redact: red.Redact, Version: version})
	if err != nil {
		logger.Error("telemetry off", "err", err)
		return nil, func() {}
	}
	return tel, func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), telemetryShutdown)
		defer cancel()
		if err := exp.Shutdown(ctx); err != nil {
			logger.Warn("telemetry: not everything was exported at exit", "err", err)
		}
		if spans, metrics := exp.Dropped(); spans > 0 || metrics > 0 {
			logger.Warn("telemetry: dropped", "spans", spans, "metric_exports", metrics)
		}
	}
}
