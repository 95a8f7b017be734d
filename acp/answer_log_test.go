package acp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/gateway"
)

// streams streams thinking and text in pieces (several chunk records
// each: the text is longer than a record holds), then ends the turn, or
// calls a tool when call is set.
func streams(thinking, text string, call *gateway.ToolCall) step {
	return func(_ gateway.ModelRequest, onDelta func(gateway.Delta)) (gateway.ModelResponse, error) {
		for _, p := range []string{thinking[:len(thinking)/2], thinking[len(thinking)/2:]} {
			onDelta(gateway.Delta{Thinking: p})
		}
		for i := 0; i < len(text); i += 100 << 10 {
			onDelta(gateway.Delta{Text: text[i:min(i+100<<10, len(text))]})
		}
		m := gateway.Message{Role: gateway.RoleAssistant, Thinking: thinking, Content: []gateway.Content{{Type: gateway.ContentText, Text: text}}}
		if call != nil {
			m.ToolCalls = []gateway.ToolCall{*call}
			return gateway.ModelResponse{Message: m, Stop: gateway.StopToolUse}, nil
		}
		return gateway.ModelResponse{Message: m, Stop: gateway.StopEndTurn}, nil
	}
}

// TestAnswersStoredOnce: the session log holds the model's text and
// thinking once (as the chunks session/load replays), however many
// records they take and however many answers a turn has; session/load
// replays what the client saw and gives the model the same history as
// before.
func TestAnswersStoredOnce(t *testing.T) {
	t.Parallel()
	first := strings.Repeat("first answer ", 50<<10) // 650 KB: three records
	second := strings.Repeat("second answer ", 1000)
	m := scripted(
		streams("thinking one", first, &gateway.ToolCall{ID: "c1", Name: "mcp__nope__x", Arguments: []byte(`{}`)}),
		streams("thinking two", second, nil),
		says("after"),
	)
	h := newHarness(t, acp.Options{Provider: m}, nil)
	sid := h.newSession().SessionId
	from := h.fc.rec.len()
	h.prompt(sid, "talk")
	live := h.fc.rec.since(from, sid)
	sent := m.requests()[1].Messages // the first answer, as the model was sent it back
	h.closeSession(sid)

	log, err := os.ReadFile(filepath.Join(h.opts.Store.Dir(), "sessions", string(sid), "log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"first answer first answer", "second answer second answer", "thinking one", "thinking two"} {
		if n := strings.Count(string(log), s); n == 0 || s[:5] == "think" && n != 1 {
			t.Errorf("the log holds %q %d times", s, n)
		}
	}
	if len(log) > len(first)+len(second)+64<<10 {
		t.Errorf("the log is %d bytes for %d bytes of text: it holds the text more than once", len(log), len(first)+len(second))
	}

	from = h.fc.rec.len()
	if _, err := h.conn.LoadSession(h.ctx(), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	replay := h.fc.rec.since(from, sid)
	if got, want := agentText(replay), agentText(live); got != want {
		t.Errorf("session/load replayed %d bytes of agent text, the client saw %d live", len(got), len(want))
	}
	h.prompt(sid, "again")
	reqs := m.requests()
	history := reqs[len(reqs)-1].Messages
	var answers []gateway.Message
	for _, msg := range history {
		if msg.Role == gateway.RoleAssistant {
			answers = append(answers, msg)
		}
	}
	if len(answers) != 2 || answers[0].Text() != first || answers[0].Thinking != "thinking one" || len(answers[0].ToolCalls) != 1 ||
		answers[1].Text() != second || answers[1].Thinking != "thinking two" {
		t.Fatalf("after load the model's history has %d answers: %+v", len(answers), answers)
	}
	if sent[len(sent)-2].Text() != answers[0].Text() {
		t.Errorf("the first answer after load differs from the one sent before")
	}
}
