package secrets

import (
	"bytes"
	"io"
)

// This file redacts JSON text in its string values only: a registered
// value never rewrites the structure of a message — a member name, a
// number, a literal — however it is spelled, so `{"jsonrpc":…}` stays
// `{"jsonrpc":…}` whatever was registered.

// RedactJSON is RedactBytes for a JSON text (a message, or several, one a
// line): only the contents of string values are redacted — never a member
// name or anything outside a string — in the forms RedactBytes catches
// there. It returns b itself when no registered value occurs in it, a
// new slice otherwise; it never modifies b. It is safe for concurrent use.
func (r *Redactor) RedactJSON(b []byte) []byte {
	st := r.load()
	if !st.containsBytes(b) {
		return b
	}
	out := make([]byte, 0, len(b)+len(Redacted))
	var scan jsonScan
	for p := b; len(p) > 0; {
		// Whole in memory, a string value's contents are one run.
		run, value, _ := scan.next(p)
		if value {
			out = append(out, st.redactBytes(p[:run])...)
		} else {
			out = append(out, p[:run]...)
		}
		p = p[run:]
	}
	return out
}

// A JSONWriter redacts a JSON text written to it in pieces (a large
// message encoded a piece at a time) as RedactJSON redacts it whole, and
// passes it on to an io.Writer: what is outside string values passes on
// as it is written; a string value's contents go through a StreamWriter,
// which holds back at most the longest registered form less one byte, and
// is flushed where the string ends. Flush ends the text. Create one with
// [Redactor.JSONWriter]. A JSONWriter is not safe for concurrent use; the
// Redactor it comes from may be added to concurrently.
type JSONWriter struct {
	w    io.Writer
	s    *StreamWriter
	scan jsonScan
}

// JSONWriter returns a JSONWriter passing what it redacts on to w.
func (r *Redactor) JSONWriter(w io.Writer) *JSONWriter {
	return &JSONWriter{w: w, s: r.StreamWriter(w)}
}

// Write adds p to the text and passes on what is safe now. It reports
// len(p) written unless w fails.
func (j *JSONWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		run, value, ends := j.scan.next(p)
		var err error
		if value {
			_, err = j.s.Write(p[:run])
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
	return j.s.Flush()
}

// jsonScan follows a JSON text byte by byte far enough to tell the
// contents of string values from everything else: in an object, a string
// after '{' or ',' is a member name, one after ':' a value; in an array
// every string is a value. The zero value is at the start of a text. It
// does not validate: text that is not JSON is followed as well as it goes.
type jsonScan struct {
	stack   []byte // the open containers, '{' or '['
	key     bool   // the next string is a member name
	inStr   bool   // inside a string
	inValue bool   // inside a string value (not a member name)
	escape  bool   // the previous byte was a backslash inside a string
	closing bool   // the next byte is the closing quote of a string value
}

// next returns how many bytes at the start of p form one run: all inside
// a string value's contents (value), or all outside them (member names
// included); ends says the run is the last of a string value's contents
// (its closing quote comes next).
func (s *jsonScan) next(p []byte) (n int, value, ends bool) {
	start := 0
	switch {
	case s.closing:
		s.closing, start = false, 1 // the quote: outside the contents
	case s.inStr && s.inValue:
		n, ends = s.inString(p)
		s.closing = ends
		return n, true, ends
	case s.inStr:
		n, ends = s.inString(p)
		if ends {
			n++ // a member name's closing quote goes with it
		}
		start = n
		if start == len(p) {
			return n, false, false
		}
	}
	for i := start; i < len(p); i++ {
		switch c := p[i]; c {
		case '"':
			s.inStr, s.inValue, s.escape = true, !s.key, false
			if s.inValue {
				return i + 1, false, false // the quote; the contents follow
			}
			r, ends := s.inString(p[i+1:])
			if !ends {
				return i + 1 + r, false, false
			}
			i += r + 1 // the name and its closing quote
		case '{', '[':
			s.stack = append(s.stack, c)
			s.key = c == '{'
		case '}', ']':
			if len(s.stack) > 0 {
				s.stack = s.stack[:len(s.stack)-1]
			}
			s.key = false
		case ':':
			s.key = false
		case ',':
			s.key = len(s.stack) > 0 && s.stack[len(s.stack)-1] == '{'
		}
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
