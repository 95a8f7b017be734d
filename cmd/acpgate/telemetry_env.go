package main

import "os"

// telemetryAsked reports whether the environment asks for telemetry
// export (an OTLP endpoint is set), whatever the build.
func telemetryAsked() bool {
	for _, name := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"} {
		if os.Getenv(name) != "" {
			return true
		}
	}
	return false
}
