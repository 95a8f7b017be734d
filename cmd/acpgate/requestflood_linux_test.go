//go:build linux

package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// floodRequests is how many requests TestRequestFloodUnread writes: each
// ~260 bytes, 26 MB in all. Unbounded, each cost a goroutine blocked on
// the write lock, about 5 KB: 0.5 GB.
const floodRequests = 100_000

// floodDeadline is how long TestRequestFloodUnread lets acpgate run: a
// generous bound (the test takes a few seconds) after which acpgate, in a
// deadlock, is killed.
const floodDeadline = 2 * time.Minute

// floodRSSBound is how much the flood may raise acpgate's peak RSS: the
// 1,024 requests in flight and their goroutines, with a wide margin.
const floodRSSBound = 64 << 20

// TestRequestFloodUnread: a client that writes 100,000 requests and does
// not read acpgate's stdout raises acpgate's peak RSS by at most
// floodRSSBound (the requests in flight are bounded; beyond the bound
// acpgate refuses at once, and, the refusal unwritable, stops reading).
// Nothing deadlocks: a prompt waiting for the client's permission when
// the flood starts gets the answer written after the flood, and is then
// cancelled by session/cancel. Once the client reads, every request is
// answered: handled (-32601, the method is unknown) or refused (-32603).
func TestRequestFloodUnread(t *testing.T) {
	t.Parallel()
	c := startFloodClient(t)
	c.send(t, `{"jsonrpc":"2.0","id":"new","method":"session/new","params":{"cwd":%q,"mcpServers":[{"name":"s","command":%q,"args":["-name","s"],"env":[]}]}}`, t.TempDir(), serverBin)
	var sid string
	c.until(t, "new", func(m rawMessage) { sid = m.Result.SessionID })
	c.send(t, `{"jsonrpc":"2.0","id":"prompt","method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"/call mcp__s__sleep {\"ms\":600000}"}]}}`, sid)
	var ask rawMessage
	c.until(t, "", func(m rawMessage) {
		if m.Method == "session/request_permission" {
			ask = m
		}
	})
	pid := c.cmd.Process.Pid
	resetPeak(t, pid)
	base := procStatus(t, pid, "VmHWM")

	pad := strings.Repeat("x", 180)
	written := make(chan error, 1)
	go func() {
		w := bufio.NewWriterSize(c.stdin, 64<<10)
		for i := range floodRequests {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"_flood/unknown","params":{"n":%d,"pad":%q}}`+"\n", i, i, pad)
		}
		// The answer to acpgate's question, and a cancellation of the
		// prompt it lets run: both must be read behind the flood.
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":"allow_once"}}}`+"\n", ask.ID)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`+"\n", sid)
		written <- w.Flush()
	}()
	// The client reads nothing until the flood is written or acpgate says
	// it refuses requests (the bound is reached; it stops reading as soon
	// as a refusal cannot be written).
	refusedSeen := false
	testbin.WaitFor(t, "the flood written or requests refused", func() bool {
		select {
		case err := <-written:
			written <- err
			return true
		default:
		}
		refusedSeen = strings.Contains(c.stderr.String(), "peer requests refused")
		return refusedSeen
	})
	unread := procStatus(t, pid, "VmRSS")

	handled, refused := 0, 0
	seen := make([]bool, floodRequests)
	var stop string
	for handled+refused < floodRequests || stop == "" {
		m := c.next(t)
		if m.Method != "" {
			continue // session/update
		}
		if string(m.ID) == `"prompt"` {
			if m.Error != nil {
				t.Fatalf("the prompt failed: %s", m.raw)
			}
			stop = m.Result.StopReason
			continue
		}
		n, err := strconv.Atoi(string(m.ID))
		if err != nil || n < 0 || n >= floodRequests || seen[n] || m.Error == nil {
			t.Fatalf("not an answer to one flood request: %.300s", m.raw)
		}
		seen[n] = true
		switch m.Error.Code {
		case -32601:
			handled++
		case -32603:
			refused++
		default:
			t.Fatalf("request %d answered %.300s", n, m.raw)
		}
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	growth := procStatus(t, pid, "VmHWM") - base
	t.Logf("%d requests: %d handled, %d refused; VmRSS while unread %.1f MB; VmHWM growth %.1f MB (refusals logged before reading: %v)",
		floodRequests, handled, refused, float64(unread)/1e6, float64(growth)/1e6, refusedSeen)
	if growth > floodRSSBound {
		t.Errorf("%d unread requests raised acpgate's VmHWM by %.1f MB, over %d MiB", floodRequests, float64(growth)/1e6, floodRSSBound>>20)
	}
	if refused == 0 {
		t.Errorf("no request of %d unread ones was refused: the requests in flight are not bounded", floodRequests)
	}
	if stop != "cancelled" {
		t.Errorf("the prompt cancelled after the flood ended %q", stop)
	}
	// The connection goes on: a request after the flood is handled.
	c.send(t, `{"jsonrpc":"2.0","id":"after","method":"session/list","params":{}}`)
	c.until(t, "after", func(m rawMessage) {
		if m.Error != nil {
			t.Fatalf("session/list after the flood: %s", m.raw)
		}
	})
}

// floodClient is acpgate (built without the race detector) driven by raw
// lines: for clients that misbehave in ways acp-go-sdk's cannot.
type floodClient struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr *testbin.SyncBuffer
}

// rawMessage is one message acpgate wrote, as far as the test reads it.
type rawMessage struct {
	ID     json.RawMessage
	Method string
	Result struct {
		SessionID  string `json:"sessionId"`
		StopReason string `json:"stopReason"`
	}
	Error *struct{ Code int }
	raw   []byte
}

// startFloodClient starts acpgate and initializes it.
func startFloodClient(t *testing.T) *floodClient {
	t.Helper()
	cmd := exec.Command(plainAgentBin(t), "--state-dir", t.TempDir(), "--log-level", "info", "--startup-budget", "10s")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &floodClient{cmd: cmd, stdin: stdin, out: bufio.NewReaderSize(stdout, 64<<10), stderr: &testbin.SyncBuffer{}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A deadlock fails the test rather than hanging it: acpgate is killed,
	// and the read waiting for it sees the end of its output.
	watchdog := time.AfterFunc(floodDeadline, func() { _ = cmd.Process.Kill() })
	t.Cleanup(func() {
		watchdog.Stop()
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("acpgate stderr:\n%.4000s", c.stderr.String())
		}
	})
	c.send(t, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1}}`)
	c.until(t, "init", nil)
	return c
}

// send writes one line, formatted.
func (c *floodClient) send(t *testing.T, format string, args ...any) {
	t.Helper()
	if _, err := fmt.Fprintf(c.stdin, format+"\n", args...); err != nil {
		t.Fatal(err)
	}
}

// next reads acpgate's next message.
func (c *floodClient) next(t *testing.T) rawMessage {
	t.Helper()
	line, err := c.out.ReadBytes('\n')
	if err != nil {
		t.Fatalf("reading acpgate: %v (killed after %s: a deadlock?)", err, floodDeadline)
	}
	m := rawMessage{raw: line}
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("%.300s: %v", line, err)
	}
	return m
}

// until reads messages, each passed to seen (nil: none), until the answer
// to request id (as a JSON string), or, id "", until seen has seen a
// request from acpgate.
func (c *floodClient) until(t *testing.T, id string, seen func(rawMessage)) {
	t.Helper()
	for {
		m := c.next(t)
		if seen != nil {
			seen(m)
		}
		if id == "" && m.Method != "" && m.ID != nil || id != "" && m.Method == "" && string(m.ID) == strconv.Quote(id) {
			return
		}
	}
}
