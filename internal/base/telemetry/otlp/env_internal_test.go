package otlp

import (
	"errors"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func ptr[T any](v T) *T { return &v }

// The file and the OTEL_* variables resolve as docs/telemetry.md says: off
// unless enabled or an endpoint is set, the environment wins, bad values
// are errors that name the setting.
func TestResolve(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		env  map[string]string
		want settings
		err  bool
	}{
		{name: "off by default", want: settings{}},
		{name: "endpoint turns it on", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"},
			want: settings{on: true, traces: true, metrics: true, protocol: ProtocolHTTP, envURL: "http://127.0.0.1:4318", interval: time.Minute}},
		{name: "file enables", cfg: Config{Enabled: ptr(true), Endpoint: "http://c:4318/", Protocol: "grpc", Headers: map[string]string{"a": "b"}, Metrics: "none", MetricInterval: time.Second},
			want: settings{on: true, traces: true, protocol: ProtocolGRPC, endpoint: "http://c:4318", headers: map[string]string{"a": "b"}, interval: time.Second}},
		{name: "file disables over env", cfg: Config{Enabled: ptr(false)}, env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, want: settings{}},
		{name: "sdk disabled", cfg: Config{Enabled: ptr(true)}, env: map[string]string{"OTEL_SDK_DISABLED": "true"}, want: settings{}},
		{name: "env wins", cfg: Config{Enabled: ptr(true), Endpoint: "http://file:4318", Protocol: "grpc", Headers: map[string]string{"a": "b"}, Traces: "none"},
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://env:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_HEADERS": "c=d", "OTEL_TRACES_EXPORTER": "otlp", "OTEL_METRICS_EXPORTER": "none", "OTEL_METRIC_EXPORT_INTERVAL": "500"},
			want: settings{on: true, traces: true, protocol: ProtocolHTTP, envURL: "http://env:4318", interval: 500 * time.Millisecond}},
		{name: "bad protocol", cfg: Config{Enabled: ptr(true), Protocol: "carrier-pigeon"}, err: true},
		{name: "bad exporter", cfg: Config{Enabled: ptr(true)}, env: map[string]string{"OTEL_TRACES_EXPORTER": "jaeger-thrift"}, err: true},
		{name: "bad endpoint", cfg: Config{Enabled: ptr(true), Endpoint: "ftp://x"}, err: true},
		{name: "bad interval", cfg: Config{Enabled: ptr(true)}, env: map[string]string{"OTEL_METRIC_EXPORT_INTERVAL": "soon"}, err: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := resolve(c.cfg, envOf(c.env))
			if c.err {
				if !errors.Is(err, ErrSetting) {
					t.Fatalf("err = %v, want ErrSetting", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.warnings = nil
			if got.on != c.want.on || got.traces != c.want.traces || got.metrics != c.want.metrics || got.protocol != c.want.protocol ||
				got.endpoint != c.want.endpoint || got.envURL != c.want.envURL || got.interval != c.want.interval || len(got.headers) != len(c.want.headers) {
				t.Errorf("resolve = %+v, want %+v", got, c.want)
			}
		})
	}
}

// Settings that acpgate cannot follow are warnings, not errors.
func TestResolveWarnings(t *testing.T) {
	got, err := resolve(Config{}, envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_METRICS_EXPORTER": "prometheus"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.warnings) != 2 || got.protocol != ProtocolHTTP || got.metrics {
		t.Errorf("warnings %q, protocol %s, metrics %v: want two warnings, http/protobuf, no metrics", got.warnings, got.protocol, got.metrics)
	}
}
