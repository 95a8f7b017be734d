package secrets

import (
	"context"
	"encoding"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"sync/atomic"
)

// Handler returns a handler that redacts every record before passing it on
// to h: the message, and every attribute key and value, whatever its kind,
// in groups at any depth, including the attributes and group names given
// to WithAttrs and WithGroup. A value is replaced only if it holds a
// registered secret:
//   - a string by the redacted string;
//   - an error by an error whose message is the redacted message (it no
//     longer wraps the original);
//   - a []byte, or a named byte slice such as json.RawMessage, by the
//     redacted bytes, of the same type;
//   - a number, bool, time or duration that prints as a secret by the
//     redacted string;
//   - any other value whose rendering as "%+v", as "%v", as text
//     (encoding.TextMarshaler) or as JSON (encoding/json) contains a
//     secret, by a redacted string: its text if it is a TextMarshaler
//     (as slog's handlers print it), else its "%+v" rendering (which may
//     hide the field that held the secret, as a String method can).
//
// LogValuers are resolved first. Secrets are only recognized where they
// appear verbatim or escaped as RedactBytes recognizes them: a secret
// inside a []byte nested in a struct (printed as numbers) or encoded
// (base64, say) is not caught.
//
// Attributes given to WithAttrs are redacted again with the secrets
// registered since, so a logger made with With before a secret was
// resolved does not leak it afterwards.
//
// The handler is safe for concurrent use if h is.
func (r *Redactor) Handler(h slog.Handler) slog.Handler {
	return &redactHandler{r: r, base: h}
}

// redactHandler is a handler made by Handler (base set), or derived from
// one by WithAttrs (attrs set) or WithGroup (group set) on parent. A derived
// handler keeps the original attributes and applies them to its parent's
// inner handler afresh whenever secrets have been registered since it last
// did.
type redactHandler struct {
	r      *Redactor
	base   slog.Handler // root only
	parent *redactHandler
	attrs  []slog.Attr
	group  string
	cache  atomic.Pointer[derived]
}

// derived is the inner handler of a derived redactHandler, for the values
// registered as of generation gen.
type derived struct {
	gen uint64
	h   slog.Handler
}

// inner returns the handler records go to, with the attributes and groups
// redacted as of st.
func (h *redactHandler) inner(st *state) slog.Handler {
	if h.parent == nil {
		return h.base
	}
	if d := h.cache.Load(); d != nil && d.gen == st.gen {
		return d.h
	}
	in := h.parent.inner(st)
	if h.attrs != nil {
		in = in.WithAttrs(st.attrs(h.attrs))
	} else {
		in = in.WithGroup(st.redact(h.group))
	}
	h.cache.Store(&derived{gen: st.gen, h: in})
	return in
}

// Enabled reports whether the inner handler handles records at level.
func (h *redactHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner(h.r.load()).Enabled(ctx, level)
}

// Handle redacts rec and passes it on.
func (h *redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	st := h.r.load()
	in := h.inner(st)
	if st.m == nil {
		return in.Handle(ctx, rec)
	}
	out := slog.NewRecord(rec.Time, rec.Level, st.redact(rec.Message), rec.PC)
	attrs := make([]slog.Attr, 0, rec.NumAttrs())
	rec.Attrs(func(a slog.Attr) bool {
		attrs = append(attrs, st.attr(a))
		return true
	})
	out.AddAttrs(attrs...)
	return in.Handle(ctx, out)
}

// WithAttrs returns a handler whose records carry attrs, redacted.
func (h *redactHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	return &redactHandler{r: h.r, parent: h, attrs: attrs}
}

// WithGroup returns a handler whose records' attributes are in group name,
// redacted.
func (h *redactHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &redactHandler{r: h.r, parent: h, group: name}
}

func (st *state) attrs(as []slog.Attr) []slog.Attr {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = st.attr(a)
	}
	return out
}

// attr returns a redacted, with its value resolved.
func (st *state) attr(a slog.Attr) slog.Attr {
	a.Key = st.redact(a.Key)
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		v = slog.StringValue(st.redact(v.String()))
	case slog.KindGroup:
		v = slog.GroupValue(st.attrs(v.Group())...)
	case slog.KindAny:
		v = st.anyValue(v)
	default:
		if s := v.String(); st.contains(s) {
			v = slog.StringValue(st.redact(s))
		}
	}
	a.Value = v
	return a
}

// redactedError is an error whose message was redacted. It deliberately
// does not wrap the original, whose message holds a secret.
type redactedError struct{ msg string }

func (e redactedError) Error() string { return e.msg }

// anyValue redacts a value of kind Any.
func (st *state) anyValue(v slog.Value) slog.Value {
	switch x := v.Any().(type) {
	case nil:
		return v
	case error:
		msg := x.Error()
		if st.contains(msg) || st.contains(fmt.Sprintf("%+v", x)) {
			return slog.AnyValue(redactedError{st.redact(msg)})
		}
		return v
	case []byte:
		return slog.AnyValue(st.redactBytes(x))
	default:
		if rv := reflect.ValueOf(x); rv.Kind() == reflect.Slice && rv.Type().Elem() == reflect.TypeFor[byte]() {
			// A named byte slice, such as json.RawMessage: keep its type.
			b := rv.Bytes()
			if r := st.redactBytes(b); len(b) > 0 && &r[0] != &b[0] {
				return slog.AnyValue(reflect.ValueOf(r).Convert(rv.Type()).Interface())
			}
			return v
		}
		text := fmt.Sprintf("%+v", x)
		marshaled, isText := marshalText(x)
		if st.contains(text) || st.contains(fmt.Sprint(x)) || st.containsBytes(marshaled) || st.containsJSON(x) {
			if isText {
				text = string(marshaled) // what slog's handlers print
			}
			return slog.StringValue(st.redact(text))
		}
		return v
	}
}

// marshalText returns x marshaled as text, if it is a TextMarshaler that
// marshals without error.
func marshalText(x any) (text []byte, ok bool) {
	tm, ok := x.(encoding.TextMarshaler)
	if !ok {
		return nil, false
	}
	defer func() {
		if recover() != nil {
			text, ok = nil, false // the inner handler will meet the panic too
		}
	}()
	text, err := tm.MarshalText()
	return text, err == nil
}

// containsJSON reports whether x marshals as JSON containing a secret.
func (st *state) containsJSON(x any) (found bool) {
	defer func() {
		if recover() != nil {
			found = false // the inner handler will meet the panic too
		}
	}()
	b, err := json.Marshal(x)
	return err == nil && st.containsBytes(b)
}
