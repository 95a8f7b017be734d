package main_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// pids returns the pids in "started <pid>" lines of a record file.
func pids(record string) []int {
	var out []int
	for _, l := range strings.Split(record, "\n") {
		if rest, ok := strings.CutPrefix(l, "started "); ok {
			if pid, err := strconv.Atoi(strings.TrimSpace(rest)); err == nil {
				out = append(out, pid)
			}
		}
		if rest, ok := strings.CutPrefix(l, "grandchild "); ok {
			if pid, err := strconv.Atoi(strings.TrimSpace(rest)); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}

func TestSessionServersCommandsAndClose(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	rec, record := recordFile(t)
	hangRec, hangRecord := recordFile(t)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{
		Cwd: t.TempDir(),
		McpServers: []acpsdk.McpServer{
			stdioServer("local", "-record", rec, "-grandchild"),
			{Http: &acpsdk.McpServerHttpInline{Name: "remote", Type: "http", Url: netServer(t, "http"), Headers: []acpsdk.HttpHeader{}}},
			{Sse: &acpsdk.McpServerSseInline{Name: "legacy", Type: "sse", Url: netServer(t, "sse"), Headers: []acpsdk.HttpHeader{}}},
			stdioServer("broken", "-exit-at-start", "3", "-stderr-lines", "2"),
			stdioServer("stuck", "-init-hang", "-record", hangRec),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Nothing about the session may reach the client before the response
	// that tells it the session exists: check the order on the wire.
	a.client.waitUpdate(t, "the commands", func(u acpsdk.SessionUpdate) bool { return u.AvailableCommandsUpdate != nil })
	for _, line := range strings.Split(a.stdout.String(), "\n") {
		if !strings.Contains(line, string(resp.SessionId)) {
			continue
		}
		if !strings.Contains(line, `"result"`) {
			t.Errorf("sent before the session/new response: %s", line)
		}
		break
	}
	// session/new answered at once; the good ones settle, "stuck" is
	// still connecting.
	meta := a.serversUntil(t, resp, "the good servers settled", func(st map[string]string) bool {
		return st["local"] == "ready" && st["remote"] == "ready" && st["legacy"] == "ready" && st["broken"] == "failed"
	})
	for _, want := range []string{`"name":"local","state":"ready"`, `"name":"remote","state":"ready"`, `"name":"legacy","state":"ready"`, `"name":"broken","state":"failed"`, `"name":"stuck","state":"connecting"`} {
		if !containsFields(meta, want) {
			t.Errorf("_meta lacks %s: %s", want, meta)
		}
	}
	if resp.Modes == nil || resp.Modes.CurrentModeId != "ask" || len(resp.Modes.AvailableModes) != 2 {
		t.Errorf("modes %+v", resp.Modes)
	}
	card := a.client.waitUpdate(t, "failure card", func(u acpsdk.SessionUpdate) bool {
		return u.ToolCall != nil && u.ToolCall.Title == "MCP server broken failed to start"
	})
	if card.ToolCall.Status != acpsdk.ToolCallStatusFailed || !strings.Contains(mustJSON(card.ToolCall.Content), "exit status 3") ||
		!strings.Contains(mustJSON(card.ToolCall.Content), "fatal: exiting at start") {
		t.Errorf("card: %s", mustJSON(card.ToolCall))
	}
	a.client.waitUpdate(t, "commands", func(u acpsdk.SessionUpdate) bool {
		if u.AvailableCommandsUpdate == nil {
			return false
		}
		var names []string
		for _, c := range u.AvailableCommandsUpdate.AvailableCommands {
			names = append(names, c.Name)
		}
		// The built-in commands, then the ready servers' prompts.
		return strings.HasPrefix(strings.Join(names, ","), "mcp,tools,call,resources,reload,") && slices.Contains(names, "local.greet")
	})

	sid := resp.SessionId
	prompt(t, a, sid, "/mcp")
	if text := agentText(a.client.all()); !strings.Contains(text, "**stuck** (stdio): connecting") || !strings.Contains(text, "**broken** (stdio): failed") {
		t.Errorf("/mcp said:\n%s", text)
	}
	before := len(a.client.all())
	prompt(t, a, sid, "/tools echo")
	if text := agentText(a.client.all()[before:]); !strings.Contains(text, "mcp__local__echo") || !strings.Contains(text, "mcp__remote__echo") || !strings.Contains(text, "mcp__legacy__echo") {
		t.Errorf("/tools said:\n%s", text)
	}
	for _, server := range []string{"local", "remote", "legacy"} {
		r := prompt(t, a, sid, `/call mcp__`+server+`__echo {"text":"via `+server+`"}`)
		if r.StopReason != acpsdk.StopReasonEndTurn {
			t.Errorf("stop %s", r.StopReason)
		}
		done := a.client.waitUpdate(t, "echo completed", func(u acpsdk.SessionUpdate) bool {
			return u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == acpsdk.ToolCallStatusCompleted &&
				strings.Contains(mustJSON(u.ToolCallUpdate.Content), "via "+server)
		})
		if strings.Contains(mustJSON(done.ToolCallUpdate.Content), "UNTRUSTED") {
			t.Error("the editor must see raw content, not the model's framing")
		}
	}
	start := a.client.waitUpdate(t, "tool_call for local echo", func(u acpsdk.SessionUpdate) bool {
		return u.ToolCall != nil && u.ToolCall.Title == "local: Echo"
	})
	if start.ToolCall.Kind != acpsdk.ToolKindRead || !strings.Contains(mustJSON(start.ToolCall.Meta), `"server":"local"`) || mustJSON(start.ToolCall.RawInput) != `{"text":"via local"}` {
		t.Errorf("tool_call: %s", mustJSON(start.ToolCall))
	}

	// Closing the session leaves no process: not the server, not its
	// grandchild, not the one still stuck in initialize.
	testbin.WaitFor(t, "processes recorded", func() bool { return len(pids(record())) == 2 && len(pids(hangRecord())) == 1 })
	procs := append(pids(record()), pids(hangRecord())...)
	if _, err := a.conn.CloseSession(ctx30(t), acpsdk.CloseSessionRequest{SessionId: sid}); err != nil {
		t.Fatal(err)
	}
	for _, pid := range procs {
		if testbin.Alive(pid) {
			t.Errorf("pid %d alive after session/close", pid)
		}
	}
	if _, err := a.conn.Prompt(ctx30(t), acpsdk.PromptRequest{SessionId: sid, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("/mcp")}}); err == nil || !strings.Contains(err.Error(), "unknown session") {
		t.Errorf("prompt after close: %v", err)
	}
}

// containsFields reports whether the JSON text has every "k":v pair of want
// (a comma-separated list) inside one object.
func containsFields(meta, want string) bool {
	for _, obj := range strings.Split(meta, "{") {
		ok := true
		for _, kv := range strings.Split(want, ",") {
			if !strings.Contains(obj, kv) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func TestCancelMidCall(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	rec, record := recordFile(t)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("s", "-record", rec)}})
	if err != nil {
		t.Fatal(err)
	}
	// sleep is not read-only: switch to auto so no permission is asked.
	if _, err := a.conn.SetSessionMode(ctx30(t), acpsdk.SetSessionModeRequest{SessionId: resp.SessionId, ModeId: "auto"}); err != nil {
		t.Fatal(err)
	}
	a.client.waitUpdate(t, "mode update", func(u acpsdk.SessionUpdate) bool {
		return u.CurrentModeUpdate != nil && u.CurrentModeUpdate.CurrentModeId == "auto"
	})
	done := make(chan acpsdk.PromptResponse, 1)
	go func() {
		r, err := a.conn.Prompt(ctx30(t), acpsdk.PromptRequest{SessionId: resp.SessionId, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(`/call mcp__s__sleep {"ms":60000}`)}})
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	testbin.WaitFor(t, "the server to start sleeping", func() bool { return strings.Contains(record(), "call sleep") })
	if err := a.conn.Cancel(ctx30(t), acpsdk.CancelNotification{SessionId: resp.SessionId}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.StopReason != acpsdk.StopReasonCancelled {
			t.Errorf("stop %s", r.StopReason)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("turn did not end after session/cancel")
	}
	testbin.WaitFor(t, "the server to see the cancellation", func() bool { return strings.Contains(record(), "cancelled sleep") })

	// A new prompt while a call runs is queued behind the running turn;
	// session/cancel cancels both (the call at the server too), and the
	// session takes prompts again.
	go func() {
		r, err := a.conn.Prompt(ctx30(t), acpsdk.PromptRequest{SessionId: resp.SessionId, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(`/call mcp__s__sleep {"ms":60000}`)}})
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	testbin.WaitFor(t, "the server to start sleeping again", func() bool { return strings.Count(record(), "call sleep") == 2 })
	queued := make(chan acpsdk.PromptResponse, 1)
	go func() {
		r, err := a.conn.Prompt(ctx30(t), acpsdk.PromptRequest{SessionId: resp.SessionId, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("/mcp")}})
		if err != nil {
			t.Error(err)
		}
		queued <- r
	}()
	a.client.waitUpdate(t, "the prompt shown queued", func(u acpsdk.SessionUpdate) bool {
		return u.SessionInfoUpdate != nil && strings.Contains(mustJSON(u.SessionInfoUpdate.Meta), `"queuedPrompts":1`)
	})
	if err := a.conn.Cancel(ctx30(t), acpsdk.CancelNotification{SessionId: resp.SessionId}); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.StopReason != acpsdk.StopReasonCancelled {
		t.Errorf("running prompt: stop %s", r.StopReason)
	}
	if r := <-queued; r.StopReason != acpsdk.StopReasonCancelled {
		t.Errorf("queued prompt: stop %s, want cancelled with the running one", r.StopReason)
	}
	testbin.WaitFor(t, "the server to see the second cancellation", func() bool { return strings.Count(record(), "cancelled sleep") == 2 })
	if r := prompt(t, a, resp.SessionId, "/mcp"); r.StopReason != acpsdk.StopReasonEndTurn {
		t.Errorf("prompt after the cancel: stop %s", r.StopReason)
	}
}

// TestSignalsAndEOFLeaveNoProcess ends acpgate by SIGTERM, SIGINT and stdin
// EOF with live sessions: it exits 0 and no server process survives.
func TestSignalsAndEOFLeaveNoProcess(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"SIGTERM", "SIGINT", "EOF"} {
		t.Run(how, func(t *testing.T) {
			a := startAgent(t, t.TempDir())
			rec, record := recordFile(t)
			for i := 0; i < 2; i++ {
				if _, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{
					stdioServer(fmt.Sprintf("s%d", i), "-record", rec),
				}}); err != nil {
					t.Fatal(err)
				}
			}
			testbin.WaitFor(t, "servers recorded", func() bool { return len(pids(record())) == 2 })
			switch how {
			case "SIGTERM":
				_ = a.cmd.Process.Signal(syscall.SIGTERM)
			case "SIGINT":
				_ = a.cmd.Process.Signal(syscall.SIGINT)
			default:
				_ = a.stdin.Close()
			}
			select {
			case <-a.exited:
			case <-time.After(20 * time.Second):
				t.Fatal("acpgate did not exit")
			}
			if code := a.cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("exit code %d", code)
			}
			for _, pid := range pids(record()) {
				if testbin.Alive(pid) {
					t.Errorf("server pid %d survived", pid)
				}
			}
		})
	}
}
