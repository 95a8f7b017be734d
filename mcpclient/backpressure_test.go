package mcpclient

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acpgate/acpgate/mcpclient/wire"
)

// waitClock is a clock that moves only when the gate waits: its sleep
// advances it by the wait, and reports each wait on waits (if set) and
// blocks until released. It counts its reads.
type waitClock struct {
	mu    sync.Mutex
	t     time.Time
	reads int
	waits chan time.Duration // nil: waits return at once
	go_   chan struct{}
}

func newWaitClock(blocking bool) *waitClock {
	c := &waitClock{t: time.Unix(1000, 0)}
	if blocking {
		c.waits, c.go_ = make(chan time.Duration), make(chan struct{})
	}
	return c
}

func (c *waitClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	return c.t
}

func (c *waitClock) sleep(d time.Duration) {
	if c.waits != nil {
		c.waits <- d
		<-c.go_
	}
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func (c *waitClock) clockReads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}

// droppedTotal sums the counts of the drop reports in logs.
func droppedTotal(logs string) int {
	total := 0
	for _, f := range strings.Fields(logs) {
		if v, ok := strings.CutPrefix(f, "dropped="); ok {
			n, _ := strconv.Atoi(v)
			total += n
		}
	}
	return total
}

// A server writing stderr beyond the budget finds its pipe full while the
// gate waits for a token: it would block. Each wait lets one line through
// and skips what the pipe held in one piece, with a few clock reads, not
// one per line; every line is logged or counted as dropped.
func TestStderrOverBudgetFillsThePipe(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var logs bytes.Buffer
	clock := newWaitClock(true)
	g := newLogGate(slog.New(slog.NewTextHandler(&logs, nil)), nil, 10, 2, clock.now)
	g.sleep = clock.sleep
	tail := newTailBuffer(2048)
	done := make(chan struct{})
	go func() { defer close(done); g.stderrLines(r, tail) }()

	line := func(i int) []byte { return fmt.Appendf(nil, "line %d %s\n", i, strings.Repeat("x", 1000)) }
	fd := int(w.Fd()) // written with write(2), to see EAGAIN
	written := 0
	for range 4 { // the burst of 2, one over it, and one to skip
		written++
		if _, err := syscall.Write(fd, line(written)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	for wait := range 2 {
		<-clock.waits
		// While the reader waits, the pipe fills: a server's next write
		// would block (each line is written whole or not at all).
		full := false
		for !full {
			_, err := syscall.Write(fd, line(written+1))
			switch {
			case errors.Is(err, syscall.EAGAIN):
				full = true
			case err != nil:
				t.Fatal(err)
			default:
				written++
			}
		}
		if wait == 1 {
			break
		}
		clock.go_ <- struct{}{}
	}
	w.Close()
	clock.go_ <- struct{}{}
	for finished := false; !finished; { // the rest: one buffer per wait
		select {
		case <-clock.waits:
			clock.go_ <- struct{}{}
		case <-done:
			finished = true
		}
	}
	logged := countRecords(logs.String(), "server stderr")
	if dropped := droppedTotal(logs.String()); logged+dropped != written {
		t.Errorf("%d lines logged and %d dropped of %d written", logged, dropped, written)
	}
	if reads := clock.clockReads(); reads > written/4 {
		t.Errorf("%d clock reads for %d lines", reads, written)
	}
	if want := fmt.Sprintf("line %d ", written); !strings.Contains(tail.String(), want) {
		t.Errorf("tail does not end with the last line %q: %.80q", want, tail.String())
	}
}

// lineByLine hands out one line per Read, as a pipe read as fast as a
// server writes lines would; it counts the reads.
type lineByLine struct {
	lines []string
	reads int
}

func (l *lineByLine) Read(p []byte) (int, error) {
	if len(l.lines) == 0 {
		return 0, io.EOF
	}
	l.reads++
	n := copy(p, l.lines[0])
	l.lines[0] = l.lines[0][n:]
	if l.lines[0] == "" {
		l.lines = l.lines[1:]
	}
	return n, nil
}

// Junk on stdout beyond the budget makes the reader wait before each
// further read of the pipe, while the messages among the junk are all
// handed on, whole and in order; junk lines are logged or counted, never
// one clock read each.
func TestStdoutJunkOverBudgetWaits(t *testing.T) {
	t.Parallel()
	var in []string
	const junk = 300
	for i := range 3 * junk {
		if i%junk == junk-1 {
			in = append(in, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`+"\n", i/junk))
			continue
		}
		in = append(in, fmt.Sprintf("junk %d\n", i))
	}
	clock := newWaitClock(false)
	waits := 0
	var logs bytes.Buffer
	g := newLogGate(slog.New(slog.NewTextHandler(&logs, nil)), nil, 10, 5, clock.now)
	g.sleep = func(d time.Duration) { waits++; clock.sleep(d) }
	src := &lineByLine{lines: in}
	j := wire.NewJSONLines(src, 1<<20, g, &wire.TooLargeIDs{}, nil)
	var got []string
	for {
		msg, err := j.Next()
		if err != nil {
			break
		}
		got = append(got, string(msg))
	}
	g.flush()
	for i, m := range got {
		if want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, i); m != want {
			t.Fatalf("message %d: %q, want %q", i, m, want)
		}
	}
	if len(got) != 3 {
		t.Fatalf("%d messages, want 3", len(got))
	}
	logged := countRecords(logs.String(), "skipped non-JSON line on server stdout")
	if dropped := droppedTotal(logs.String()); logged+dropped != 3*(junk-1) {
		t.Errorf("%d junk lines logged and %d dropped, want %d", logged, dropped, 3*(junk-1))
	}
	// Over the budget the pipe is read only after a wait: besides the
	// burst's 5 lines and the 3 messages, a wait lets through one read for
	// its token's line and one for the line it refuses.
	if src.reads > 5+3+2*waits+1 {
		t.Errorf("%d reads with %d waits", src.reads, waits)
	}
	if 2*waits < 3*(junk-1)-5-2 {
		t.Errorf("%d waits for %d junk lines: the reader did not slow down", waits, 3*(junk-1))
	}
	if reads := clock.clockReads(); reads > 4*waits+10 {
		t.Errorf("%d clock reads for %d waits", reads, waits)
	}
}

// Valid messages count against the read budget too: a server that sends
// more than the budget's burst of them is read more slowly (the reader
// waits before reading the pipe again, for as long as the rate says),
// and every message is still handed on, in order. So is an endless line,
// by its bytes.
func TestReadBudgetSlowsEveryKindOfMessage(t *testing.T) {
	t.Parallel()
	const extra = 3000 // messages over the burst: 3 s at the rate
	var in []string
	for i := range wire.BudgetLineBurst + extra {
		in = append(in, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":%d}}`+"\n", i))
	}
	clock := newWaitClock(false)
	var slept time.Duration
	budget := wire.NewReadBudget(clock.now, func(d time.Duration) { slept += d; clock.sleep(d) })
	src := &lineByLine{lines: slices.Clone(in)}
	j := wire.NewJSONLines(src, 1<<20, newLogGate(slog.New(slog.DiscardHandler), nil, 0, 0, clock.now), &wire.TooLargeIDs{}, budget)
	n := 0
	for {
		msg, err := j.Next()
		if err != nil {
			break
		}
		if want := strings.TrimSuffix(in[n], "\n"); string(msg) != want {
			t.Fatalf("message %d: %q, want %q", n, msg, want)
		}
		n++
	}
	if n != len(in) {
		t.Fatalf("%d messages handed on, want %d", n, len(in))
	}
	want := time.Duration(extra) * time.Second / wire.BudgetLineRate
	if slept < want*9/10 || slept > want*11/10 {
		t.Errorf("waited %s for %d messages over the burst, want about %s", slept, extra, want)
	}

	// An endless line: its bytes over the burst cost their time too.
	slept = 0
	budget = wire.NewReadBudget(clock.now, func(d time.Duration) { slept += d; clock.sleep(d) })
	const size = wire.BudgetByteBurst + wire.BudgetByteRate // one second over the burst
	line := io.MultiReader(strings.NewReader("{"), io.LimitReader(endless{}, size))
	j = wire.NewJSONLines(line, 1<<20, newLogGate(slog.New(slog.DiscardHandler), nil, 0, 0, clock.now), &wire.TooLargeIDs{}, budget)
	if _, err := io.Copy(io.Discard, j); err != nil {
		t.Fatal(err)
	}
	if slept < 900*time.Millisecond || slept > 1100*time.Millisecond {
		t.Errorf("waited %s for an endless line one second of bytes over the burst", slept)
	}
}

// endless is 'x' forever, with no newline.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}
