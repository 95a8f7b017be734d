package secrets

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf16"
)

// Redacted is what replaces a registered secret value.
const Redacted = "[REDACTED]"

// MinSecretLen is the length in bytes under which [Redactor.Add] does not
// register a value: redacting every occurrence of a shorter value would
// mangle innocent text, and it would say little about the value anyway.
const MinSecretLen = 4

// A Redactor replaces registered secret values by [Redacted]. Create one
// with [NewRedactor]; the zero value is not usable (its methods panic).
//
// A Redactor is safe for concurrent use: Add may run while other goroutines
// redact. Redaction never blocks: it works on an immutable snapshot of the
// registered values, replaced as a whole by each Add that registers
// something new, so a concurrent redaction sees the values registered
// either before or after that Add, never a mix.
type Redactor struct {
	mu       sync.Mutex          // serializes Add
	values   map[string]struct{} // registered values; guarded by mu
	patterns map[string]struct{} // values and their escaped forms; guarded by mu
	state    atomic.Pointer[state]
}

// NewRedactor returns a Redactor with no registered values.
func NewRedactor() *Redactor {
	r := &Redactor{values: map[string]struct{}{}, patterns: map[string]struct{}{}}
	r.state.Store(&state{})
	return r
}

// load returns the current snapshot.
func (r *Redactor) load() *state {
	st := r.state.Load()
	if st == nil {
		panic("secrets: Redactor used without NewRedactor")
	}
	return st
}

// Add registers secret values, so that they are redacted from then on.
// It returns how many of the values it ignored because they are shorter
// than [MinSecretLen] bytes (the empty string included): those are not
// redacted. Registering a value again is a no-op. Add is safe for
// concurrent use.
func (r *Redactor) Add(values ...string) (ignored int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	prev := r.load()
	var added bool
	for _, v := range values {
		if len(v) < MinSecretLen {
			ignored++
			continue
		}
		if _, ok := r.values[v]; ok {
			continue
		}
		r.values[v] = struct{}{}
		for _, p := range escapedForms(v) {
			r.patterns[p] = struct{}{}
		}
		added = true
	}
	if added {
		r.state.Store(&state{gen: prev.gen + 1, m: newMatcher(r.patterns)})
	}
	return ignored
}

// Redact returns s with every occurrence of every registered value
// replaced by [Redacted]. Where registered values overlap or nest (one
// contains another), the whole stretch they cover is replaced, so the
// longest match wins and no part of any value survives. Redact also
// catches the escaped forms [Redactor.RedactBytes] catches, so JSON quoted
// inside text is covered too. It makes one pass over s whatever the number
// of registered values, and returns s itself when nothing matches. Redact
// is safe for concurrent use.
func (r *Redactor) Redact(s string) string { return r.load().redact(s) }

// RedactBytes is Redact for a byte slice, typically a raw JSON frame. Each
// value is also caught in the forms encoders write it in inside a quoted
// string: as encoding/json escapes it, with and without HTML escaping; with
// every non-ASCII character escaped as \uXXXX, as Python's json module
// does; with the hex digits of \u escapes in upper case; with "/" escaped
// as "\/"; as strconv.Quote and strconv.QuoteToASCII escape it. So a
// redacted JSON document stays valid. RedactBytes never modifies b; it
// returns b itself when nothing matches, a new slice otherwise. It is safe
// for concurrent use.
func (r *Redactor) RedactBytes(b []byte) []byte { return r.load().redactBytes(b) }

// Writer returns a writer that redacts each Write (as RedactBytes does)
// before passing it on to w. A value split across two Writes is not
// caught, so write whole lines or frames (slog handlers and
// encoding/json.Encoder do). Write reports len(p) on success; if w fails
// after something was redacted, it reports 0 bytes of p written. The
// writer is safe for concurrent use if w is.
func (r *Redactor) Writer(w io.Writer) io.Writer { return &redactWriter{r: r, w: w} }

type redactWriter struct {
	r *Redactor
	w io.Writer
}

// Write redacts p and writes it to the underlying writer.
func (w *redactWriter) Write(p []byte) (int, error) {
	out := w.r.RedactBytes(p)
	n, err := w.w.Write(out)
	if len(out) == len(p) && (len(p) == 0 || &out[0] == &p[0]) {
		return n, err // nothing redacted: n counts bytes of p
	}
	if err != nil {
		return 0, err
	}
	if n < len(out) {
		return 0, io.ErrShortWrite
	}
	return len(p), nil
}

// state is an immutable snapshot of the registered values.
type state struct {
	gen uint64   // incremented by each Add that registers something
	m   *matcher // nil when nothing is registered
}

func (st *state) redact(s string) string {
	if st.m == nil {
		return s
	}
	spans := findSpans(st.m, s, false)
	if spans == nil {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.start])
		b.WriteString(Redacted)
		last = sp.end
	}
	b.WriteString(s[last:])
	return b.String()
}

func (st *state) redactBytes(p []byte) []byte {
	if st.m == nil {
		return p
	}
	spans := findSpans(st.m, p, false)
	if spans == nil {
		return p
	}
	out := make([]byte, 0, len(p))
	last := 0
	for _, sp := range spans {
		out = append(out, p[last:sp.start]...)
		out = append(out, Redacted...)
		last = sp.end
	}
	return append(out, p[last:]...)
}

// contains reports whether s contains a registered value.
func (st *state) contains(s string) bool {
	return st.m != nil && findSpans(st.m, s, true) != nil
}

// containsBytes reports whether p contains a registered value.
func (st *state) containsBytes(p []byte) bool {
	return st.m != nil && findSpans(st.m, p, true) != nil
}

// A matcher finds every occurrence of a set of patterns, each at least
// MinSecretLen bytes long, in one pass: a bit set over a hash of the first
// four bytes of each pattern rules out almost every position at the cost of
// a load, a multiplication and a bit test; the patterns that share a
// position's first four bytes are then compared in full. byFirst and maxLen
// serve [StreamRedactor], which looks for patterns cut short by the end of
// its text.
type matcher struct {
	filter   [filterSize / 64]uint64
	byPrefix map[uint32][]string // longest first
	byFirst  [256][]string       // the patterns by their first byte
	maxLen   int                 // the length of the longest pattern
}

const (
	filterBits = 16
	filterSize = 1 << filterBits
	hashMul    = 0x9E3779B1
)

func prefixKey[T ~string | ~[]byte](s T, i int) uint32 {
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
}

func newMatcher(patterns map[string]struct{}) *matcher {
	m := &matcher{byPrefix: map[uint32][]string{}}
	for p := range patterns {
		k := prefixKey(p, 0)
		h := (k * hashMul) >> (32 - filterBits)
		m.filter[h/64] |= 1 << (h % 64)
		m.byPrefix[k] = append(m.byPrefix[k], p)
		m.byFirst[p[0]] = append(m.byFirst[p[0]], p)
		m.maxLen = max(m.maxLen, len(p))
	}
	for _, ps := range m.byPrefix {
		slices.SortFunc(ps, func(a, b string) int {
			return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b))
		})
	}
	return m
}

// span is a stretch [start, end) to redact.
type span struct{ start, end int }

// findSpans returns the stretches of s covered by occurrences of the
// patterns, in order, overlapping occurrences merged; nil if there are none.
// With first, it stops at the first occurrence.
func findSpans[T ~string | ~[]byte](m *matcher, s T, first bool) []span {
	var spans []span
	if len(s) < MinSecretLen {
		return nil
	}
	// k holds the MinSecretLen bytes at i, rolled forward one byte a step.
	k := prefixKey(s, 0)
	for i := 0; ; i++ {
		if i > 0 {
			if i+MinSecretLen > len(s) {
				break
			}
			k = k>>8 | uint32(s[i+MinSecretLen-1])<<24
		}
		h := (k * hashMul) >> (32 - filterBits)
		if m.filter[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		for _, p := range m.byPrefix[k] {
			if !hasPrefixAt(s, i, p) {
				continue
			}
			end := i + len(p)
			if n := len(spans); n > 0 && i < spans[n-1].end {
				spans[n-1].end = max(spans[n-1].end, end)
			} else {
				spans = append(spans, span{i, end})
			}
			if first {
				return spans
			}
			break // the longest match at i covers the shorter ones
		}
	}
	return spans
}

func hasPrefixAt[T ~string | ~[]byte](s T, i int, p string) bool {
	if len(s)-i < len(p) {
		return false
	}
	for j := MinSecretLen; j < len(p); j++ { // the first bytes matched the key
		if s[i+j] != p[j] {
			return false
		}
	}
	return true
}

// escapedForms returns v and the distinct forms encoders may write it in
// inside a quoted string.
func escapedForms(v string) []string {
	forms := []string{v}
	add := func(f string) {
		if !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	for _, f := range []string{goJSON(v, true), goJSON(v, false), asciiJSON(v)} {
		for _, g := range []string{f, upperHex(f)} {
			add(g)
			add(strings.ReplaceAll(g, "/", `\/`))
		}
	}
	// JSON text held in a JSON string (a tool call's arguments) escapes
	// its escapes again.
	add(goJSON(goJSON(v, false), false))
	add(unquote(strconv.Quote(v)))
	add(unquote(strconv.QuoteToASCII(v)))
	return forms
}

// goJSON returns v as encoding/json writes it, without the quotes.
func goJSON(v string, escapeHTML bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	_ = enc.Encode(v) // encoding a string cannot fail
	return unquote(strings.TrimSuffix(b.String(), "\n"))
}

// asciiJSON returns v JSON-escaped with every character outside printable
// ASCII written as \uXXXX (surrogate pairs beyond the BMP), as Python's
// json.dumps does by default, without the quotes.
func asciiJSON(v string) string {
	const digits = "0123456789abcdef"
	var b strings.Builder
	u := func(r rune) {
		b.WriteString(`\u`)
		for shift := 12; shift >= 0; shift -= 4 {
			b.WriteByte(digits[(r>>shift)&0xF])
		}
	}
	for _, r := range v {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || (r >= 0x7f && r <= 0xffff):
			u(r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			u(r1)
			u(r2)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// upperHex returns the JSON-escaped f with the hex digits of its \uXXXX
// escapes in upper case, as some encoders write them.
func upperHex(f string) string {
	b := []byte(f)
	for i := 0; i < len(b)-1; i++ {
		if b[i] != '\\' {
			continue
		}
		if b[i+1] == 'u' && i+6 <= len(b) {
			copy(b[i+2:i+6], bytes.ToUpper(b[i+2:i+6]))
		}
		i++ // skip the escaped character
	}
	return string(b)
}

func unquote(q string) string { return q[1 : len(q)-1] }
