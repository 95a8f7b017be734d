package acpschema

import (
	"bytes"
	"sync"
)

// Lines returns a writer that splits what is written to it into lines and
// calls frame with each non-empty one, without its line end, in order
// (frame must not keep the slice). A line not yet ended waits for the next
// write; one never ended is dropped. Writes never fail. The writer is
// safe for concurrent use, each Write being taken whole: put it where
// whole lines are written (as an ACP connection writes each message), or
// behind a reader (io.TeeReader).
func Lines(frame func(line []byte)) *LineWriter {
	return &LineWriter{frame: frame}
}

// LineWriter is the writer Lines returns.
type LineWriter struct {
	frame   func([]byte)
	mu      sync.Mutex
	partial []byte
}

// Write takes p, calling frame for each line p ends.
func (w *LineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	rest := p
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		line := rest[:i]
		if len(w.partial) > 0 {
			w.partial = append(w.partial, line...)
			line = w.partial
		}
		if line = bytes.TrimRight(line, "\r"); len(bytes.TrimSpace(line)) > 0 {
			w.frame(line)
		}
		w.partial = w.partial[:0]
		rest = rest[i+1:]
	}
	w.partial = append(w.partial, rest...)
	return len(p), nil
}
