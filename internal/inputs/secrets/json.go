package secrets

import (
	"bytes"
	"encoding/json"
	"io"
)

// This file redacts JSON text in its strings only — member names and
// values alike — so that a registered value never rewrites the structure
// of a message: a quote, a colon, a number, a literal stays as it is, and
// a member stays a member (its name redacted as a value would be). A
// registered value spelled with escapes (`\u0073k-…`, `\/`) is caught too:
// a string whose escapes are not those encoding/json writes is compared in
// that canonical spelling (see canon.go), and written in it when it holds
// a secret. Two member names that redaction makes equal stay two members:
// duplicate names are valid JSON (RFC 8259), and decoders keep the last.

// maxNesting is how deep RedactJSON looks into JSON text held in a string
// (a tool call's arguments in the session log), and that in a string in
// it, and so on.
const maxNesting = 3

// RedactJSON is RedactBytes for a JSON text (a message, or several, one a
// line): only the contents of strings are redacted — member names and
// values, never anything outside a string — in the forms RedactBytes
// catches there and in any spelling of JSON escapes, and in JSON text
// held in a string (up to a few levels). A string holding a secret in a
// spelling of its own is written in encoding/json's spelling, the secret
// replaced. It returns b itself when no registered value occurs in it, a
// new slice otherwise; it never modifies b. It is safe for concurrent use.
func (r *Redactor) RedactJSON(b []byte) []byte {
	out, _ := r.load().redactJSON(b, maxNesting)
	return out
}

// redactJSON is RedactJSON with depth more levels of JSON text in strings
// looked into; changed says whether out differs from b.
func (st *state) redactJSON(b []byte, depth int) (out []byte, changed bool) {
	if st.m == nil || (!st.containsBytes(b) && !mayHide(b)) {
		return b, false
	}
	out = make([]byte, 0, len(b)+len(Redacted))
	var scan jsonScan
	for p := b; len(p) > 0; {
		// Whole in memory, a string's contents are one run.
		run, str, _ := scan.next(p)
		if str {
			out = st.redactString(out, p[:run], depth)
		} else {
			out = append(out, p[:run]...)
		}
		p = p[run:]
	}
	if bytes.Equal(out, b) {
		return b, false
	}
	return out, true
}

// redactString appends the contents of a JSON string, run, redacted to
// dst.
func (st *state) redactString(dst, run []byte, depth int) []byte {
	if bytes.IndexByte(run, '\\') < 0 {
		return append(dst, st.redactBytes(run)...)
	}
	if c, _ := canonical(nil, run, true); st.containsBytes(c) {
		return append(dst, st.redactBytes(c)...)
	}
	if depth > 0 && (run[0] == '{' || run[0] == '[') {
		// JSON text in a string: its own escapes are escaped again.
		var s string
		if json.Unmarshal(append(append([]byte{'"'}, run...), '"'), &s) == nil {
			if inner, changed := st.redactJSON([]byte(s), depth-1); changed {
				return appendQuoted(dst, string(inner))
			}
		}
	}
	return append(dst, st.redactBytes(run)...)
}

// A JSONWriter redacts a JSON text written to it in pieces (a large
// message encoded a piece at a time) as RedactJSON redacts it whole, and
// passes it on to an io.Writer: what is outside strings passes on as it
// is written; a string's contents are written in encoding/json's spelling
// of escapes (see canon.go) through a StreamWriter, which holds back at
// most the longest registered form less one byte, and is flushed where
// the string ends. So its output may spell an escape differently from
// RedactJSON's (never with another meaning); JSON text held in a string is
// not looked into. Flush ends the text. Create one with
// [Redactor.JSONWriter]. A JSONWriter is not safe for concurrent use; the
// Redactor it comes from may be added to concurrently.
type JSONWriter struct {
	w     io.Writer
	s     *StreamWriter
	scan  jsonScan
	canon canonWriter
}

// JSONWriter returns a JSONWriter passing what it redacts on to w.
func (r *Redactor) JSONWriter(w io.Writer) *JSONWriter {
	s := r.StreamWriter(w)
	return &JSONWriter{w: w, s: s, canon: canonWriter{w: s}}
}

// Write adds p to the text and passes on what is safe now. It reports
// len(p) written unless w fails.
func (j *JSONWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		run, str, ends := j.scan.next(p)
		var err error
		if str {
			err = j.canon.write(p[:run], ends)
		} else {
			_, err = j.w.Write(p[:run])
		}
		if err == nil && ends {
			err = j.s.Flush()
		}
		if err != nil {
			return 0, err
		}
		p = p[run:]
	}
	return n, nil
}

// Flush passes on what is held back and ends the text; the JSONWriter may
// be used for another one afterwards.
func (j *JSONWriter) Flush() error {
	j.scan = jsonScan{}
	err := j.canon.write(nil, true)
	if ferr := j.s.Flush(); err == nil {
		err = ferr
	}
	return err
}

// jsonScan follows a JSON text byte by byte far enough to tell the
// contents of strings from everything else. The zero value is at the
// start of a text. It does not validate: text that is not JSON is
// followed as well as it goes.
type jsonScan struct {
	inStr   bool // inside a string
	escape  bool // the previous byte was a backslash inside a string
	closing bool // the next byte is the closing quote of a string
}

// next returns how many bytes at the start of p form one run: all inside
// a string's contents (str), or all outside them; ends says the run is the
// last of a string's contents (its closing quote comes next).
func (s *jsonScan) next(p []byte) (n int, str, ends bool) {
	start := 0
	switch {
	case s.closing:
		s.closing, start = false, 1 // the quote: outside the contents
	case s.inStr:
		n, ends = s.inString(p)
		s.closing = ends
		return n, true, ends
	}
	if i := bytes.IndexByte(p[start:], '"'); i >= 0 {
		s.inStr, s.escape = true, false
		return start + i + 1, false, false // the quote; the contents follow
	}
	return len(p), false, false
}

// inString returns the length of the run of a string's contents at the
// start of p, up to its closing quote (not included; ends) or the end of
// p, and leaves the string when it ends.
func (s *jsonScan) inString(p []byte) (n int, ends bool) {
	for i := 0; i < len(p); {
		if s.escape {
			s.escape = false
			i++
			continue
		}
		j := bytes.IndexAny(p[i:], `"\`)
		if j < 0 {
			return len(p), false
		}
		i += j
		if p[i] == '\\' {
			s.escape = true
			i++
			continue
		}
		s.inStr = false
		return i, true
	}
	return len(p), false
}
