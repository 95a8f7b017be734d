package main_test

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
)

// floodRun is what one run of floodThroughBinary measured.
type floodRun struct {
	cpu      time.Duration   // acpgate's CPU time during the flood
	logBytes int64           // what acpgate's log grew by during the flood
	calm     []time.Duration // the calm server's /call round trips, sorted
	result   string          // the flooding call's result text
}

// floodThroughBinary runs acpgate (log at the default level, in a file)
// with two sessions: one whose server "flood" runs the /call floodCall,
// one whose server "calm" is sent `/call echo` every 50 ms until the
// flooding call returns. It measures acpgate's own CPU (its threads'
// schedstat; the servers are not counted) and its log's growth over that
// window.
func floodThroughBinary(b *testing.B, floodCall string) floodRun {
	b.Helper()
	dir := b.TempDir()
	logPath := filepath.Join(dir, "acpgate.log")
	cl := newClient()
	cl.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
	cmd := exec.Command(agentBin, "--state-dir", filepath.Join(dir, "state"), "--log-file", logPath)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = stdin.Close(); _ = cmd.Wait() }()
	conn := acpsdk.NewClientSideConnection(cl, stdin, stdout)
	conn.SetLogger(slog.New(slog.DiscardHandler))
	if _, err := conn.Initialize(context.Background(), acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber}); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	open := func(server string) acpsdk.SessionId {
		resp, err := conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: dir, McpServers: []acpsdk.McpServer{stdioServer(server)}})
		if err != nil {
			b.Fatal(err)
		}
		return resp.SessionId
	}
	floodSID, calmSID := open("flood"), open("calm")
	run := func(sid acpsdk.SessionId, text string) {
		if _, err := conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: sid, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(text)}}); err != nil {
			b.Fatal(err)
		}
	}
	echo := `/call mcp__calm__echo {"text":"hello"}`
	run(calmSID, echo) // both servers are ready once their sessions answer a call
	run(floodSID, `/call mcp__flood__echo {"text":"hello"}`)

	var r floodRun
	log0, cpu0 := fileSize(logPath), cpuTime(cmd.Process.Pid)
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(floodSID, floodCall)
	}()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case <-tick.C:
			t0 := time.Now()
			run(calmSID, echo)
			r.calm = append(r.calm, time.Since(t0))
		}
	}
	r.cpu, r.logBytes = cpuTime(cmd.Process.Pid)-cpu0, fileSize(logPath)-log0
	slices.Sort(r.calm)
	r.result = lastCallText(cl.all(), floodSID)
	return r
}

// lastCallText is the text of the last completed or failed tool call
// update of sid among ns.
func lastCallText(ns []acpsdk.SessionNotification, sid acpsdk.SessionId) string {
	text := ""
	for _, n := range ns {
		u := n.Update.ToolCallUpdate
		if n.SessionId != sid || u == nil || u.Status == nil || (*u.Status != acpsdk.ToolCallStatusCompleted && *u.Status != acpsdk.ToolCallStatusFailed) {
			continue
		}
		text = ""
		for _, c := range u.Content {
			if c.Content != nil && c.Content.Content.Text != nil {
				text += c.Content.Content.Text.Text
			}
		}
	}
	return text
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// BenchmarkFloodThroughBinary measures, through the acpgate binary, what a
// server flooding stdout with non-JSON 1 KiB lines and stderr with 1 KiB
// lines for 8 s, as fast as it can, costs acpgate: its CPU seconds, its
// log's growth, and the round trip of `/call echo` to a server of another
// session meanwhile (every 50 ms). flood=none runs the same with the
// first server sleeping for 8 s instead:
//
//	go test -run '^$' -bench FloodThroughBinary -benchtime 1x ./cmd/acpgate/
func BenchmarkFloodThroughBinary(b *testing.B) {
	for _, tc := range []struct{ name, call string }{
		{"none", `/call mcp__flood__sleep {"ms":8000}`},
		{"stdout+stderr", `/call mcp__flood__flood {"kind":"both","lines":0,"ms":8000,"size":1024}`},
		{"log", `/call mcp__flood__flood {"kind":"log","lines":0,"ms":8000,"size":100}`},
		{"progress", `/call mcp__flood__flood {"kind":"progress","lines":0,"ms":8000,"size":100}`},
		{"response", `/call mcp__flood__flood {"kind":"response","lines":0,"ms":8000,"size":100}`},
		{"listchanged", `/call mcp__flood__flood {"kind":"listchanged","lines":0,"ms":8000}`},
		{"badjson", `/call mcp__flood__flood {"kind":"badjson","lines":0,"ms":8000,"size":100}`},
		{"endless", `/call mcp__flood__flood {"kind":"endless","lines":0,"ms":8000,"size":65536}`},
	} {
		b.Run("flood="+tc.name, func(b *testing.B) {
			var runs []floodRun
			for b.Loop() {
				runs = append(runs, floodThroughBinary(b, tc.call))
			}
			var cpu time.Duration
			var logBytes int64
			var calm []time.Duration
			for _, r := range runs {
				cpu += r.cpu
				logBytes += r.logBytes
				calm = append(calm, r.calm...)
			}
			slices.Sort(calm)
			n := float64(len(runs))
			b.ReportMetric(cpu.Seconds()/n, "agent-cpu-s")
			b.ReportMetric(float64(logBytes)/n/1e6, "log-MB")
			if len(calm) > 0 {
				b.ReportMetric(float64(calm[len(calm)/2].Microseconds())/1e3, "calm-p50-ms")
				b.ReportMetric(float64(calm[len(calm)*99/100].Microseconds())/1e3, "calm-p99-ms")
			}
			b.Logf("flooding call: %s", strings.TrimSpace(runs[len(runs)-1].result))
		})
	}
}

// TestFloodThenAnswer: a server writing 200 non-JSON stdout lines and 200
// stderr lines a second for 2 s, four times the log budget, answers the
// call that made it, and the next one; its log was rate-limited.
func TestFloodThenAnswer(t *testing.T) {
	a := startAgent(t, t.TempDir())
	a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("f")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := callText(t, a, resp.SessionId, "mcp__f__flood", `{"kind":"both","lines":400,"per_second":200}`); got != "flooded 400" {
		t.Fatalf("flooding call answered %q", got)
	}
	if got := callText(t, a, resp.SessionId, "mcp__f__echo", `{"text":"after"}`); got != "after" {
		t.Fatalf("next call answered %q", got)
	}
	if !strings.Contains(a.stderr.String(), "lines dropped") {
		t.Error("no lines were dropped from the log")
	}
}
