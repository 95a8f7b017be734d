package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/acpgate/acpgate/mcpclient/lines"
)

// Defaults of the per-server log rate limit (Options.LogRate, LogBurst).
const (
	DefaultLogRate  = 50  // lines per second
	DefaultLogBurst = 100 // lines logged at once before the rate applies
)

// maxLogLine bounds one logged line of a server's output (a stderr line, a
// notifications/message's data): longer ones are cut, with a note.
const maxLogLine = 64 << 10

// logGate is the one way a server's own output reaches the log: its stderr
// lines, the stray lines on its stdout and its notifications/message. It
// redacts each line whole before anything cuts it, bounds its length, and
// rate-limits the lines of one server with a token bucket shared by the
// three paths: rate lines per second, up to burst at once. While it drops,
// one record a second says how many lines were dropped. Deciding to drop
// costs a lock and a clock read, nothing else. Safe for concurrent use.
type logGate struct {
	logger *slog.Logger
	redact func([]byte) []byte // nil: none
	now    func() time.Time
	rate   int64 // tokens per second; <= 0: no limit
	burst  int64

	mu       sync.Mutex
	tokens   int64     // in billionths of a token, so refills are exact
	last     time.Time // when tokens were last refilled
	dropped  int       // lines dropped since the last report
	reported time.Time // when the last report of dropped lines was made
}

// token is one token in logGate.tokens.
const token = int64(time.Second)

// newLogGate returns a gate writing to logger. rate <= 0 turns the limit
// off; now is the clock the bucket reads.
func newLogGate(logger *slog.Logger, redact func([]byte) []byte, rate, burst int, now func() time.Time) *logGate {
	return &logGate{
		logger: logger, redact: redact, now: now,
		rate: int64(rate), burst: int64(burst), tokens: int64(burst) * token, last: now(),
	}
}

// allow takes a token for one line and reports whether the line may be
// logged. A dropped line is only counted: the first drop and then at most
// one record a second report the count (flush reports what is left).
func (g *logGate) allow() bool {
	if g.rate <= 0 {
		return true
	}
	g.mu.Lock()
	now := g.now()
	if dt := now.Sub(g.last); dt > 0 {
		dt = min(dt, time.Duration(g.burst)*time.Second) // a full bucket; no overflow
		g.tokens = min(g.burst*token, g.tokens+int64(dt)*g.rate)
		g.last = now
	}
	ok := g.tokens >= token
	if ok {
		g.tokens -= token
	} else {
		g.dropped++
	}
	var report int
	if g.dropped > 0 && (g.reported.IsZero() || now.Sub(g.reported) >= time.Second) {
		report, g.dropped, g.reported = g.dropped, 0, now
	}
	g.mu.Unlock()
	if report > 0 {
		g.reportDropped(report)
	}
	return ok
}

// flush reports the lines dropped and not yet reported.
func (g *logGate) flush() {
	g.mu.Lock()
	n := g.dropped
	g.dropped = 0
	g.mu.Unlock()
	if n > 0 {
		g.reportDropped(n)
	}
}

func (g *logGate) reportDropped(n int) {
	g.logger.Warn("server output over the log rate limit: lines dropped", "dropped", n, "per_second", g.rate, "burst", g.burst)
}

// clean returns line redacted (whole) and then cut to at most max bytes at
// a character boundary, and how many bytes the cut dropped.
func (g *logGate) clean(line []byte, max int) ([]byte, int) {
	if g.redact != nil {
		line = g.redact(line)
	}
	if len(line) <= max {
		return line, 0
	}
	kept := max
	for kept > 0 && kept > max-utf8.UTFMax && !utf8.RuneStart(line[kept]) {
		kept--
	}
	return line[:kept], len(line) - kept
}

// stdoutJunk logs a non-JSON line found on a server's stdout, given its
// first bytes and its length; the caller has taken a token with allow.
func (g *logGate) stdoutJunk(head []byte, size int) {
	clean, cut := g.clean(head, 200)
	if cut > 0 || size > len(head) {
		g.logger.Warn("skipped non-JSON line on server stdout", "line", string(clean)+"…", "bytes", size)
		return
	}
	g.logger.Warn("skipped non-JSON line on server stdout", "line", string(clean))
}

// serverLog logs a notifications/message from the server at level.
func (g *logGate) serverLog(level slog.Level, mcpLevel, name string, data any) {
	if !g.allow() {
		return
	}
	attrs := []any{"mcp_level", mcpLevel}
	if name != "" {
		attrs = append(attrs, "logger", name)
	}
	var raw []byte
	switch d := data.(type) {
	case string:
		raw = []byte(d)
	case nil:
	default:
		if b, err := json.Marshal(d); err == nil {
			raw = b
		} else {
			raw = []byte(fmt.Sprint(d))
		}
	}
	if raw != nil {
		clean, cut := g.clean(raw, maxLogLine)
		attrs = append(attrs, "data", string(clean))
		if cut > 0 {
			attrs = append(attrs, "cut_bytes", cut)
		}
	}
	g.logger.Log(context.Background(), level, "server log", attrs...)
}

// stderrLines reads a server's stderr until it ends. Each line is redacted
// whole (a line longer than maxLogLine: its first 2×maxLogLine bytes, so a
// secret of up to maxLogLine bytes across the cut is still caught), then
// cut to maxLogLine, written to tail and, as the rate limit allows, logged.
func (g *logGate) stderrLines(r io.Reader, tail *tailBuffer) {
	defer g.flush()
	lr := lines.NewReader(r, 64<<10)
	var buf []byte
	for {
		line, n, err := lr.Line(buf, 2*maxLogLine)
		if n > 0 {
			g.stderrLine(tail, line, n-len(line))
		}
		if err != nil {
			return
		}
		buf = line
	}
}

// stderrLine handles one stderr line; skipped is how many bytes of it were
// not read into line.
func (g *logGate) stderrLine(tail *tailBuffer, line []byte, skipped int) {
	clean, cut := g.clean(line, maxLogLine)
	cut += skipped
	tail.Write(clean)
	tail.Write([]byte{'\n'})
	if !g.allow() {
		return
	}
	if cut > 0 {
		g.logger.Info("server stderr", "line", string(clean), "cut_bytes", cut)
		return
	}
	g.logger.Info("server stderr", "line", string(clean))
}
