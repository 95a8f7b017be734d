package secrets

import "io"

// A StreamWriter is a [StreamRedactor] for bytes on their way to an
// io.Writer: for a message written in pieces (a large frame encoded a
// piece at a time), where a value, or one of the escaped forms
// [Redactor.RedactBytes] catches, may be split across two pieces. Each
// Write passes on at once what is safe, holding back at most the longest
// registered form less one byte; Flush passes on the rest at the end of the
// message. What reaches the writer in all is what RedactBytes returns for
// the whole message. Create one with [Redactor.StreamWriter].
//
// Its buffers are reused from one Write to the next, so writing a large
// message in small pieces costs memory for a piece, not for the message.
// A StreamWriter is not safe for concurrent use; the Redactor it comes
// from may be added to concurrently.
type StreamWriter struct {
	r *Redactor
	w io.Writer
	// buf holds the held-back bytes (the first held), then the piece
	// being written; out is what is passed on. Both are reused.
	buf, out []byte
	held     int
	// covered is how many of the held-back bytes were passed on already
	// as part of a redaction (see StreamRedactor.covered).
	covered int
}

// StreamWriter returns a StreamWriter passing what it redacts on to w.
func (r *Redactor) StreamWriter(w io.Writer) *StreamWriter {
	r.load() // fail early on a zero Redactor
	return &StreamWriter{r: r, w: w}
}

// Write adds p to the message and passes on what is safe now, redacted.
// It reports len(p) written unless w fails.
func (s *StreamWriter) Write(p []byte) (int, error) {
	m := s.r.load().m
	if m == nil {
		// Nothing is registered, so nothing was ever held back either.
		if _, err := s.w.Write(p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	s.buf = append(s.buf[:s.held], p...)
	hold := openPrefix(m, s.buf)
	var end int
	s.out, end = emit(s.out[:0], m, s.buf, s.covered, hold)
	s.held = copy(s.buf, s.buf[hold:])
	s.covered = max(0, end-hold)
	if err := s.pass(); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush passes on what is held back, redacted, and ends the message; the
// StreamWriter may be used for another one afterwards.
func (s *StreamWriter) Flush() error {
	held, covered := s.buf[:s.held], s.covered
	s.held, s.covered = 0, 0
	m := s.r.load().m
	if m == nil {
		s.out = append(s.out[:0], held[covered:]...)
	} else {
		s.out, _ = emit(s.out[:0], m, held, covered, len(held))
	}
	return s.pass()
}

// pass writes out to w.
func (s *StreamWriter) pass() error {
	if len(s.out) == 0 {
		return nil
	}
	n, err := s.w.Write(s.out)
	if err == nil && n < len(s.out) {
		err = io.ErrShortWrite
	}
	return err
}
