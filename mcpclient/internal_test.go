package mcpclient

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/acpgate/acpgate/mcpclient/wire"
)

func TestJSONLinesFilter(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1}`,
		`this is not json`,
		``,
		strings.Repeat("x", 300),
		`  [1,2]`,
		`{` + strings.Repeat("y", 200) + `}`, // over max: dropped
		`{"jsonrpc":"2.0","id":2}`,
	}, "\n") // last line has no newline
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	// A one-byte reader forces every fragment path.
	gate := newLogGate(logger, nil, Unlimited, 0, time.Now)
	got, err := io.ReadAll(wire.NewJSONLines(iotest.OneByteReader(strings.NewReader(in)), 100, gate, &wire.TooLargeIDs{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	want := "{\"jsonrpc\":\"2.0\",\"id\":1}\n[1,2]\n{\"jsonrpc\":\"2.0\",\"id\":2}\n"
	if string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	for _, w := range []string{"skipped non-JSON line", "this is not json", "discarded over-long message", "bytes=203", "answered_request=false"} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("log lacks %q:\n%s", w, logs.String())
		}
	}
}

func TestTailBuffer(t *testing.T) {
	t.Parallel()
	tb := newTailBuffer(16)
	tb.Write([]byte("first line\n"))
	if got := tb.String(); got != "first line" {
		t.Fatalf("got %q", got)
	}
	for i := 0; i < 10; i++ {
		tb.Write([]byte("line number\n"))
	}
	tb.Write([]byte("last\n"))
	got := tb.String()
	if len(got) > 16 || !strings.HasSuffix(got, "last") || strings.Contains(got, "first") {
		t.Fatalf("got %q", got)
	}
}

func TestDefaultBackoff(t *testing.T) {
	t.Parallel()
	want := []time.Duration{1, 2, 4, 8, 16, 30, 30}
	for i, w := range want {
		if got := DefaultBackoff(i + 1); got != w*time.Second {
			t.Errorf("attempt %d: %v, want %v", i+1, got, w*time.Second)
		}
	}
}

func TestServerEnvBaseline(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	t.Setenv("HOME", "/home/test")
	env := serverEnv(map[string]string{"HOME": "/override", "EXTRA": "1"})
	joined := "\n" + strings.Join(env, "\n") + "\n"
	if strings.Contains(joined, "sk-secret") {
		t.Fatal("agent secret leaked into server env")
	}
	for _, w := range []string{"\nHOME=/override\n", "\nEXTRA=1\n", "\nPATH="} {
		if !strings.Contains(joined, w) {
			t.Errorf("env lacks %q: %v", w, env)
		}
	}
}
