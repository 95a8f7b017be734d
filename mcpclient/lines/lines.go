// Package lines is acpgate's one line framer: it splits a byte stream into
// newline-terminated lines in bounded memory, for the ACP input filter, a
// stdio server's stdout and a server's stderr alike.
package lines

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// Reader reads lines from a stream, either fragment by fragment (Next) or
// whole up to a bound (Line). Memory is bounded by the buffer size given
// to NewReader plus, for Line, the bound. Not safe for concurrent use.
type Reader struct {
	br *bufio.Reader
}

// NewReader returns a Reader over r with a buffer of size bytes: no
// fragment Next returns is longer.
func NewReader(r io.Reader, size int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, size)}
}

// Next returns the next fragment of the current line, newline included
// when the fragment ends the line. ended reports that it does: a newline
// was read, or the stream ended (err is then the read error, io.EOF at the
// end). frag is a slice of the Reader's buffer, valid until the next call.
func (r *Reader) Next() (frag []byte, ended bool, err error) {
	frag, err = r.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return frag, false, nil
	}
	return frag, true, err
}

// Skip discards what the stream has ready without looking for lines: what
// is buffered or, when nothing is, what one read returns (at most the
// buffer size). It returns the discarded bytes, a slice of the Reader's
// buffer valid until the next call, which may begin or end inside a line;
// err is the read error (io.EOF at the end) when nothing was left to
// discard. It is how a reader that drops what it reads skips a flood at
// the cost of one read per buffer instead of one per line.
func (r *Reader) Skip() (chunk []byte, err error) {
	if r.br.Buffered() == 0 {
		if _, err := r.br.Peek(1); err != nil {
			return nil, err
		}
	}
	chunk, _ = r.br.Peek(r.br.Buffered())
	_, _ = r.br.Discard(len(chunk))
	return chunk, nil
}

// Buffered is how many bytes have been read from the stream and not yet
// returned: while it is 0, the next call reads the stream.
func (r *Reader) Buffered() int { return r.br.Buffered() }

// Line reads the rest of the current line and returns it without its line
// end ("\n" or "\r\n"), appended to buf[:0] but never longer than max
// bytes; n is the line's full length (without the line end), so n >
// len(line) means the line was cut and its tail discarded. err is the
// read error of the stream (io.EOF at its end), returned with the last,
// possibly empty, line.
func (r *Reader) Line(buf []byte, max int) (line []byte, n int, err error) {
	line = buf[:0]
	for {
		frag, ended, err := r.Next()
		if ended && err == nil {
			frag = trimEnd(frag)
		}
		n += len(frag)
		if room := max - len(line); room > 0 {
			line = append(line, frag[:min(len(frag), room)]...)
		}
		if ended {
			if err == nil && n > 0 && len(frag) == 0 && line[len(line)-1] == '\r' {
				line, n = line[:len(line)-1], n-1 // "\r\n" split between fragments
			}
			return line, n, err
		}
	}
}

// trimEnd drops a line's "\n" or "\r\n".
func trimEnd(frag []byte) []byte {
	frag = bytes.TrimSuffix(frag, []byte{'\n'})
	return bytes.TrimSuffix(frag, []byte{'\r'})
}
