package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/time/rate"

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
// three paths (x/time/rate): rate lines per second, up to burst at once. While it drops,
// one record a second says how many lines were dropped. Deciding to drop
// a line costs a lock and a clock read; a reader over the budget instead
// skips what it reads in bulk (drop) and waits for the next token (wait)
// before reading more, so that a flooding server is slowed by its own full
// pipe rather than costing acpgate CPU. Safe for concurrent use.
type logGate struct {
	logger *slog.Logger
	redact func([]byte) []byte // nil: none
	now    func() time.Time
	sleep  func(time.Duration) // how wait waits: time.Sleep
	lim    *rate.Limiter       // nil: no limit; read at now()

	mu       sync.Mutex
	dropped  int       // lines dropped since the last report
	reported time.Time // when the last report of dropped lines was made
}

// newLogGate returns a gate writing to logger: perSecond lines a second,
// burst at once. perSecond <= 0 turns the limit off; now is the clock the
// bucket reads.
func newLogGate(logger *slog.Logger, redact func([]byte) []byte, perSecond, burst int, now func() time.Time) *logGate {
	g := &logGate{logger: logger, redact: redact, now: now, sleep: time.Sleep}
	if perSecond > 0 {
		g.lim = rate.NewLimiter(rate.Limit(perSecond), burst)
	}
	return g
}

// Allow takes a token for one line and reports whether the line may be
// logged. A dropped line is only counted: the first drop and then at most
// one record a second report the count (flush reports what is left).
func (g *logGate) Allow() bool {
	if g.lim == nil {
		return true
	}
	now := g.now()
	ok := g.lim.AllowN(now, 1)
	g.mu.Lock()
	if !ok {
		g.dropped++
	}
	report := g.due(now)
	g.mu.Unlock()
	if report > 0 {
		g.reportDropped(report)
	}
	return ok
}

// Drop counts n lines dropped without asking for tokens: lines a reader
// over the budget skipped in bulk. It reads the clock once.
func (g *logGate) Drop(n int) {
	if n <= 0 || g.lim == nil {
		return
	}
	g.mu.Lock()
	now := g.now()
	g.dropped += n
	report := g.due(now)
	g.mu.Unlock()
	if report > 0 {
		g.reportDropped(report)
	}
}

// maxWait bounds one wait for a token, so that a reader waiting at a low
// rate still notices soon that its stream has ended.
const maxWait = 100 * time.Millisecond

// Wait blocks until the bucket holds a token again (at most maxWait). A
// reader over the budget calls it before its next read, so that a server
// writing more than the budget finds its pipe full and its writes blocked,
// instead of acpgate reading lines only to drop them.
func (g *logGate) Wait() {
	if g.lim == nil {
		return
	}
	need := 1 - g.lim.TokensAt(g.now())
	if need <= 0 {
		return
	}
	g.sleep(min(time.Duration(math.Ceil(need/float64(g.lim.Limit())*float64(time.Second))), maxWait))
}

// due returns the count of dropped lines to report now, if any: the first
// drop, then at most one report a second. g.mu is held.
func (g *logGate) due(now time.Time) int {
	if g.dropped == 0 || !g.reported.IsZero() && now.Sub(g.reported) < time.Second {
		return 0
	}
	n := g.dropped
	g.dropped, g.reported = 0, now
	return n
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
	g.logger.Warn("server output over the log rate limit: lines dropped", "dropped", n, "per_second", float64(g.lim.Limit()), "burst", g.lim.Burst())
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

// Warn logs a warning about the server's output (wire.JSONLines' own,
// such as a discarded over-long message); the caller has taken a token
// with Allow. With Allow, Drop, Wait and StdoutJunk it makes the gate a
// wire.StdoutLog.
func (g *logGate) Warn(msg string, args ...any) { g.logger.Warn(msg, args...) }

// StdoutJunk logs a non-JSON line found on a server's stdout, given its
// first bytes and its length; the caller has taken a token with Allow.
func (g *logGate) StdoutJunk(head []byte, size int) {
	clean, cut := g.clean(head, 200)
	if cut > 0 || size > len(head) {
		g.logger.Warn("skipped non-JSON line on server stdout", "line", string(clean)+"…", "bytes", size)
		return
	}
	g.logger.Warn("skipped non-JSON line on server stdout", "line", string(clean))
}

// serverLog logs a notifications/message from the server at level.
func (g *logGate) serverLog(level slog.Level, mcpLevel, name string, data any) {
	if !g.Allow() {
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
// Once a line is dropped, what the pipe holds is skipped in one piece
// (skipChunk) and the next read waits for a token: over the budget, stderr
// is read one buffer per token, not one line per read.
func (g *logGate) stderrLines(r io.Reader, tail *tailBuffer) {
	defer g.flush()
	lr := lines.NewReader(r, 64<<10)
	var buf []byte
	inLine := false // a skipped chunk ended inside a line
	for {
		if inLine { // the rest of that line is dropped too
			_, n, err := lr.Line(buf, 0)
			if err == nil || n > 0 {
				g.Drop(1)
			}
			if err != nil {
				return
			}
			inLine = false
		}
		line, n, err := lr.Line(buf, 2*maxLogLine)
		logged := true
		if n > 0 { // empty lines are neither logged nor kept
			logged = g.stderrLine(tail, line, n-len(line))
		}
		if err != nil {
			return
		}
		buf = line
		if !logged {
			chunk, err := lr.Skip()
			if err != nil {
				return
			}
			inLine = g.skipChunk(chunk, tail)
			g.Wait()
		}
	}
}

// skipChunk drops the lines of a chunk of stderr that begins at a line
// start: it counts them and writes the last whole ones (redacted) to tail.
// It reports whether the chunk ends inside a line.
func (g *logGate) skipChunk(chunk []byte, tail *tailBuffer) (inLine bool) {
	n := bytes.Count(chunk, []byte{'\n'})
	g.Drop(n)
	whole := chunk[:bytes.LastIndexByte(chunk, '\n')+1]
	from := len(whole) // the last lines, tail.size bytes of them or more
	for from > 0 && len(whole)-from < tail.size {
		from = bytes.LastIndexByte(whole[:from-1], '\n') + 1
	}
	for l := range bytes.Lines(whole[from:]) {
		l = bytes.TrimSuffix(bytes.TrimSuffix(l, []byte{'\n'}), []byte{'\r'})
		if len(l) == 0 {
			continue
		}
		clean, _ := g.clean(l, maxLogLine)
		tail.Write(clean)
		tail.Write([]byte{'\n'})
	}
	return len(whole) < len(chunk)
}

// stderrLine handles one stderr line; skipped is how many bytes of it were
// not read into line. It reports whether the rate limit let it be logged.
func (g *logGate) stderrLine(tail *tailBuffer, line []byte, skipped int) bool {
	clean, cut := g.clean(line, maxLogLine)
	cut += skipped
	tail.Write(clean)
	tail.Write([]byte{'\n'})
	if !g.Allow() {
		return false
	}
	if cut > 0 {
		g.logger.Info("server stderr", "line", string(clean), "cut_bytes", cut)
		return true
	}
	g.logger.Info("server stderr", "line", string(clean))
	return true
}
