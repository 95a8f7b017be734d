package otlp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The protocols (OTEL_EXPORTER_OTLP_PROTOCOL).
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// ErrSetting is wrapped by Setup's errors: a setting that cannot be used.
var ErrSetting = errors.New("telemetry setting")

// settings are the Config and the environment, resolved.
type settings struct {
	on              bool
	traces, metrics bool
	protocol        string
	// endpoint and headers are the file's, used only where the
	// environment names none (the exporters read the environment).
	endpoint string
	envURL   string // the environment's endpoint, for the log
	headers  map[string]string
	interval time.Duration
	warnings []string
}

// resolve merges cfg with the environment (getenv).
func resolve(cfg Config, getenv func(string) string) (settings, error) {
	var s settings
	if v := getenv("OTEL_SDK_DISABLED"); strings.EqualFold(strings.TrimSpace(v), "true") {
		return s, nil
	}
	envEndpoint := firstSet(getenv, "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
	switch {
	case cfg.Enabled != nil:
		s.on = *cfg.Enabled
	default:
		s.on = envEndpoint != ""
	}
	if !s.on {
		return s, nil
	}
	var err error
	if s.traces, err = exporterOn("OTEL_TRACES_EXPORTER", getenv("OTEL_TRACES_EXPORTER"), cfg.Traces, &s.warnings); err != nil {
		return s, err
	}
	if s.metrics, err = exporterOn("OTEL_METRICS_EXPORTER", getenv("OTEL_METRICS_EXPORTER"), cfg.Metrics, &s.warnings); err != nil {
		return s, err
	}
	s.protocol = firstSet(getenv, "OTEL_EXPORTER_OTLP_PROTOCOL")
	if s.protocol == "" {
		s.protocol = cfg.Protocol
	}
	switch s.protocol {
	case "", ProtocolHTTP:
		s.protocol = ProtocolHTTP
	case ProtocolGRPC:
	case "http/json":
		s.warnings = append(s.warnings, "protocol http/json is not supported; using http/protobuf")
		s.protocol = ProtocolHTTP
	default:
		return s, fmt.Errorf("%w: protocol %q: want %s or %s", ErrSetting, s.protocol, ProtocolHTTP, ProtocolGRPC)
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"} {
		if v := getenv(k); v != "" && v != s.protocol {
			s.warnings = append(s.warnings, k+" is not supported (one protocol for both signals): OTEL_EXPORTER_OTLP_PROTOCOL or the file's protocol is used")
		}
	}
	s.envURL = envEndpoint
	if envEndpoint == "" && cfg.Endpoint != "" {
		u, err := url.Parse(cfg.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return s, fmt.Errorf("%w: endpoint %q: want an http:// or https:// URL", ErrSetting, cfg.Endpoint)
		}
		s.endpoint = strings.TrimSuffix(cfg.Endpoint, "/")
	}
	if firstSet(getenv, "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS") == "" {
		s.headers = cfg.Headers
	}
	s.interval = cfg.MetricInterval
	if v := getenv("OTEL_METRIC_EXPORT_INTERVAL"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return s, fmt.Errorf("%w: OTEL_METRIC_EXPORT_INTERVAL=%q: want milliseconds", ErrSetting, v)
		}
		s.interval = time.Duration(ms) * time.Millisecond
	}
	if s.interval <= 0 {
		s.interval = time.Minute
	}
	return s, nil
}

// exporterOn reads OTEL_TRACES_EXPORTER or OTEL_METRICS_EXPORTER (env,
// which wins) or the file's value: "otlp" (the default) or "none".
func exporterOn(name, env, file string, warnings *[]string) (bool, error) {
	v, from := env, name
	if v == "" {
		v, from = file, "the file's "+strings.ToLower(strings.TrimPrefix(strings.TrimSuffix(name, "_EXPORTER"), "OTEL_"))
	}
	if v == "" {
		return true, nil
	}
	on := false
	for _, e := range strings.Split(v, ",") {
		switch e = strings.TrimSpace(e); e {
		case "otlp":
			on = true
		case "none":
		case "console", "logging", "prometheus", "zipkin":
			*warnings = append(*warnings, fmt.Sprintf("%s: exporter %q is not supported (otlp or none)", from, e))
		default:
			return false, fmt.Errorf("%w: %s=%q: want otlp or none", ErrSetting, from, v)
		}
	}
	return on, nil
}

func firstSet(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if v := getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// endpointName is the endpoint in use, for the log.
func (s settings) endpointName() string {
	switch {
	case s.envURL != "":
		return s.envURL
	case s.endpoint != "":
		return s.endpoint
	case s.protocol == ProtocolGRPC:
		return "http://localhost:4317"
	}
	return "http://localhost:4318"
}

// Retries: the exporters retry a failed export, but within a bound that
// keeps the queue moving (a dead collector drops spans, it does not
// hold them).
const (
	retryFirst   = 500 * time.Millisecond
	retryMax     = 2 * time.Second
	retryElapsed = 5 * time.Second
	sendTimeout  = 5 * time.Second
)

func (s settings) spanExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	if s.protocol == ProtocolGRPC {
		o := []otlptracegrpc.Option{otlptracegrpc.WithTimeout(sendTimeout),
			otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: true, InitialInterval: retryFirst, MaxInterval: retryMax, MaxElapsedTime: retryElapsed})}
		if s.endpoint != "" {
			o = append(o, otlptracegrpc.WithEndpointURL(s.endpoint))
		}
		if s.headers != nil {
			o = append(o, otlptracegrpc.WithHeaders(s.headers))
		}
		return otlptracegrpc.New(ctx, o...)
	}
	o := []otlptracehttp.Option{otlptracehttp.WithTimeout(sendTimeout),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: retryFirst, MaxInterval: retryMax, MaxElapsedTime: retryElapsed})}
	if s.endpoint != "" {
		o = append(o, otlptracehttp.WithEndpointURL(s.endpoint+"/v1/traces"))
	}
	if s.headers != nil {
		o = append(o, otlptracehttp.WithHeaders(s.headers))
	}
	return otlptracehttp.New(ctx, o...)
}

func (s settings) metricExporter(ctx context.Context) (sdkmetric.Exporter, error) {
	if s.protocol == ProtocolGRPC {
		o := []otlpmetricgrpc.Option{otlpmetricgrpc.WithTimeout(sendTimeout),
			otlpmetricgrpc.WithRetry(otlpmetricgrpc.RetryConfig{Enabled: true, InitialInterval: retryFirst, MaxInterval: retryMax, MaxElapsedTime: retryElapsed})}
		if s.endpoint != "" {
			o = append(o, otlpmetricgrpc.WithEndpointURL(s.endpoint))
		}
		if s.headers != nil {
			o = append(o, otlpmetricgrpc.WithHeaders(s.headers))
		}
		return otlpmetricgrpc.New(ctx, o...)
	}
	o := []otlpmetrichttp.Option{otlpmetrichttp.WithTimeout(sendTimeout),
		otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: true, InitialInterval: retryFirst, MaxInterval: retryMax, MaxElapsedTime: retryElapsed})}
	if s.endpoint != "" {
		o = append(o, otlpmetrichttp.WithEndpointURL(s.endpoint+"/v1/metrics"))
	}
	if s.headers != nil {
		o = append(o, otlpmetrichttp.WithHeaders(s.headers))
	}
	return otlpmetrichttp.New(ctx, o...)
}
