package secrets

import "strings"

// A StreamRedactor redacts text that arrives in chunks, such as a model's
// streamed answer, where a secret may be split across chunks. Create one
// with [Redactor.Stream].
//
// Write returns what is safe to pass on now: it holds back the longest end
// of the text seen so far that could still be the start of a registered
// value (or of one of the escaped forms [Redactor.Redact] catches), and
// returns the rest with every complete value replaced by [Redacted]. So at
// most (the length of the longest registered form − 1) bytes are ever held
// back, and text that ends in no such prefix is passed on at once, whole.
// Flush returns what is held back, redacted, at the end of the stream (or
// before something else is shown between its chunks). The concatenation of
// everything returned is what Redact returns for the concatenated chunks.
//
// Each Write and Flush works on the values registered at that moment: a
// value registered while the stream runs is caught from the next call on,
// but a part of it returned earlier cannot be taken back.
//
// A StreamRedactor is not safe for concurrent use; the Redactor it comes
// from may be added to concurrently.
type StreamRedactor struct {
	r *Redactor
	// pending is the held-back text, from the earliest position where a
	// registered form could still start. Its first covered bytes belong to
	// a redaction already returned (as [Redacted]): they are kept so that
	// a longer value starting among them is still recognised, and are
	// never returned again.
	pending string
	covered int
}

// Stream returns a new StreamRedactor over r's registered values.
func (r *Redactor) Stream() *StreamRedactor {
	r.load() // fail early on a zero Redactor
	return &StreamRedactor{r: r}
}

// Write adds chunk to the stream and returns the text that is safe to pass
// on now, redacted; it may be empty.
func (s *StreamRedactor) Write(chunk string) string {
	m := s.r.load().m
	if m == nil {
		// Nothing is registered, so nothing was ever held back either.
		return s.pending + chunk
	}
	buf := s.pending + chunk
	hold := openPrefix(m, buf)
	out, end := emit(nil, m, buf, s.covered, hold)
	s.pending = strings.Clone(buf[hold:]) // do not keep a large chunk alive
	s.covered = max(0, end-hold)
	return string(out)
}

// Flush returns the held-back text, redacted, and empties the stream; the
// StreamRedactor may be used again afterwards.
func (s *StreamRedactor) Flush() string {
	buf, covered := s.pending, s.covered
	s.pending, s.covered = "", 0
	m := s.r.load().m
	if m == nil {
		return buf[covered:]
	}
	out, _ := emit(nil, m, buf, covered, len(buf))
	return string(out)
}

// openPrefix returns the first position i such that buf[i:] is a proper
// prefix of a pattern, so that a match could still start there once more
// text arrives; len(buf) if there is none.
func openPrefix[T ~string | ~[]byte](m *matcher, buf T) int {
	for i := max(0, len(buf)-m.maxLen+1); i < len(buf); i++ {
		rest := buf[i:]
		for _, p := range m.byFirst[buf[i]] {
			if len(p) > len(rest) && p[:len(rest)] == string(rest) {
				return i
			}
		}
	}
	return len(buf)
}

// emit appends buf[covered:end] redacted to dst and returns it and end,
// for the smallest end ≥ max(covered, hold) that no match crosses. Matches
// before hold are complete (none could grow: a longer pattern starting
// there would have put hold before them); the bytes before covered were
// returned earlier as part of a redaction, so a match reaching into them
// extends that redaction silently rather than adding a second [Redacted].
func emit[T ~string | ~[]byte](dst []byte, m *matcher, buf T, covered, hold int) ([]byte, int) {
	spans := findSpans(m, buf, false)
	end := max(covered, hold)
	for _, sp := range spans { // spans are ordered and do not overlap
		if sp.start < end && sp.end > end {
			end = sp.end
		}
	}
	last := covered
	for _, sp := range spans {
		switch {
		case sp.end <= last:
			continue // inside what was returned already
		case sp.start >= end:
			return append(dst, buf[last:end]...), end
		case sp.start < last:
			last = sp.end // continues a redaction already returned
			continue
		}
		dst = append(dst, buf[last:sp.start]...)
		dst = append(dst, Redacted...)
		last = sp.end
	}
	if last < end {
		dst = append(dst, buf[last:end]...)
	}
	return dst, end
}
