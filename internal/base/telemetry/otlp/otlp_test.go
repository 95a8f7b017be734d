package otlp_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/base/telemetry"
	"github.com/acpgate/acpgate/internal/base/telemetry/otlp"
)

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func on() *bool { v := true; return &v }

// A collector that cannot be reached costs the work nothing: ending spans
// never waits for it (what does not fit the queue is dropped and counted),
// it is one warning in the log, and everything lost is counted.
func TestDeadCollector(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close() // nothing listens there now: every export is refused
	logs := &syncBuffer{}
	tel, exp, err := otlp.Setup(context.Background(), otlp.Config{Enabled: on(), Endpoint: dead, Metrics: "none"},
		otlp.Options{Getenv: func(string) string { return "" }, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	const n = 5000
	for range n {
		ctx, s := tel.StartTool(context.Background(), telemetry.Tool{Name: "t"})
		s.End(ctx, nil)
	}
	if spans, _ := exp.Dropped(); spans == 0 {
		t.Errorf("%d spans ended at once into a queue of 2048: none was dropped", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := exp.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	if spans, _ := exp.Dropped(); spans != n {
		t.Errorf("dropped %d spans, want all %d", spans, n)
	}
	if got := strings.Count(logs.String(), "the collector does not answer"); got != 1 {
		t.Errorf("%d warnings, want one:\n%s", got, logs)
	}
	if err := exp.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if err := exp.Shutdown(ctx); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
}

// Spans and metrics reach a collector over OTLP/HTTP, with the headers
// configured, at the paths of the base URL.
func TestExportHTTP(t *testing.T) {
	var mu sync.Mutex
	got := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		got[r.URL.Path] = r.Header.Get("Authorization")
		mu.Unlock()
	}))
	defer srv.Close()
	tel, exp, err := otlp.Setup(context.Background(), otlp.Config{Enabled: on(), Endpoint: srv.URL, Headers: map[string]string{"Authorization": "Bearer t0k"}},
		otlp.Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, s := tel.StartTurn(context.Background(), "s1")
	s.End(ctx, nil)
	tel.SessionOpened(ctx)
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := exp.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range []string{"/v1/traces", "/v1/metrics"} {
		if got[p] != "Bearer t0k" {
			t.Errorf("%s: Authorization %q (requests: %v)", p, got[p], got)
		}
	}
}

// Off is nil: no Telemetry, no exporters, nothing to shut down.
func TestSetupOff(t *testing.T) {
	tel, exp, err := otlp.Setup(context.Background(), otlp.Config{}, otlp.Options{Getenv: func(string) string { return "" }})
	if tel != nil || exp != nil || err != nil {
		t.Fatalf("Setup = %v, %v, %v; want all nil", tel, exp, err)
	}
	if err := exp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}
