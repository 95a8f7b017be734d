package secrets_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/acpgate/acpgate/internal/inputs/secrets"
)

func newRedactor(t testing.TB, values ...string) *secrets.Redactor {
	t.Helper()
	r := secrets.NewRedactor()
	if n := r.Add(values...); n != 0 {
		t.Fatalf("Add(%q) ignored %d values", values, n)
	}
	return r
}

func TestRedact(t *testing.T) {
	tests := []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		{"none registered", nil, "nothing to see", "nothing to see"},
		{"no match", []string{"hunter22"}, "nothing to see", "nothing to see"},
		{"empty input", []string{"hunter22"}, "", ""},
		{"whole", []string{"hunter22"}, "hunter22", "[REDACTED]"},
		{"every occurrence", []string{"hunter22"}, "a hunter22 b hunter22", "a [REDACTED] b [REDACTED]"},
		{"at both ends", []string{"hunter22"}, "hunter22 and hunter22", "[REDACTED] and [REDACTED]"},
		{"longest first", []string{"abcd", "abcdefgh"}, "abcdefgh abcd", "[REDACTED] [REDACTED]"},
		{"nested inside", []string{"cdef", "abcdefgh"}, "xabcdefghx cdef", "x[REDACTED]x [REDACTED]"},
		{"overlapping values", []string{"xabcd", "cdefg"}, "..xabcdefg..", "..[REDACTED].."},
		{"self overlap", []string{"abab"}, "ababab", "[REDACTED]"},
		{"adjacent values", []string{"1234", "5678"}, "12345678", "[REDACTED][REDACTED]"},
		{"non-ASCII", []string{"pässwörd"}, "pw=pässwörd;", "pw=[REDACTED];"},
		{"multi-line", []string{"line one\nline two"}, "key:\nline one\nline two\n", "key:\n[REDACTED]\n"},
		{"JSON-escaped in text", []string{`a"b\c`}, `body: {"k":"a\"b\\c"}`, `body: {"k":"[REDACTED]"}`},
		{"4-byte value", []string{"abcd"}, "xabcdx abc", "x[REDACTED]x abc"},
		{"prefix only", []string{"hunter22"}, "hunter2", "hunter2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRedactor(t, tt.secrets...)
			if got := r.Redact(tt.in); got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := string(r.RedactBytes([]byte(tt.in))); got != tt.want {
				t.Errorf("RedactBytes(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestAddIgnoresShortValues(t *testing.T) {
	tests := []struct {
		values      []string
		wantIgnored int
		text, want  string
	}{
		{[]string{"abc"}, 1, "abc", "abc"},
		{[]string{""}, 1, "", ""},
		{[]string{"abcd"}, 0, "abcd", "[REDACTED]"},
		{[]string{"ab", "", "abcd", "abcd"}, 2, "ab abcd", "ab [REDACTED]"},
		{[]string{"é1"}, 1, "é1", "é1"}, // 3 bytes
		{[]string{"éé"}, 0, "éé", "[REDACTED]"},
		{nil, 0, "x", "x"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.values), func(t *testing.T) {
			r := secrets.NewRedactor()
			if got := r.Add(tt.values...); got != tt.wantIgnored {
				t.Errorf("Add ignored %d, want %d", got, tt.wantIgnored)
			}
			if got := r.Redact(tt.text); got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

// TestRedactBytesJSON checks that a secret is caught in the forms JSON
// encoders write it in, and that the redacted frame is still valid JSON.
func TestRedactBytesJSON(t *testing.T) {
	secretValues := []string{
		"plain-secret-123",
		`quo"te`,
		`back\slash`,
		"<html>&amp;",
		"tab\tnew\nline\r",
		"ctrl\x01\x1f\x7fdel",
		"pässwörd-ü",
		"emoji🔑key",
		"line\u2028sep\u2029",
		"sl/as/h",
		"bad\xffutf8",
	}
	encoders := []struct {
		name   string
		encode func(v any) []byte
	}{
		{"json.Marshal", func(v any) []byte {
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}},
		{"Encoder without HTML escaping", func(v any) []byte {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(v); err != nil {
				t.Fatal(err)
			}
			return buf.Bytes()
		}},
		{"ASCII only (Python)", func(v any) []byte {
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			return []byte(asciiOnly(string(b), "%04x"))
		}},
		{"ASCII only, upper case hex", func(v any) []byte {
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			upper := regexp.MustCompile(`\\u[0-9a-f]{4}`)
			return upper.ReplaceAllFunc([]byte(asciiOnly(string(b), "%04x")), func(esc []byte) []byte {
				return append([]byte(`\u`), bytes.ToUpper(esc[2:])...)
			})
		}},
		{"escaped slashes", func(v any) []byte {
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			return bytes.ReplaceAll(b, []byte("/"), []byte(`\/`))
		}},
	}
	for _, secret := range secretValues {
		for _, enc := range encoders {
			t.Run(fmt.Sprintf("%q/%s", secret, enc.name), func(t *testing.T) {
				r := newRedactor(t, secret)
				frame := enc.encode(map[string]any{"a": "pre " + secret + " post", "b": []string{secret}})
				got := r.RedactBytes(frame)
				var v struct {
					A string
					B []string
				}
				if err := json.Unmarshal(got, &v); err != nil {
					t.Fatalf("redacted frame %s is not valid JSON: %v", got, err)
				}
				if v.A != "pre [REDACTED] post" || len(v.B) != 1 || v.B[0] != "[REDACTED]" {
					t.Errorf("RedactBytes(%s) = %s", frame, got)
				}
			})
		}
	}
}

// asciiOnly escapes every non-ASCII character of a JSON text, and DEL, as
// \uXXXX (surrogate pairs beyond the BMP), as Python's json.dumps does.
func asciiOnly(s, format string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == 0x7f || (r > 0x7f && r <= 0xffff):
			fmt.Fprintf(&b, `\u`+format, r)
		case r > 0xffff:
			r -= 0x10000
			fmt.Fprintf(&b, `\u`+format+`\u`+format, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestRedactBytesDoesNotModifyInput(t *testing.T) {
	r := newRedactor(t, "hunter22")
	tests := []struct {
		in       string
		want     string
		sameBack bool
	}{
		{"no secret here", "no secret here", true},
		{"a hunter22 b", "a [REDACTED] b", false},
		{"", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			in := []byte(tt.in)
			got := r.RedactBytes(in)
			if string(got) != tt.want {
				t.Errorf("RedactBytes(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if string(in) != tt.in {
				t.Errorf("input modified: %q", in)
			}
			if same := len(in) > 0 && len(got) > 0 && &in[0] == &got[0]; same != (tt.sameBack && len(in) > 0) {
				t.Errorf("result shares the input's memory: %v", same)
			}
		})
	}
}

// shortWriter writes at most n bytes of each Write, failing with err.
type shortWriter struct {
	buf bytes.Buffer
	n   int
	err error
}

func (w *shortWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		w.buf.Write(p[:w.n])
		return w.n, w.err
	}
	return w.buf.Write(p)
}

func TestWriter(t *testing.T) {
	errBroken := errors.New("broken pipe")
	tests := []struct {
		name    string
		limit   int
		err     error
		in      string
		wantN   int
		wantErr error
		wantOut string
	}{
		{"redacted", 1 << 20, nil, `{"token":"hunter22"}` + "\n", 21, nil, `{"token":"[REDACTED]"}` + "\n"},
		{"escaped", 1 << 20, nil, `{"k":"a\"b\\c"}`, 15, nil, `{"k":"[REDACTED]"}`},
		{"nothing to redact", 1 << 20, nil, "plain line\n", 11, nil, "plain line\n"},
		{"empty", 1 << 20, nil, "", 0, nil, ""},
		{"failure after redaction", 3, errBroken, "x hunter22", 0, errBroken, "x ["},
		{"failure without redaction", 3, errBroken, "plain", 3, errBroken, "pla"},
		{"short write after redaction", 3, nil, "x hunter22", 0, io.ErrShortWrite, "x ["},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRedactor(t, "hunter22", `a"b\c`)
			dst := &shortWriter{n: tt.limit, err: tt.err}
			n, err := r.Writer(dst).Write([]byte(tt.in))
			if n != tt.wantN || !errors.Is(err, tt.wantErr) {
				t.Errorf("Write = %d, %v; want %d, %v", n, err, tt.wantN, tt.wantErr)
			}
			if got := dst.buf.String(); got != tt.wantOut {
				t.Errorf("wrote %q, want %q", got, tt.wantOut)
			}
		})
	}
}

// TestConcurrentUse registers values while other goroutines redact and
// write; run with -race.
func TestConcurrentUse(t *testing.T) {
	r := secrets.NewRedactor()
	var out bytes.Buffer
	var mu sync.Mutex
	w := r.Writer(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return out.Write(p)
	}))
	const n = 50
	var wg sync.WaitGroup
	for i := range n {
		secret := fmt.Sprintf("secret-%03d", i)
		wg.Go(func() { r.Add(secret) })
		wg.Go(func() {
			_ = r.Redact("x " + secret)
			_ = r.RedactBytes([]byte(secret))
			_, _ = fmt.Fprintf(w, "line %s\n", "unrelated")
		})
	}
	wg.Wait()
	for i := range n {
		secret := fmt.Sprintf("secret-%03d", i)
		if got := r.Redact("x " + secret); got != "x [REDACTED]" {
			t.Errorf("after all Adds, Redact = %q", got)
		}
	}
	if got := strings.Count(out.String(), "line unrelated\n"); got != n {
		t.Errorf("writer wrote %d lines, want %d", got, n)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestZeroRedactorPanics(t *testing.T) {
	tests := []struct {
		name string
		call func(r *secrets.Redactor)
	}{
		{"Add", func(r *secrets.Redactor) { r.Add("hunter22") }},
		{"Redact", func(r *secrets.Redactor) { r.Redact("x") }},
		{"RedactBytes", func(r *secrets.Redactor) { r.RedactBytes([]byte("x")) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic on a zero Redactor")
				}
			}()
			tt.call(&secrets.Redactor{})
		})
	}
}

// logLine is a 1 KB log line.
func logLine() string {
	line := `time=2025-01-02T03:04:05.678Z level=INFO msg="tool call finished" session=7d0c2a8e-4f7b-4a40-9f0e-1c2d3e4f5a6b server=github tool=search_issues duration=412ms result="`
	for len(line) < 1000 {
		line += "lorem ipsum dolor sit amet, consectetur adipiscing elit; "
	}
	return line[:1000] + `"` + "\n"
}

func benchRedactor(b *testing.B) *secrets.Redactor {
	r := secrets.NewRedactor()
	for i := range 5 { // 10 secrets
		r.Add(fmt.Sprintf("ghp_%032d", i), fmt.Sprintf("sk-proj-%d-Xy/Zw+Ab==", i))
	}
	return r
}

func BenchmarkRedact(b *testing.B) {
	r := benchRedactor(b)
	clean := logLine()
	dirty := strings.Replace(clean, "lorem", "ghp_00000000000000000000000000000003", 2)
	for _, bc := range []struct{ name, line string }{{"no secret", clean}, {"two secrets", dirty}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.line)))
			b.ReportAllocs()
			for b.Loop() {
				_ = r.Redact(bc.line)
			}
		})
	}
}

func BenchmarkRedactBytes(b *testing.B) {
	r := benchRedactor(b)
	frame, err := json.Marshal(map[string]string{"jsonrpc": "2.0", "text": logLine() + "sk-proj-3-Xy/Zw+Ab=="})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		_ = r.RedactBytes(frame)
	}
}
