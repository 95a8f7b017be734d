package wire

import (
	"bytes"
	"io"

	"github.com/acpgate/acpgate/mcpclient/lines"
)

// StdoutLog is where JSONLines reports what it skips of a stdio server's
// stdout: the server's log gate, which redacts, bounds and rate-limits
// the server's own output. Allow takes a token for one line and reports
// whether it may be logged; Drop counts n lines skipped without asking;
// Wait blocks until a token is there again (bounded); StdoutJunk logs a
// skipped non-JSON line by its head and size; Warn logs a warning of
// JSONLines' own. It must be safe for concurrent use.
type StdoutLog interface {
	Allow() bool
	Drop(n int)
	Wait()
	StdoutJunk(head []byte, size int)
	Warn(msg string, args ...any)
}

// JSONLines is the reader the MCP transport reads a stdio server's stdout
// through. It passes on only lines that look like JSON-RPC messages (their
// first non-blank byte is '{' or '['), skips anything else with a warning,
// and bounds a message to max bytes, so a server printing junk or an
// endless line cannot corrupt the session or exhaust memory.
//
// It streams: a message's bytes are handed on as they arrive, read by Read
// or gathered by Next into a buffer of the message's own (the stdio
// transport reads through next). When a message passes max bytes, what was
// handed on is ended with a newline (the transport cannot parse it and
// skips it), the rest is only scanned,
// and if the message was a response, a made-up error response for its id
// takes its place, so the request fails at once (see TooLargeIDs).
//
// Everything read counts against the server's read budget (ReadBudget):
// over it, the pipe is read again only once the budget allows.
//
// Junk beyond the log budget slows the reading of this stdout only: once a
// junk line is refused a token, further junk lines are dropped without
// asking (no clock read per line), what is already read is still handed
// on, and the next read of the pipe waits for the budget's next token, so
// a server flooding junk blocks on its own full pipe. Messages are never
// dropped for the budget, only read later. Not safe for concurrent use
// (the transport has a single reader).
type JSONLines struct {
	lr       *lines.Reader
	max      int
	logs     StdoutLog
	tooLarge *TooLargeIDs
	budget   *ReadBudget // the server's read budget; nil: none
	// spentLines and spentBytes are read since the budget was last
	// settled (before each read of the pipe).
	spentLines, spentBytes int

	pending []byte // what Read has not handed out yet
	err     error  // the read error to return once pending is out
	mode    lineMode
	n       int // bytes of the current line so far
	scan    idScanner
	head    []byte // the start of a skipped non-JSON line, for the warning
	logJunk bool   // the rate limit lets the warning for this line through
	over    bool   // a junk line was refused a token: wait before reading more
	dropped int    // junk lines dropped since then without asking for a token
	nl      []byte // a newline, to hand out from
}

// lineMode is what JSONLines does with the current line.
type lineMode uint8

const (
	lineStart lineMode = iota // nothing but blanks seen yet
	lineJSON                  // a message being handed on
	lineJunk                  // a non-JSON line being skipped
	lineOver                  // a message over max being scanned
)

// junkHead is how much of a non-JSON line is kept for its warning.
const junkHead = 4 << 10

// NewJSONLines returns the reader of a stdio server's stdout r: messages
// up to max bytes, what it skips reported to logs, made-up answers
// recorded in tooLarge, what it reads charged to budget (nil: none).
func NewJSONLines(r io.Reader, max int, logs StdoutLog, tooLarge *TooLargeIDs, budget *ReadBudget) *JSONLines {
	return &JSONLines{lr: lines.NewReader(r, 64<<10), max: max, logs: logs, tooLarge: tooLarge, budget: budget, nl: []byte{'\n'}}
}

// Read implements io.Reader.
func (j *JSONLines) Read(p []byte) (int, error) {
	for len(j.pending) == 0 {
		if j.err != nil {
			return 0, j.err
		}
		j.step()
	}
	n := copy(p, j.pending)
	j.pending = j.pending[n:]
	return n, nil
}

// step reads the next fragment of stdout and sets pending to what of it
// is handed on (possibly nothing). Fragments are slices of lr's buffer,
// valid until the next step.
func (j *JSONLines) step() {
	if j.lr.Buffered() == 0 {
		// The pipe is read next: pay for what was read first.
		j.budget.Settle(j.spentLines, j.spentBytes)
		j.spentLines, j.spentBytes = 0, 0
		if j.over {
			j.logs.Drop(j.dropped)
			j.logs.Wait()
			j.over, j.dropped = false, 0
		}
	}
	frag, ended, err := j.lr.Next()
	j.spentBytes += len(frag)
	if ended {
		j.spentLines++
	}
	if err != nil {
		j.err = err
		j.logs.Drop(j.dropped)
		j.dropped = 0
	}
	if j.mode == lineStart {
		frag = bytes.TrimLeft(frag, " \t\r\n")
		switch {
		case len(frag) == 0:
			return
		case frag[0] == '{' || frag[0] == '[':
			j.mode, j.n = lineJSON, 0
			j.scan.reset()
		default:
			j.mode, j.n = lineJunk, 0
			j.head = j.head[:0]
			j.junkLine()
		}
	}
	j.n += len(frag)
	switch j.mode {
	case lineJSON:
		j.scan.write(frag)
		// The newline that ends a line is no part of the message: a
		// message of exactly max bytes is accepted whole.
		if size := j.n - endingNewline(frag, ended); size > j.max {
			j.mode = lineOver
			if j.n > len(frag) {
				j.pending = j.nl // end the part already handed on
			}
			break
		}
		j.pending = frag
		if ended {
			j.mode = lineStart
			if frag[len(frag)-1] != '\n' {
				j.pending = append(frag[:len(frag):len(frag)], '\n')
			}
		}
		return
	case lineOver:
		j.scan.write(frag)
	case lineJunk:
		if j.logJunk && len(j.head) < junkHead {
			j.head = append(j.head, frag[:min(len(frag), junkHead-len(j.head))]...)
		}
	}
	if ended {
		j.endSkipped()
	}
}

// junkLine decides whether the junk line starting now is logged: while
// over the budget it is only counted, otherwise it asks for a token.
func (j *JSONLines) junkLine() {
	if j.over {
		j.logJunk = false
		j.dropped++
		return
	}
	j.logJunk = j.logs.Allow()
	j.over = !j.logJunk
}

// notJSON reports a line handed on as a message that turned out not to be
// JSON (its first byte is '{' or '['): it is skipped with the warning of a
// junk line, within the log budget.
func (j *JSONLines) notJSON(line []byte) {
	if j.logs.Allow() {
		j.logs.StdoutJunk(line[:min(len(line), junkHead)], len(line))
	}
}

// endingNewline is 1 when frag ends its line with a newline, else 0.
func endingNewline(frag []byte, ended bool) int {
	if ended && len(frag) > 0 && frag[len(frag)-1] == '\n' {
		return 1
	}
	return 0
}

// endSkipped finishes a line that was not handed on: it is logged, and an
// over-long response is answered with a made-up error.
func (j *JSONLines) endSkipped() {
	mode := j.mode
	j.mode = lineStart
	if mode == lineJunk {
		if j.logJunk {
			j.logs.StdoutJunk(bytes.TrimRight(j.head, "\r\n"), j.n)
		}
		return
	}
	id, ok := j.scan.responseID()
	if ok {
		j.pending = append(j.pending, j.tooLarge.add(id, j.n, j.max)...)
	}
	if j.logs.Allow() {
		j.logs.Warn("discarded over-long message on server stdout", "bytes", j.n, "max", j.max, "answered_request", ok)
	}
}

// Next returns the next message handed on, without its newline, in a
// buffer of its own that is never written to again (so it may be kept, or
// sliced by decoders, without copying). A message that arrives in several
// fragments is gathered fragment by fragment, then joined once. It returns
// the read error once stdout ends.
func (j *JSONLines) Next() ([]byte, error) {
	var parts [][]byte
	size := 0
	for {
		for len(j.pending) == 0 {
			if j.err != nil {
				return nil, j.err
			}
			j.step()
		}
		i := bytes.IndexByte(j.pending, '\n')
		if i < 0 {
			parts = append(parts, bytes.Clone(j.pending))
			size += len(j.pending)
			j.pending = nil
			continue
		}
		last := j.pending[:i]
		j.pending = j.pending[i+1:]
		line := make([]byte, 0, size+len(last))
		for _, p := range parts {
			line = append(line, p...)
		}
		return append(line, last...), nil
	}
}
