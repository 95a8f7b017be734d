package mcpclient

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/mcpclient/wire"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time         { return c.t }
func (c *fakeClock) add(d time.Duration)    { c.t = c.t.Add(d) }
func countRecords(logs, msg string) (n int) { return strings.Count(logs, "msg=\""+msg+"\"") }

func TestLogGateTokenBucket(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	clock := &fakeClock{t: time.Unix(1000, 0)}
	g := newLogGate(slog.New(slog.NewTextHandler(&logs, nil)), nil, 10, 5, clock.now)
	allowed := 0
	for range 100 { // a burst at one instant: only the bucket's 5
		if g.Allow() {
			allowed++
		}
	}
	if allowed != 5 {
		t.Fatalf("allowed %d of 100 at once, want the burst of 5", allowed)
	}
	const drop = "server output over the log rate limit: lines dropped"
	if n := countRecords(logs.String(), drop); n != 1 {
		t.Fatalf("%d drop reports for one instant, want 1:\n%s", n, logs.String())
	}
	// Two seconds of 100 lines a second: 10 a second get through, and one
	// report a second says how many did not.
	for range 200 {
		clock.add(10 * time.Millisecond)
		if g.Allow() {
			allowed++
		}
	}
	if allowed != 5+20 {
		t.Fatalf("allowed %d, want 25", allowed)
	}
	if n := countRecords(logs.String(), drop); n > 1+2+20 {
		t.Fatalf("%d drop reports in 2s", n)
	}
	// After a pause the count left over is reported before the next line.
	clock.add(time.Hour)
	g.Allow()
	g.flush()
	total := 0
	for _, l := range strings.Split(logs.String(), "\n") {
		for _, f := range strings.Fields(l) {
			if v, ok := strings.CutPrefix(f, "dropped="); ok {
				n, _ := strconv.Atoi(v)
				total += n
			}
		}
	}
	if total != 300-25 {
		t.Fatalf("reports count %d dropped lines, want %d:\n%s", total, 300-25, logs.String())
	}
}

func TestStderrLinesRedactWholeLines(t *testing.T) {
	t.Parallel()
	const secret = "sk-THIS-IS-THE-SECRET-VALUE"
	redact := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte(secret), []byte("[REDACTED]")) }
	for _, tc := range []struct {
		name string
		size int // line length
		at   int // where the secret starts
	}{
		{"across 8192", 20 << 10, 8192 - len(secret)/2},
		{"across the cut", 300 << 10, maxLogLine - len(secret)/2},
		{"far beyond the cut", 300 << 10, 200 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := bytes.Repeat([]byte("b"), tc.size)
			copy(line[tc.at:], secret)
			in := string(line) + "\nshort line " + secret + "\n"
			var logs bytes.Buffer
			g := newLogGate(slog.New(slog.NewTextHandler(&logs, nil)), redact, 0, 0, time.Now)
			tail := newTailBuffer(2048)
			g.stderrLines(strings.NewReader(in), tail)
			out := logs.String()
			for _, part := range []string{secret[:8], secret[len(secret)-8:]} {
				if strings.Contains(out, part) || strings.Contains(tail.String(), part) {
					t.Fatalf("part %q of the secret escaped:\n%.300s", part, out)
				}
			}
			if n := countRecords(out, "server stderr"); n != 2 {
				t.Fatalf("%d records for 2 lines", n)
			}
			if tc.size > maxLogLine && !strings.Contains(out, "cut_bytes=") {
				t.Error("cut line not marked")
			}
		})
	}
}

func TestTailBufferBigWrite(t *testing.T) {
	t.Parallel()
	tb := newTailBuffer(16)
	tb.Write(bytes.Repeat([]byte("x"), 1<<20))
	tb.Write([]byte("\nend\n"))
	if got := tb.String(); got != "end" {
		t.Fatalf("got %q", got)
	}
	if cap(tb.buf) > 64 {
		t.Fatalf("tail buffer holds %d bytes", cap(tb.buf))
	}
}

// An over-long response is replaced by a made-up error for its id, and the
// part already handed on is ended so the transport skips it.
func TestJSONLinesOverLongResponse(t *testing.T) {
	t.Parallel()
	const max = 100 << 10
	big := `{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"` + strings.Repeat("a", 300<<10) + `"}]},"id":7}`
	in := big + "\n" + `{"jsonrpc":"2.0","id":8,"result":{}}` + "\n"
	ids := &wire.TooLargeIDs{}
	var logs bytes.Buffer
	j := wire.NewJSONLines(strings.NewReader(in), max, newLogGate(slog.New(slog.NewTextHandler(&logs, nil)), nil, 0, 0, time.Now), ids, nil)
	br := bufio.NewReader(j)
	var lines []string
	for {
		l, err := br.ReadString('\n')
		if l != "" {
			lines = append(lines, l)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3 (cut part, made-up error, next)", len(lines))
	}
	if len(lines[0]) > max+1 || json.Valid([]byte(lines[0])) {
		t.Errorf("cut part: %d bytes, valid %v", len(lines[0]), json.Valid([]byte(lines[0])))
	}
	var resp transport.JSONRPCResponse
	if err := json.Unmarshal([]byte(lines[1]), &resp); err != nil || resp.Error == nil || resp.ID.String() != mcp.NewRequestId(int64(7)).String() {
		t.Fatalf("made-up line %q: %v", lines[1], err)
	}
	if !ids.Take(&resp) || ids.Take(&resp) {
		t.Error("the made-up answer is not recognised exactly once")
	}
	if !strings.Contains(lines[2], `"id":8`) {
		t.Errorf("next message: %q", lines[2])
	}
	if !strings.Contains(logs.String(), "answered_request=true") {
		t.Errorf("logs: %s", logs.String())
	}
}

// A message of exactly the maximum size is accepted whole (its newline is
// no part of it); one byte more is over the limit, and only then is the
// made-up error sent.
func TestJSONLinesLimitIsTheMessage(t *testing.T) {
	t.Parallel()
	msg := `{"jsonrpc":"2.0","id":7,"result":{"x":"` + strings.Repeat("a", 100<<10) + `"}}`
	for _, tc := range []struct {
		max     int
		wantErr bool
	}{{len(msg), false}, {len(msg) - 1, true}} {
		ids := &wire.TooLargeIDs{}
		j := wire.NewJSONLines(strings.NewReader(msg+"\n"), tc.max, newLogGate(slog.New(slog.DiscardHandler), nil, 0, 0, time.Now), ids, nil)
		var got []string
		for {
			line, err := j.Next()
			if err != nil {
				break
			}
			got = append(got, string(line))
		}
		switch {
		case !tc.wantErr && (len(got) != 1 || got[0] != msg):
			t.Errorf("max %d: got %d messages, want the message whole", tc.max, len(got))
		case tc.wantErr && (len(got) == 0 || !strings.Contains(got[len(got)-1], `"error"`) || json.Valid([]byte(got[0])) && len(got[0]) == len(msg)):
			t.Errorf("max %d: got %d messages, want a cut part and a made-up error", tc.max, len(got))
		}
	}
}
