package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Parse parses and validates a configuration file's contents: it decodes
// the JSON, validates it against [Schema], decodes it into a [Config] with
// encoding/json and makes the checks a schema cannot express (a transport's
// url or command, URL schemes, unique profile IDs, glob patterns, secret
// references). source names the file in syntax errors
// ("config.json:12:5: invalid character ..."); validation errors name the
// JSON path instead. Every validation error is reported, joined with
// [errors.Join] in document order, each a [*FieldError]; the warnings found
// (unknown and duplicate keys, literal credentials, ignored fields) are
// returned even then. An empty document is an error (an editor truncating
// the file must not look like an empty configuration to a watcher). Parse is
// safe for concurrent use.
func Parse(data []byte, source string) (*Config, []Warning, error) {
	if source == "" {
		source = "config"
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, fmt.Errorf("%s: empty file: want a JSON object", source)
	}
	doc, err := decodeJSON(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s:%w", source, err)
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("%s: want a JSON object at the top level", source)
	}
	clean(root)
	r := &report{doc: root, offsets: map[string]int{}}
	r.scan(json.NewDecoder(bytes.NewReader(data)), nil)
	if err := r.validate(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", source, err)
	}
	c := &Config{}
	encoded, err := json.Marshal(r.doc)
	if err == nil {
		err = json.Unmarshal(encoded, c)
	}
	if err != nil && len(r.bad) == 0 {
		// Unreachable: a document the schema accepts fits the types.
		return nil, nil, fmt.Errorf("%s: %w", source, err)
	}
	r.check(c)
	warnings, errs := r.finish()
	if len(errs) > 0 {
		return nil, warnings, errors.Join(errs...)
	}
	return c, warnings, nil
}

// decodeJSON decodes one JSON value, numbers as json.Number. Its error
// starts with "line:column: ".
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	err := dec.Decode(&doc)
	var se *json.SyntaxError
	switch {
	case err == nil:
		rest := bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n")
		if len(rest) == 0 {
			return doc, nil
		}
		c, _ := utf8.DecodeRune(rest)
		return nil, fmt.Errorf("%s invalid character %q after top-level value", position(data, len(data)-len(rest)), c)
	case errors.As(err, &se):
		return nil, fmt.Errorf("%s %w", position(data, int(se.Offset)-1), err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, fmt.Errorf("%s unexpected end of JSON input: %w", position(data, len(data)), err)
	}
	return nil, fmt.Errorf("%s %w", position(data, 0), err)
}

// position returns "line:column:" (1-based, the column in runes) of the
// byte at off.
func position(data []byte, off int) string {
	before := data[:max(0, min(off, len(data)))]
	line := bytes.Count(before, []byte("\n")) + 1
	if i := bytes.LastIndexByte(before, '\n'); i >= 0 {
		before = before[i+1:]
	}
	return fmt.Sprintf("%d:%d:", line, utf8.RuneCount(before)+1)
}

// clean removes the null members of every object of v (null is the same as
// absent) and writes integral numbers such as 1.0 as integers, so that they
// decode into ints. It returns v, changed in place.
func clean(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if e == nil {
				delete(v, k)
			} else {
				v[k] = clean(e)
			}
		}
	case []any:
		for i, e := range v {
			v[i] = clean(e)
		}
	case json.Number:
		if _, err := v.Int64(); err != nil {
			if f, err := v.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) <= math.MaxInt32 {
				return json.Number(strconv.FormatInt(int64(f), 10))
			}
		}
	}
	return v
}

// report collects the errors and warnings of one Parse. A location is the
// list of keys and array indexes leading to a value.
type report struct {
	doc     map[string]any // the document, cleaned
	offsets map[string]int // the offset in the file of each value, by JSON pointer
	bad     []string       // pointers of the values the schema rejected
	errs    []issue
	warns   []issue
}

// issue is one error or warning, at an offset in the file.
type issue struct {
	at   int
	path string
	msg  string
	err  error
}

// scan records the offset of each value from dec, which is at the value of
// loc, and warns about duplicate keys. The document is known to be valid.
func (r *report) scan(dec *json.Decoder, loc []string) {
	r.offsets[pointer(loc)] = int(dec.InputOffset())
	tok, _ := dec.Token()
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			k, _ := dec.Token()
			key, _ := k.(string)
			child := append(slices.Clip(loc), key)
			if seen[key] {
				r.warn(child, "duplicate key; the last one is used")
			}
			seen[key] = true
			r.scan(dec, child)
		}
		_, _ = dec.Token()
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			r.scan(dec, append(slices.Clip(loc), strconv.Itoa(i)))
		}
		_, _ = dec.Token()
	}
}

// pointer returns the JSON pointer of loc.
func pointer(loc []string) string {
	var b strings.Builder
	for _, k := range loc {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// offset returns the offset of the value at loc, or of its closest parent
// in the file.
func (r *report) offset(loc []string) int {
	for n := len(loc); n >= 0; n-- {
		if at, ok := r.offsets[pointer(loc[:n])]; ok {
			return at
		}
	}
	return 0
}

// path returns the JSON path of loc: keys joined by dots, a key that is
// not a plain word as ["key"], array indexes as [i].
func (r *report) path(loc []string) string {
	var b strings.Builder
	for i, k := range loc {
		_, inArray := r.value(loc[:i]).([]any)
		switch {
		case inArray:
			b.WriteString("[" + k + "]")
		case !plainKey(k):
			b.WriteString("[" + strconv.Quote(k) + "]")
		case i > 0:
			b.WriteString("." + k)
		default:
			b.WriteString(k)
		}
	}
	return b.String()
}

func plainKey(k string) bool {
	return k != "" && !strings.ContainsFunc(k, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-' && r != '$'
	})
}

// isBad reports whether the schema rejected the value at loc or one inside
// it.
func (r *report) isBad(loc []string) bool {
	p := pointer(loc)
	return slices.ContainsFunc(r.bad, func(b string) bool { return b == p || strings.HasPrefix(b, p+"/") })
}

// errorAt records an error about the value at loc, wrapping err when set.
func (r *report) errorAt(loc []string, err error, format string, args ...any) {
	r.errs = append(r.errs, issue{r.offset(loc), r.path(loc), fmt.Sprintf(format, args...), err})
}

// warn records a warning about the value at loc.
func (r *report) warn(loc []string, format string, args ...any) {
	r.warns = append(r.warns, issue{at: r.offset(loc), path: r.path(loc), msg: fmt.Sprintf(format, args...)})
}

// finish returns the warnings and errors in document order.
func (r *report) finish() ([]Warning, []error) {
	byOffset := func(a, b issue) int { return a.at - b.at }
	slices.SortStableFunc(r.warns, byOffset)
	slices.SortStableFunc(r.errs, byOffset)
	var warnings []Warning
	for _, w := range r.warns {
		warnings = append(warnings, Warning{Path: w.path, Message: w.msg})
	}
	var errs []error
	for _, e := range r.errs {
		errs = append(errs, &FieldError{Path: e.path, Message: e.msg, Err: e.err})
	}
	return warnings, errs
}
