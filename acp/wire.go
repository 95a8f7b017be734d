package acp

import (
	"io"
	"sync"

	"github.com/acpgate/acpgate/internal/inputs/secrets"
)

// This file is the writer every frame to the editor goes through: one
// frame per write, or one frame in pieces (writeStream), each redacted.

// maxFrame is the largest message read from the client: a longer line is
// answered (or, an answer, fails the request it answers) without being
// read whole.
const maxFrame = 10<<20 - 1

// notificationQueue is how many of the client's notifications wait to be
// handled at most; a burst beyond it is dropped and counted (acp/jsonrpc),
// never the connection.
const notificationQueue = 1024

// requestsInFlight is how many of the client's requests are handled, or
// wait for their answer to be written, at most: one more is answered at
// once with -32603, and while that answer cannot be written (the client
// does not read) acpgate stops reading (acp/jsonrpc).
const requestsInFlight = 1024

// lockedWriter serialises whole-message writes to the client: the
// connection writes each message with one Write; a large update is
// written in pieces under one lock (writeStream). Every resolved secret is
// redacted from each frame: responses, updates, errors, cards (the
// contents of strings only, member names included, never the structure). A failed write means the client is
// gone: broken is closed, and Serve shuts down as it does on stdin EOF.
// Safe for concurrent use.
type lockedWriter struct {
	mu         sync.Mutex
	w          io.Writer
	redactor   *secrets.Redactor   // nil: nothing to redact
	stream     *secrets.JSONWriter // writeStream's redaction, reused; guarded by mu
	broken     chan struct{}       // closed at the first failed write
	brokenOnce sync.Once
}

// newLockedWriter returns a writer to w redacting r's values (r nil:
// none).
func newLockedWriter(w io.Writer, r *secrets.Redactor) *lockedWriter {
	return &lockedWriter{w: w, redactor: r, broken: make(chan struct{})}
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	frame := p
	if l.redactor != nil {
		frame = l.redactor.RedactJSON(frame)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.w.Write(frame)
	if err == nil && n < len(frame) {
		err = io.ErrShortWrite
	}
	if err != nil {
		l.brokenOnce.Do(func() { close(l.broken) })
		return 0, err
	}
	return len(p), nil
}

// writeStream writes one frame in pieces: write writes them, in order, to
// the writer it is given, and nothing else is written to the client
// meanwhile. The frame is redacted as a whole (a value split across two
// pieces is caught), so it must be one message.
func (l *lockedWriter) writeStream(write func(io.Writer) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.w
	if l.redactor != nil {
		if l.stream == nil {
			l.stream = l.redactor.JSONWriter(l.w)
		}
		w = l.stream
	}
	err := write(w)
	if l.stream != nil {
		if ferr := l.stream.Flush(); err == nil {
			err = ferr
		}
	}
	if err != nil {
		l.brokenOnce.Do(func() { close(l.broken) })
	}
	return err
}
