package secrets_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/inputs/secrets"
)

const (
	hs     = "hunter2-secret"
	quoted = `q"uo\te-secret`
	pin    = "987654321"
)

type stringer struct{}

func (stringer) String() string { return "via stringer " + hs }

// hidden hides its token from %v but not from encoding/json.
type hidden struct{ Token string }

func (hidden) String() string { return "hidden" }

type valuer struct{}

func (valuer) LogValue() slog.Value {
	return slog.GroupValue(slog.String("user", "bob"), slog.String("pass", hs))
}

// panicky panics when marshaled.
type panicky struct{ Token string }

func (panicky) MarshalJSON() ([]byte, error) { panic("no JSON") }
func (panicky) MarshalText() ([]byte, error) { panic("no text") }

type textMarshaler struct{}

func (textMarshaler) MarshalText() ([]byte, error) { return []byte("text " + hs), nil }

type handlerKind struct {
	name string
	new  func(w io.Writer) slog.Handler
}

func handlerKinds() []handlerKind {
	opts := &slog.HandlerOptions{Level: slog.LevelDebug}
	return []handlerKind{
		{"text", func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, opts) }},
		{"json", func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, opts) }},
	}
}

func TestHandlerRedacts(t *testing.T) {
	id := func(l *slog.Logger) *slog.Logger { return l }
	tests := []struct {
		name string
		with func(*slog.Logger) *slog.Logger
		msg  string
		args []any
		// noMarker says where the output shows no [REDACTED]: the value
		// printed hides the redacted field, or is base64.
		noMarker string
	}{
		{"message", id, "connecting with " + hs, nil, ""},
		{"string", id, "m", []any{"token", hs}, ""},
		{"string containing", id, "m", []any{"header", "Bearer " + hs}, ""},
		{"quoted secret", id, "m", []any{"token", quoted}, ""},
		{"error", id, "m", []any{"err", fmt.Errorf("auth failed for %s: %w", hs, io.EOF)}, ""},
		{"error with JSON-escaped secret", id, "m", []any{"err", errors.New(`body {"t":"q\"uo\\te-secret"}`)}, ""},
		{"Stringer", id, "m", []any{"s", stringer{}}, ""},
		{"struct with map", id, "m", []any{"cfg", struct{ Env map[string]string }{map[string]string{"T": hs}}}, ""},
		{"field hidden from %v", id, "m", []any{"h", hidden{hs}}, "text json"},
		{"TextMarshaler", id, "m", []any{"t", textMarshaler{}}, ""},
		{"bytes", id, "m", []any{"b", []byte("x" + hs)}, "json"},
		{"slice", id, "m", []any{"list", []string{"a", hs}}, ""},
		{"RawMessage", id, "m", []any{"frame", json.RawMessage(`{"t":"q\"uo\\te-secret"}`)}, ""},
		{"int", id, "m", []any{"pin", 987654321}, ""},
		{"uint", id, "m", []any{slog.Uint64("pin", 987654321)}, ""},
		{"key", id, "m", []any{hs, "value"}, ""},
		{"LogValuer", id, "m", []any{"login", valuer{}}, ""},
		{"group", id, "m", []any{slog.Group("g", "token", hs)}, ""},
		{"nested groups", id, "m", []any{slog.Group("g", slog.Group("inner", slog.Group("deep", "token", hs, "err", errors.New(hs))))}, ""},
		{"inline group", id, "m", []any{slog.Group("", "token", hs)}, ""},
		{"With", func(l *slog.Logger) *slog.Logger { return l.With("token", hs) }, "m", nil, ""},
		{"With group", func(l *slog.Logger) *slog.Logger { return l.With(slog.Group("g", "err", errors.New(hs))) }, "m", nil, ""},
		{"WithGroup", func(l *slog.Logger) *slog.Logger { return l.WithGroup("grp").With("token", hs) }, "m", []any{"x", hs}, ""},
		{"secret group name", func(l *slog.Logger) *slog.Logger { return l.WithGroup(hs) }, "m", []any{"x", 1}, ""},
	}
	levels := []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError}
	for _, hk := range handlerKinds() {
		for _, tt := range tests {
			for _, level := range levels {
				t.Run(fmt.Sprintf("%s/%s/%s", hk.name, tt.name, level), func(t *testing.T) {
					r := newRedactor(t, hs, quoted, pin)
					var out bytes.Buffer
					l := tt.with(slog.New(r.Handler(hk.new(&out))))
					l.Log(context.Background(), level, tt.msg, tt.args...)
					got := out.String()
					for _, leak := range []string{hs, quoted, `q\"uo\\te-secret`, pin} {
						if strings.Contains(got, leak) {
							t.Errorf("output contains %q: %s", leak, got)
						}
					}
					if !strings.Contains(tt.noMarker, hk.name) && !strings.Contains(got, secrets.Redacted) {
						t.Errorf("output has no %s: %s", secrets.Redacted, got)
					}
					if !strings.Contains(got, level.String()) {
						t.Errorf("output lost the level: %s", got)
					}
					if hk.name == "json" && !json.Valid(out.Bytes()) {
						t.Errorf("output is not JSON: %s", got)
					}
				})
			}
		}
	}
}

// TestHandlerPassesCleanRecordsThrough checks that a record without
// secrets comes out exactly as without the redacting handler.
func TestHandlerPassesCleanRecordsThrough(t *testing.T) {
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	opts := &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: noTime, AddSource: true}
	kinds := []struct {
		name string
		new  func(w io.Writer) slog.Handler
	}{
		{"text", func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, opts) }},
		{"json", func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, opts) }},
	}
	tests := []struct {
		name string
		log  func(l *slog.Logger)
	}{
		{"attrs of every kind", func(l *slog.Logger) {
			l.Info("hello", "s", "str", "i", 42, "f", 1.5, "b", true, "d", time.Second,
				"t", time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), "err", io.EOF, "any", []int{1, 2},
				"bytes", []byte("raw"), "nil", nil, "h", hidden{"x"}, slog.Group("g", "k", "v"))
		}},
		{"With and WithGroup", func(l *slog.Logger) {
			l.With("a", 1).WithGroup("g").With("b", 2).WithGroup("h").Warn("w", "c", 3)
		}},
		{"empty attrs and groups", func(l *slog.Logger) {
			l.Info("e", slog.Attr{}, slog.Group("empty"), slog.Group("", "inline", 1))
		}},
	}
	for _, hk := range kinds {
		for _, tt := range tests {
			t.Run(hk.name+"/"+tt.name, func(t *testing.T) {
				r := newRedactor(t, hs)
				var plain, wrapped bytes.Buffer
				tt.log(slog.New(hk.new(&plain)))
				tt.log(slog.New(r.Handler(hk.new(&wrapped))))
				if got, want := wrapped.String(), plain.String(); got != want {
					t.Errorf("wrapped output\n%s\ndiffers from\n%s", got, want)
				}
			})
		}
	}
}

// capture records the attributes of the records it handles.
type capture struct{ attrs *[]slog.Attr }

func (c capture) Enabled(context.Context, slog.Level) bool { return true }
func (c capture) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		*c.attrs = append(*c.attrs, a)
		return true
	})
	return nil
}
func (c capture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c capture) WithGroup(string) slog.Handler      { return c }

// TestHandlerKeepsKinds checks that redacted values keep their kinds where
// handlers treat them specially (errors, groups, bytes).
func TestHandlerKeepsKinds(t *testing.T) {
	tests := []struct {
		name  string
		attr  slog.Attr
		check func(t *testing.T, a slog.Attr)
	}{
		{"error stays an error", slog.Any("err", fmt.Errorf("wrapping %s: %w", hs, io.EOF)), func(t *testing.T, a slog.Attr) {
			err, ok := a.Value.Any().(error)
			if !ok || err.Error() != "wrapping [REDACTED]: EOF" {
				t.Errorf("got %#v", a.Value.Any())
			}
			if errors.Is(err, io.EOF) {
				t.Error("the redacted error still wraps the original")
			}
		}},
		{"clean error untouched", slog.Any("err", io.EOF), func(t *testing.T, a slog.Attr) {
			if a.Value.Any() != io.EOF {
				t.Errorf("got %#v", a.Value.Any())
			}
		}},
		{"group stays a group", slog.Group("g", "a", hs, "b", 2), func(t *testing.T, a slog.Attr) {
			g := a.Value.Group()
			if a.Value.Kind() != slog.KindGroup || len(g) != 2 || g[0].Value.String() != secrets.Redacted || g[1].Value.Int64() != 2 {
				t.Errorf("got %v", a)
			}
		}},
		{"bytes stay bytes", slog.Any("b", []byte("x"+hs)), func(t *testing.T, a slog.Attr) {
			if b, ok := a.Value.Any().([]byte); !ok || string(b) != "x[REDACTED]" {
				t.Errorf("got %#v", a.Value.Any())
			}
		}},
		{"RawMessage stays a RawMessage", slog.Any("frame", json.RawMessage(`{"token":"`+hs+`"}`)), func(t *testing.T, a slog.Attr) {
			if b, ok := a.Value.Any().(json.RawMessage); !ok || string(b) != `{"token":"[REDACTED]"}` {
				t.Errorf("got %#v", a.Value.Any())
			}
		}},
		{"panicking marshalers", slog.Any("p", panicky{hs}), func(t *testing.T, a slog.Attr) {
			if a.Value.Kind() != slog.KindString || a.Value.String() != "{Token:[REDACTED]}" {
				t.Errorf("got %v", a)
			}
		}},
		{"clean int stays an int", slog.Int("n", 12345), func(t *testing.T, a slog.Attr) {
			if a.Value.Kind() != slog.KindInt64 || a.Value.Int64() != 12345 {
				t.Errorf("got %v", a)
			}
		}},
		{"clean struct untouched", slog.Any("h", hidden{"clean"}), func(t *testing.T, a slog.Attr) {
			if a.Value.Any() != (hidden{"clean"}) {
				t.Errorf("got %#v", a.Value.Any())
			}
		}},
		{"struct becomes redacted text", slog.Any("h", struct{ A, B string }{"a", hs}), func(t *testing.T, a slog.Attr) {
			if a.Value.Kind() != slog.KindString || a.Value.String() != "{A:a B:[REDACTED]}" {
				t.Errorf("got %v", a)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []slog.Attr
			r := newRedactor(t, hs)
			slog.New(r.Handler(capture{&got})).Info("m", tt.attr)
			if len(got) != 1 {
				t.Fatalf("got %d attrs", len(got))
			}
			tt.check(t, got[0])
		})
	}
}

// TestHandlerLateSecrets checks that attributes given to With before a
// secret was registered are redacted once it is.
func TestHandlerLateSecrets(t *testing.T) {
	const late = "late-registered-secret"
	for _, hk := range handlerKinds() {
		t.Run(hk.name, func(t *testing.T) {
			r := newRedactor(t, hs)
			var out bytes.Buffer
			l := slog.New(r.Handler(hk.new(&out))).With("token", late).WithGroup("g").With("err", errors.New(late))
			l.Info("before")
			if !strings.Contains(out.String(), late) {
				t.Fatalf("unregistered value redacted: %s", out.String())
			}
			out.Reset()
			r.Add(late)
			l.Info("after")
			if strings.Contains(out.String(), late) || strings.Count(out.String(), secrets.Redacted) != 2 {
				t.Errorf("late secret not redacted: %s", out.String())
			}
		})
	}
}

func TestHandlerEnabled(t *testing.T) {
	r := secrets.NewRedactor()
	h := r.Handler(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	tests := []struct {
		h     slog.Handler
		level slog.Level
		want  bool
	}{
		{h, slog.LevelInfo, false},
		{h, slog.LevelWarn, true},
		{h.WithAttrs([]slog.Attr{slog.Int("a", 1)}).WithGroup("g"), slog.LevelDebug, false},
		{h.WithAttrs([]slog.Attr{slog.Int("a", 1)}).WithGroup("g"), slog.LevelError, true},
	}
	for _, tt := range tests {
		if got := tt.h.Enabled(context.Background(), tt.level); got != tt.want {
			t.Errorf("Enabled(%s) = %v, want %v", tt.level, got, tt.want)
		}
	}
}

func BenchmarkHandler(b *testing.B) {
	r := benchRedactor(b)
	l := slog.New(r.Handler(slog.NewJSONHandler(io.Discard, nil))).With("server", "github")
	b.ReportAllocs()
	for b.Loop() {
		l.Info("tool call finished", "tool", "search_issues", "duration", 412*time.Millisecond, "err", io.EOF)
	}
}
