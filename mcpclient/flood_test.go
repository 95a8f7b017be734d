package mcpclient_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/mark3labs/mcp-go/mcp"
)

// spanClock is time.Now that remembers the first and last time it was read.
type spanClock struct {
	mu          sync.Mutex
	first, last time.Time
}

func (c *spanClock) now() time.Time {
	t := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.first.IsZero() {
		c.first = t
	}
	c.last = t
	return t
}

func (c *spanClock) span() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last.Sub(c.first)
}

const dropMsg = "server output over the log rate limit: lines dropped"

// recordsOf counts the log records of server with one of msgs.
func recordsOf(logs, server string, msgs ...string) int {
	n := 0
	for _, l := range strings.Split(logs, "\n") {
		if !strings.Contains(l, " server="+server+" ") && !strings.HasSuffix(l, " server="+server) {
			continue
		}
		for _, m := range msgs {
			if strings.Contains(l, "msg=\""+m+"\"") {
				n++
				break
			}
		}
	}
	return n
}

// A server flooding stderr, its stdout or log notifications makes at most
// burst + rate × elapsed log records (elapsed as the rate limit's own clock
// saw it), plus one count of dropped lines a second; another server of the
// same Manager answers calls meanwhile.
func TestFloodingServerIsRateLimited(t *testing.T) {
	testbin.SkipIfShort(t, "floods a server's output 20,000 lines three ways (about 30 s)")
	const lines = 20000
	for _, kind := range []string{"stderr", "stdout", "notify"} {
		t.Run(kind, func(t *testing.T) {
			opts, logs := fastOpts(t)
			clock := &spanClock{}
			opts.Clock = clock.now
			m := start(t, opts, stdio("flood"), stdio("calm"))
			flooded := make(chan error, 1)
			go func() {
				_, err := m.CallTool(context.Background(), "flood", "flood", map[string]any{"kind": kind, "lines": lines})
				flooded <- err
			}()
			testbin.WaitFor(t, "lines dropped", func() bool { return strings.Contains(logs.String(), dropMsg) })
			if got := text(t, call(t, m, "calm", "echo", map[string]any{"text": "still here"})); got != "still here" {
				t.Errorf("calm server answered %q", got)
			}
			if err := <-flooded; err != nil {
				t.Fatal(err)
			}
			if kind == "stderr" { // stderr is its own pipe: wait until it is read
				last := fmt.Sprintf("flood line %d", lines)
				testbin.WaitFor(t, "all of stderr read", func() bool {
					st, _ := m.Status("flood")
					return strings.HasSuffix(st.Stderr, last)
				})
			}
			out := logs.String()
			span := clock.span()
			logged := recordsOf(out, "flood", "server stderr", "skipped non-JSON line on server stdout", "server log")
			limit := mcpclient.DefaultLogBurst + int(float64(mcpclient.DefaultLogRate)*span.Seconds())
			if logged > limit || logged == 0 {
				t.Errorf("%d records of %d lines in %s, want 1..%d", logged, lines, span, limit)
			}
			if reports := recordsOf(out, "flood", dropMsg); reports > 2+int(span.Seconds()) {
				t.Errorf("%d reports of dropped lines in %s", reports, span)
			}
		})
	}
}

// A stderr line longer than any read buffer is redacted whole: a secret
// across byte 8192 does not escape in pieces, in the log or the stderr tail.
func TestStderrSecretAcrossCut(t *testing.T) {
	t.Parallel()
	const secret = "sk-live-0123456789abcdef0123456789"
	opts, logs := fastOpts(t)
	opts.Redact = func(b []byte) []byte { return []byte(strings.ReplaceAll(string(b), secret, "[REDACTED]")) }
	m := start(t, opts, stdio("s"))
	line := []byte(strings.Repeat("b", 20<<10))
	copy(line[8192-len(secret)/2:], secret)
	copy(line[len(line)-3:], "END")
	call(t, m, "s", "stderr", map[string]any{"text": string(line)})
	testbin.WaitFor(t, "the line in the tail and the log", func() bool {
		st, _ := m.Status("s") // the tail is written before the log record
		return strings.HasSuffix(st.Stderr, "END") && strings.Contains(logs.String(), `msg="server stderr"`)
	})
	st, _ := m.Status("s")
	out := logs.String()
	for _, part := range []string{secret[:10], secret[len(secret)-10:]} {
		if strings.Contains(out, part) || strings.Contains(st.Stderr, part) {
			t.Fatalf("part %q of the secret escaped redaction", part)
		}
	}
	if !strings.Contains(out, "[REDACTED]") {
		t.Error("the secret was not redacted")
	}
	if n := strings.Count(out, `msg="server stderr"`); n != 1 {
		t.Errorf("the line was logged as %d records", n)
	}
}

// A response over MaxMessageSize fails its call at once with
// ErrResponseTooLarge, and the server stays usable (over legacy SSE, whose
// one stream carries every answer, after it reconnected).
func TestResponseTooLarge(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode   string
		stream bool // over http: the answer is an event stream
	}{{"stdio", false}, {"http", false}, {"http", true}, {"sse", false}} {
		t.Run(fmt.Sprintf("%s stream=%v", tc.mode, tc.stream), func(t *testing.T) {
			opts, _ := fastOpts(t)
			opts.MaxMessageSize = 1 << 20 // the rule, not the default's size, is under test
			spec := stdio("big")
			if tc.mode != "stdio" {
				spec = mcpclient.ServerSpec{Name: "big", Transport: mcpclient.Transport(tc.mode), URL: netServer(t, tc.mode)}
			}
			spec.CallTimeout = 20 * time.Second // the old behaviour: waiting it out
			m := start(t, opts, spec)
			_, err := m.CallTool(context.Background(), "big", "big", map[string]any{"bytes": 2 << 20, "log_first": tc.stream})
			if !errors.Is(err, mcpclient.ErrResponseTooLarge) {
				t.Fatalf("2 MiB answer over a 1 MiB limit: %v, want ErrResponseTooLarge", err)
			}
			testbin.WaitFor(t, "ready", func() bool {
				st, _ := m.Status("big")
				return st.State == mcpclient.StateReady
			})
			if got := text(t, call(t, m, "big", "echo", map[string]any{"text": "after"})); got != "after" {
				t.Errorf("after: %q", got)
			}
			if st, _ := m.Status("big"); tc.mode != "sse" && st.Restarts != 0 {
				t.Errorf("the server was restarted: %+v", st)
			}
		})
	}
}

// A server writing non-JSON stdout lines and stderr lines beyond the log
// budget — at 200 lines a second each, or as fast as it can — answers the
// calls sent to it meanwhile and then the call that flooded: its reader is
// slowed, its responses wait behind the junk but none is lost.
func TestFloodingServerLosesNoResponse(t *testing.T) {
	testbin.SkipIfShort(t, "floods a server's output, 2 s of it at a paced rate")
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"200 lines a second", map[string]any{"kind": "both", "lines": 400, "per_second": 200}, "flooded 400"},
		{"flat out", map[string]any{"kind": "both", "lines": 5000, "size": 1024}, "flooded 5000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, logs := fastOpts(t)
			m := start(t, opts, stdio("f"))
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			flooded := make(chan string, 1)
			go func() {
				res, err := m.CallTool(ctx, "f", "flood", tc.args)
				if err != nil {
					flooded <- err.Error()
					return
				}
				flooded <- firstText(res)
			}()
			testbin.WaitFor(t, "lines dropped", func() bool { return strings.Contains(logs.String(), dropMsg) })
			var wg sync.WaitGroup
			errs := make(chan error, 20)
			for i := range cap(errs) {
				wg.Go(func() {
					want := fmt.Sprintf("call %d", i)
					res, err := m.CallTool(ctx, "f", "echo", map[string]any{"text": want})
					if err == nil && firstText(res) != want {
						err = fmt.Errorf("answered %+v", res.Content)
					}
					if err != nil {
						errs <- fmt.Errorf("%s: %w", want, err)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if got := <-flooded; got != tc.want {
				t.Errorf("the flooding call answered %q, want %q", got, tc.want)
			}
		})
	}
}

// firstText is the text of res's first content block, or "".
func firstText(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	tc, _ := res.Content[0].(mcp.TextContent)
	return tc.Text
}
