//go:build linux

package main_test

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// bigResult is the size of the result the memory tests ask for: 15 MiB.
const bigResult = 15 << 20

// procStatus returns a size field of /proc/PID/status (VmHWM, VmRSS) in
// bytes.
func procStatus(t testing.TB, pid int, field string) uint64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", field, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// memoryOptOut is the environment variable that lets the memory bounds
// be skipped where /proc/PID/clear_refs cannot be written (some
// containers): its value says why, and the skip repeats it.
const memoryOptOut = "ACPGATE_NO_MEMORY_TESTS"

// resetPeak sets the VmHWM of process pid to its current RSS. Where that
// is impossible the test fails, unless memoryOptOut says why it may not
// run: a bound that cannot be measured is never passed silently.
func resetPeak(t testing.TB, pid int) {
	t.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		if why := os.Getenv(memoryOptOut); why != "" {
			t.Skipf("%s=%q: cannot reset the peak RSS: %v", memoryOptOut, why, err)
		}
		t.Fatalf("cannot reset the peak RSS, so the memory bound cannot be measured: %v (set %s to the reason to skip it)", err, memoryOptOut)
	}
}

// plainAgentBin returns an acpgate binary built without the race
// detector, whose shadow memory would multiply what is measured.
func plainAgentBin(t testing.TB) string {
	t.Helper()
	if !testbin.Race() {
		return agentBin
	}
	b, err := testbin.NewPlain()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Cleanup)
	bin, err := b.Build("./cmd/acpgate")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// bigUpdates takes the frames too long for the SDK's reader (10 MiB) off
// acpgate's output before the test's client reads it, and records the
// completed results they carry: session -> the sizes of their texts, when
// each text is one byte repeated as the test servers' big tools send it (-1 for a
// frame that is not such a result). Frames are taken in order, so a
// result is recorded before the client sees the response after it.
type bigUpdates struct {
	mu    sync.Mutex
	sizes map[acpsdk.SessionId][]int
}

// filter wraps acpgate's stdout (agentSetup.stdout).
func (g *bigUpdates) filter(r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 1<<20 {
				g.take(line)
			} else if _, werr := pw.Write(line); werr != nil {
				return
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}

// take records the result of one long frame.
func (g *bigUpdates) take(frame []byte) {
	var n struct {
		Method string
		Params struct {
			SessionID acpsdk.SessionId `json:"sessionId"`
			Update    struct {
				SessionUpdate, Status string
				Content               []struct{ Content struct{ Text string } }
			}
		}
	}
	size := -1
	err := json.Unmarshal(frame, &n)
	if u := n.Params.Update; err == nil && n.Method == acpsdk.ClientMethodSessionUpdate && u.SessionUpdate == "tool_call_update" &&
		u.Status == string(acpsdk.ToolCallStatusCompleted) && len(u.Content) == 1 && strings.Trim(u.Content[0].Content.Text, u.Content[0].Content.Text[:1]) == "" {
		size = len(u.Content[0].Content.Text)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sizes[n.Params.SessionID] = append(g.sizes[n.Params.SessionID], size)
}

// last returns the size of the last long result of session sid, and
// forgets the session's results.
func (g *bigUpdates) last(sid acpsdk.SessionId) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	sizes := g.sizes[sid]
	delete(g.sizes, sid)
	if len(sizes) == 0 {
		return 0
	}
	return sizes[len(sizes)-1]
}

// bigAgent is acpgate, built without the race detector, with sessions
// whose test server has a tool for results of any size: tool, taking the
// size as arg ("": the stdio test server's mcp__s__big, bytes).
type bigAgent struct {
	*agent
	big       *bigUpdates
	sessions  []acpsdk.SessionId
	tool, arg string
}

// startBigAgent starts acpgate and opens n sessions, each warmed up with a
// small result.
func startBigAgent(t testing.TB, n int) *bigAgent {
	t.Helper()
	g := &bigUpdates{sizes: map[acpsdk.SessionId][]int{}}
	a := startAgentWith(t, t.TempDir(), agentSetup{bin: plainAgentBin(t), stdout: g.filter}, "--log-level", "info")
	a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
	b := &bigAgent{agent: a, big: g, sessions: make([]acpsdk.SessionId, n)}
	for i := range b.sessions {
		resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("s")}})
		if err != nil {
			t.Fatal(err)
		}
		b.sessions[i] = resp.SessionId
		if err := b.call(ctx30(t), b.sessions[i], 1000); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// call runs /call of the big tool for size bytes in session sid and
// checks that the editor got the whole result. Calls of at most 1 MiB
// (read by the test's client) must not run concurrently.
func (b *bigAgent) call(ctx context.Context, sid acpsdk.SessionId, size int) error {
	resp, err := b.conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: sid, Prompt: []acpsdk.ContentBlock{
		acpsdk.TextBlock(fmt.Sprintf(`/call %s {%q:%d}`, cmp.Or(b.tool, "mcp__s__big"), cmp.Or(b.arg, "bytes"), size))}})
	if err != nil {
		return fmt.Errorf("/call of %d bytes: %w", size, err)
	}
	if resp.StopReason != acpsdk.StopReasonEndTurn {
		return fmt.Errorf("/call of %d bytes: stop reason %q", size, resp.StopReason)
	}
	if size > 1<<20 {
		if got := b.big.last(sid); got != size {
			return fmt.Errorf("the editor did not get the %d-byte result (got %d)", size, got)
		}
		return nil
	}
	b.client.mu.Lock()
	defer b.client.mu.Unlock()
	for _, n := range b.client.updates {
		if u := n.Update.ToolCallUpdate; n.SessionId == sid && u != nil && u.Status != nil && *u.Status == acpsdk.ToolCallStatusCompleted {
			b.client.updates = nil
			return nil
		}
	}
	return fmt.Errorf("no result for the %d-byte call", size)
}

// peakGrowth runs a call for size bytes in each session at once and
// returns how much they raised acpgate's peak RSS.
func (b *bigAgent) peakGrowth(t testing.TB, size int) uint64 {
	t.Helper()
	pid := b.cmd.Process.Pid
	resetPeak(t, pid)
	base := procStatus(t, pid, "VmHWM")
	errs := make([]error, len(b.sessions))
	var wg sync.WaitGroup
	for i, sid := range b.sessions {
		wg.Go(func() { errs[i] = b.call(ctx30(t), sid, size) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return procStatus(t, pid, "VmHWM") - base
}

// TestResultMemoryThroughTheBinary: one 15 MiB result through /call (the
// client's copy, the bridge, the model's capped copy, the session log's
// capped copy, the update to the editor) raises acpgate's peak RSS by at
// most 3× the result (issue 18).
func TestResultMemoryThroughTheBinary(t *testing.T) {
	growth := startBigAgent(t, 1).peakGrowth(t, bigResult)
	t.Logf("VmHWM growth for one %d-byte result: %.1f MB (%.2f×)", bigResult, float64(growth)/1e6, float64(growth)/bigResult)
	if limit := uint64(3 * bigResult); growth > limit {
		t.Errorf("one %d-byte result raised acpgate's VmHWM by %d bytes (%.2f×), over 3× (%d)", bigResult, growth, float64(growth)/bigResult, limit)
	}
}

// BenchmarkResultMemory reports how much one 15 MiB result, and six at
// once in six sessions, raise acpgate's peak RSS (VmHWM-growth-MB, the
// largest over the iterations, and x-result, that over the results'
// total size).
func BenchmarkResultMemory(b *testing.B) {
	for _, n := range []int{1, 6} {
		b.Run(fmt.Sprintf("results=%d", n), func(b *testing.B) {
			a := startBigAgent(b, n)
			var peak uint64
			for b.Loop() {
				peak = max(peak, a.peakGrowth(b, bigResult))
			}
			b.ReportMetric(float64(peak)/1e6, "VmHWM-growth-MB")
			b.ReportMetric(float64(peak)/float64(n*bigResult), "x-result")
		})
	}
}
