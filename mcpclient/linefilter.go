package mcpclient

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log/slog"
)

// jsonLines is the reader the MCP transport reads a stdio server's stdout
// through. It passes on only lines that look like JSON-RPC messages (their
// first non-blank byte is '{' or '['), skips anything else with a warning,
// and discards lines longer than max bytes, so a server printing junk or an
// endless line cannot corrupt the session or exhaust memory. Not safe for
// concurrent use (the transport has a single reader).
type jsonLines struct {
	br      *bufio.Reader
	max     int
	logger  *slog.Logger
	line    []byte // the line being assembled
	pending []byte // what Read has not handed out yet
}

func newJSONLines(r io.Reader, max int, logger *slog.Logger) *jsonLines {
	return &jsonLines{br: bufio.NewReaderSize(r, 64<<10), max: max, logger: logger}
}

// Read implements io.Reader.
func (j *jsonLines) Read(p []byte) (int, error) {
	for len(j.pending) == 0 {
		line, err := j.nextLine()
		if line != nil {
			j.pending = line
			break
		}
		if err != nil {
			return 0, err
		}
	}
	n := copy(p, j.pending)
	j.pending = j.pending[n:]
	return n, nil
}

// nextLine returns the next acceptable line, newline included, or nil and
// the read error.
func (j *jsonLines) nextLine() ([]byte, error) {
	j.line = j.line[:0]
	dropped := 0
	for {
		frag, err := j.br.ReadSlice('\n')
		switch {
		case dropped > 0:
			dropped += len(frag)
		case len(j.line)+len(frag) > j.max:
			dropped = len(j.line) + len(frag)
			j.line = j.line[:0]
		default:
			j.line = append(j.line, frag...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if dropped > 0 {
			j.logger.Warn("skipped over-long line on server stdout", "bytes", dropped, "max", j.max)
			if err != nil {
				return nil, err
			}
			j.line = j.line[:0]
			dropped = 0
			continue
		}
		trimmed := bytes.TrimSpace(j.line)
		if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
			if j.line[len(j.line)-1] != '\n' {
				j.line = append(j.line, '\n')
			}
			return j.line, nil
		}
		if len(trimmed) > 0 {
			j.logger.Warn("skipped non-JSON line on server stdout", "line", truncate(string(trimmed), 200))
		}
		if err != nil {
			return nil, err
		}
		j.line = j.line[:0]
	}
}

// truncate shortens s to at most n bytes, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
