//go:build notelemetry

package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/acpgate/acpgate/internal/base/telemetry"
	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/internal/inputs/secrets"
)

// This file stands in for telemetry.go in a build with the notelemetry
// tag (make demo's): no exporter is built in, so telemetry is off, with a
// warning when the file or the environment asks for it. Trace context is
// still passed on (package telemetry needs no exporter for that).

// startTelemetry warns when telemetry is asked for: this build cannot
// export it.
func startTelemetry(_ context.Context, file config.Telemetry, _ *secrets.Resolver, _ *secrets.Redactor, logger *slog.Logger) (*telemetry.Telemetry, func()) {
	if (file.Enabled != nil && *file.Enabled) || telemetryAsked() {
		logger.Warn("telemetry off: built without the OTLP exporters (the notelemetry tag, make demo's build); make build builds them")
	}
	return nil, func() {}
}

// telemetryAsked reports whether the environment asks for telemetry
// export (an OTLP endpoint is set).
func telemetryAsked() bool {
	for _, name := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"} {
		if os.Getenv(name) != "" {
			return true
		}
	}
	return false
}
