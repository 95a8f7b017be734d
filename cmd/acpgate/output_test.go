//go:build linux

package main_test

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

// floodBytes is what the fake model streams in the output tests: 64 MiB,
// sixteen times the answer cap, 64 times the arguments cap.
const floodBytes = 64 << 20

// frameSizes measures acpgate's output frames (agentSetup.stdout): the
// longest, and every byte of the agent's text chunks, which it does not
// pass on to the client when it is long.
type frameSizes struct {
	mu      sync.Mutex
	longest int
	total   int64
}

func (f *frameSizes) filter(r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			f.mu.Lock()
			f.longest, f.total = max(f.longest, len(line)), f.total+int64(len(line))
			f.mu.Unlock()
			if len(line) <= 1<<20 {
				if _, werr := pw.Write(line); werr != nil {
					return
				}
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}

func (f *frameSizes) sizes() (longest int, total int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.longest, f.total
}

// outputFlood is one flooded prompt through the binary and what it cost.
type outputFlood struct {
	a      *agent
	llm    *fakellm.Server
	state  string
	cwd    string
	sid    acpsdk.SessionId
	stop   acpsdk.StopReason
	growth uint64 // acpgate's VmHWM growth over the prompt
	frames *frameSizes
}

// floodAgent starts acpgate on the fake model with turns, opens a session
// with the test server "calc" and sends one prompt, measuring acpgate's
// peak RSS around it.
func floodAgent(t *testing.T, turns ...fakellm.Turn) *outputFlood {
	t.Helper()
	r := &outputFlood{llm: fakellm.Start(turns...), state: t.TempDir(), cwd: t.TempDir(), frames: &frameSizes{}}
	t.Cleanup(r.llm.Close)
	r.a = startAgentWith(t, r.state, agentSetup{bin: plainAgentBin(t), stdout: r.frames.filter}, "--model", "fake-model", "--base-url", r.llm.URL, "--log-level", "info")
	r.a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
	resp, err := r.a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: r.cwd, McpServers: []acpsdk.McpServer{stdioServer("calc")}})
	if err != nil {
		t.Fatal(err)
	}
	r.sid = resp.SessionId
	pid := r.a.cmd.Process.Pid
	resetPeak(t, pid)
	base := procStatus(t, pid, "VmHWM")
	pr, err := r.a.conn.Prompt(ctx30(t), acpsdk.PromptRequest{SessionId: r.sid, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("flood")}})
	if err != nil {
		t.Fatal(err)
	}
	r.growth, r.stop = procStatus(t, pid, "VmHWM")-base, pr.StopReason
	return r
}

// logSize is the size of the session's log.
func (r *outputFlood) logSize(t *testing.T) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join(r.state, "sessions", string(r.sid), "log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// check asserts the bounds common to both floods: acpgate stopped
// reading the stream, its peak RSS grew by at most 10 times the cap (and
// 16 MiB for the runtime's own), the frames to the client and the session
// log stayed small.
func (r *outputFlood) check(t *testing.T, limit int, maxLog int64) {
	t.Helper()
	longest, total := r.frames.sizes()
	sent, log := r.llm.Flooded(), r.logSize(t)
	t.Logf("flood of %d bytes, cap %d: read %d bytes of it; VmHWM growth %.1f MB (%.1f× the cap); %d bytes to the client, longest frame %d; session log %d bytes",
		floodBytes, limit, sent, float64(r.growth)/1e6, float64(r.growth)/float64(limit), total, longest, log)
	if sent >= floodBytes {
		t.Errorf("acpgate read the whole flood (%d bytes): it did not stop at the cap", sent)
	}
	if bound := uint64(10*limit + 16<<20); r.growth > bound {
		t.Errorf("the flood raised acpgate's VmHWM by %d bytes, over 10× the %d-byte cap and 16 MiB (%d)", r.growth, limit, bound)
	}
	if longest > 1<<20 {
		t.Errorf("a frame to the client of %d bytes (over 1 MiB)", longest)
	}
	if log > maxLog {
		t.Errorf("the session log holds %d bytes, over %d", log, maxLog)
	}
}

// TestAnswerTextBoundedThroughTheBinary: a model answer of 64 MiB of text
// is read up to the answer cap (4 MiB by default), the client gets what
// came before the cap and the turn ends with max_tokens and an error it
// can read; acpgate's memory, its frames and its session log (which holds
// the text once) stay bounded by the cap; session/load replays what the
// client saw live and gives the model the kept answer (issue 34, item 4).
func TestAnswerTextBoundedThroughTheBinary(t *testing.T) {
	// Pieces of 1 MiB: the client still gets small frames.
	r := floodAgent(t, fakellm.Turn{Flood: &fakellm.Flood{TextBytes: floodBytes, PieceBytes: 1 << 20}}, fakellm.Turn{Text: "next"})
	if r.stop != acpsdk.StopReasonMaxTokens {
		t.Errorf("stop reason %q, want max_tokens", r.stop)
	}
	text := agentText(r.a.client.all())
	if n := len(text) - len(strings.TrimLeft(text, "a")); n != gateway.DefaultMaxAnswerBytes {
		t.Errorf("the client got %d bytes of the answer, want the first %d", n, gateway.DefaultMaxAnswerBytes)
	}
	if !strings.Contains(text, "longer than the limit") || !strings.Contains(text, "4194304 bytes") {
		t.Errorf("the client was not told why the answer stopped: %q", strings.TrimLeft(text, "a"))
	}
	// Text once (the cap), with room for the records around it.
	r.check(t, gateway.DefaultMaxAnswerBytes, gateway.DefaultMaxAnswerBytes+64<<10)

	_ = r.a.stdin.Close()
	<-r.a.exited
	b := startAgentWith(t, r.state, agentSetup{bin: plainAgentBin(t), stdout: (&frameSizes{}).filter}, "--model", "fake-model", "--base-url", r.llm.URL, "--log-level", "info")
	if _, err := b.conn.LoadSession(ctx30(t), acpsdk.LoadSessionRequest{SessionId: r.sid, Cwd: r.cwd, McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	if replayed := agentText(b.client.all()); replayed != text {
		t.Errorf("session/load replayed %d bytes of agent text (%q…), the client saw %d live", len(replayed), replayed[:min(len(replayed), 40)], len(text))
	}
	prompt(t, b, r.sid, "go on")
	reqs := r.llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	var kept string
	for _, m := range reqs[1].Messages {
		if m.Role == "assistant" {
			kept = m.Content
		}
	}
	if kept != strings.Repeat("a", gateway.DefaultMaxAnswerBytes) {
		t.Errorf("after session/load the model's kept answer is %d bytes, want the %d before the cap", len(kept), gateway.DefaultMaxAnswerBytes)
	}
}

// TestToolArgumentsBoundedThroughTheBinary: a tool call with 64 MiB of
// arguments is read up to the arguments cap (1 MiB by default) and never
// run; the model gets an error naming the cap as the call's result and the
// turn goes on; no frame to the client carries the arguments, and memory
// and the session log stay bounded (issue 34, item 4).
func TestToolArgumentsBoundedThroughTheBinary(t *testing.T) {
	r := floodAgent(t, fakellm.Turn{Flood: &fakellm.Flood{ToolCall: "mcp__calc__echo", ArgumentBytes: floodBytes}}, fakellm.Turn{Text: "understood"})
	if r.stop != acpsdk.StopReasonEndTurn {
		t.Errorf("stop reason %q, want end_turn", r.stop)
	}
	reqs := r.llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2 (the flood, then the call's result)", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != "tool" || last.ToolCallID != "call_flood" || !strings.Contains(last.Content, "not run") || !strings.Contains(last.Content, "1048576 bytes") {
		t.Errorf("the model was told %+v, want the call's error result naming the cap", last)
	}
	if call := reqs[1].Messages[len(reqs[1].Messages)-2]; len(call.ToolCalls) != 1 || call.ToolCalls[0].Arguments != "{}" {
		t.Errorf("the model's call as sent back: %+v, want its arguments dropped", call.ToolCalls)
	}
	failed := r.a.client.waitUpdate(t, "the call failed", func(u acpsdk.SessionUpdate) bool {
		return u.ToolCallUpdate != nil && u.ToolCallUpdate.ToolCallId == "call_flood" && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == acpsdk.ToolCallStatusFailed
	})
	if failed.ToolCallUpdate == nil {
		t.Fatal("no failed call")
	}
	if text := agentText(r.a.client.all()); !strings.Contains(text, "understood") {
		t.Errorf("the turn did not go on: %q", text)
	}
	r.check(t, gateway.DefaultMaxArgumentBytes, 64<<10)
}

// TestOneLongEventThroughTheBinary: an answer sent as one event of 64 MiB
// (data lines the SDK would gather whole before decoding any) is stopped
// on the wire past twice the cap: the turn ends with max_tokens, and
// memory stays bounded by the cap (issue 34, item 4).
func TestOneLongEventThroughTheBinary(t *testing.T) {
	r := floodAgent(t, fakellm.Turn{Flood: &fakellm.Flood{TextBytes: floodBytes, OneEvent: true}})
	if r.stop != acpsdk.StopReasonMaxTokens {
		t.Errorf("stop reason %q, want max_tokens", r.stop)
	}
	if text := agentText(r.a.client.all()); !strings.Contains(text, "one event of the answer's stream went past") {
		t.Errorf("the client was not told why the answer stopped: %.300q", text)
	}
	r.check(t, gateway.DefaultMaxAnswerBytes, 64<<10)
}
