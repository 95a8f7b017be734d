package main

import (
	"slices"
	"testing"
)

// The commands run_command runs get acpgate's environment without the
// models' API keys and without any OTEL_* variable.
func TestCommandEnvDropsTelemetry(t *testing.T) {
	env := []string{"PATH=/bin", "OTEL_EXPORTER_OTLP_ENDPOINT=http://c", "OTEL_EXPORTER_OTLP_HEADERS=a=b", "OPENAI_API_KEY=k", "HOTEL_X=kept"}
	got := commandEnv(env)
	if want := []string{"PATH=/bin", "HOTEL_X=kept"}; !slices.Equal(got, want) {
		t.Errorf("commandEnv = %q, want %q", got, want)
	}
}
