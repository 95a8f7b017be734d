package acp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/compact"
	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

// talker is a model that answers each prompt with size bytes of text and
// each summary request with "SUMMARY of N messages".
func talker(size int) *fakeModel {
	m := &fakeModel{}
	m.CompleteFunc = func(_ context.Context, req gateway.ModelRequest, onDelta func(gateway.Delta)) (gateway.ModelResponse, error) {
		if req.System == compact.Instructions {
			return gateway.ModelResponse{Message: assistant("SUMMARY of the talk"), Stop: gateway.StopEndTurn, Usage: gateway.Usage{InputTokens: 50, OutputTokens: 5}}, nil
		}
		text := strings.Repeat("w", size)
		onDelta(gateway.Delta{Text: text})
		return gateway.ModelResponse{Message: assistant(text), Stop: gateway.StopEndTurn}, nil
	}
	return m
}

// modelTurns returns the requests of m that were not summary requests.
func modelTurns(m *fakeModel) []gateway.ModelRequest {
	var out []gateway.ModelRequest
	for _, r := range m.requests() {
		if r.System != compact.Instructions {
			out = append(out, r)
		}
	}
	return out
}

// compactionCard returns the compaction card among ups (nil: none).
func compactionCard(ups []acpsdk.SessionUpdate) *acpsdk.SessionUpdateToolCall {
	for _, u := range ups {
		if u.ToolCall != nil && strings.HasPrefix(u.ToolCall.Title, "Conversation compacted: ") {
			return u.ToolCall
		}
	}
	return nil
}

// startsWithSummary reports whether msgs start with what a compaction
// wrote: acpgate's note, then the summary as the model's own answer.
func startsWithSummary(msgs []gateway.Message) bool {
	return len(msgs) >= 2 && msgs[0].Role == gateway.RoleUser && msgs[0].Summary && msgs[0].Text() == compact.SummaryNote &&
		msgs[1].Role == gateway.RoleAssistant && msgs[1].Summary && strings.HasPrefix(msgs[1].Text(), compact.SummaryHeader)
}

// TestCompactionInTurn: a prompt whose request would pass 80 % of the
// configured window is compacted first: the user gets a card and a
// usage_update of the new size, the model the summary and the recent
// turns. session/load replays the conversation as it was, card included,
// and the model goes on from the compacted history; so does
// session/resume.
func TestCompactionInTurn(t *testing.T) {
	t.Parallel()
	m := talker(3000) // ~750 tokens a turn
	h := newHarness(t, acp.Options{Provider: m, Config: configOf(t, `{"model": {"contextWindow": 4000}}`)}, nil)
	sid := h.newSession().SessionId
	var card *acpsdk.SessionUpdateToolCall
	var at int
	for i := 0; card == nil; i++ {
		if i == 8 {
			t.Fatal("no compaction in 8 turns")
		}
		_, ups := h.prompt(sid, fmt.Sprintf("prompt %d", i))
		if card = compactionCard(ups); card != nil {
			at = i
			var usage *acpsdk.SessionUsageUpdate
			for _, u := range ups {
				if u.UsageUpdate != nil && usage == nil {
					usage = u.UsageUpdate
				}
			}
			meta := card.Meta["acpgate"].(map[string]any)["compaction"].(map[string]any)
			if usage == nil || usage.Size != 4000 || float64(usage.Used) != meta["after"] {
				t.Errorf("usage_update %+v after the compaction %v", usage, meta)
			}
		}
	}
	if card.Status != acpsdk.ToolCallStatusCompleted || !strings.Contains(card.Title, "turns summarised") || !strings.Contains(toolText([]acpsdk.SessionUpdate{{ToolCall: card}}, string(card.ToolCallId)), "SUMMARY of the talk") {
		t.Errorf("card %+v", card)
	}
	turns := modelTurns(m)
	last := turns[len(turns)-1].Messages
	if !startsWithSummary(last) || last[len(last)-1].Text() != fmt.Sprintf("prompt %d", at) {
		t.Fatalf("the model got %d messages starting with %q", len(last), last[0].Text())
	}

	// One more turn, then load: the replay shows every prompt and the
	// card; the model gets the compacted history.
	h.prompt(sid, "after")
	compacted := modelTurns(m)[len(modelTurns(m))-1].Messages
	h.closeSession(sid)
	from := h.fc.rec.len()
	if _, err := h.conn.LoadSession(h.ctx(), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	replay := h.fc.rec.since(from, sid)
	var users []string
	for _, u := range replay {
		if u.UserMessageChunk != nil {
			users = append(users, u.UserMessageChunk.Content.Text.Text)
		}
	}
	if len(users) != at+2 || users[0] != "prompt 0" || compactionCard(replay) == nil {
		t.Errorf("replayed user messages %q, card %v", users, compactionCard(replay) != nil)
	}
	h.prompt(sid, "after load")
	got := modelTurns(m)[len(modelTurns(m))-1].Messages
	if len(got) != len(compacted)+2 || !startsWithSummary(got) || got[len(got)-3].Text() != "after" {
		t.Errorf("after load the model got %d messages (before: %d), first %q", len(got), len(compacted), got[0].Text())
	}

	h.closeSession(sid)
	if _, err := h.conn.ResumeSession(h.ctx(), acpsdk.ResumeSessionRequest{SessionId: sid, Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	h.prompt(sid, "after resume")
	got = modelTurns(m)[len(modelTurns(m))-1].Messages
	if !startsWithSummary(got) || got[len(got)-1].Text() != "after resume" || got[len(got)-3].Text() != "after load" {
		t.Errorf("after resume the model got %d messages, first %q", len(got), got[0].Text())
	}
}

// TestCompactCommand: /compact summarises every turn but the last now,
// with its focus passed to the summary, and is advertised; with one turn
// there is nothing to do; with no model it says so.
func TestCompactCommand(t *testing.T) {
	t.Parallel()
	m := talker(10)
	h := newHarness(t, acp.Options{Provider: m}, nil)
	s := h.newSession()
	cmds := h.fc.rec.waitFor(t, 0, s.SessionId, "commands", isCommands).AvailableCommandsUpdate.AvailableCommands
	if !strings.Contains(fmt.Sprint(cmds), "compact") {
		t.Errorf("/compact not advertised: %+v", cmds)
	}
	h.prompt(s.SessionId, "first")
	if _, ups := h.prompt(s.SessionId, "/compact"); !strings.Contains(agentText(ups), "Nothing to compact") {
		t.Errorf("/compact with one turn: %q", agentText(ups))
	}
	h.prompt(s.SessionId, "second")
	h.prompt(s.SessionId, "third")
	_, ups := h.prompt(s.SessionId, "/compact the build errors")
	card := compactionCard(ups)
	if card == nil || !strings.Contains(card.Title, "2 turns summarised") {
		t.Fatalf("no card: %s", dump(ups))
	}
	reqs := m.requests()
	sum := reqs[len(reqs)-1]
	if sum.System != compact.Instructions || !strings.Contains(sum.Messages[0].Text(), "keep what concerns: the build errors") {
		t.Errorf("summary request %+v", sum)
	}
	h.prompt(s.SessionId, "fourth")
	got := modelTurns(m)[len(modelTurns(m))-1].Messages
	if len(got) != 5 || !startsWithSummary(got) || got[2].Text() != "third" || got[4].Text() != "fourth" {
		t.Errorf("after /compact the model got %+v", got)
	}

	none := newHarness(t, acp.Options{}, nil)
	s2 := none.newSession()
	if _, ups := none.prompt(s2.SessionId, "/compact"); !strings.Contains(agentText(ups), "No model is configured") {
		t.Errorf("/compact without a model: %q", agentText(ups))
	}
}

// TestCompactionWindowFromEndpoint: a model whose window the
// configuration does not give has the one its endpoint lists (GET
// /models), for the usage updates and compaction alike; limits.compactAt
// sets the threshold.
func TestCompactionWindowFromEndpoint(t *testing.T) {
	t.Parallel()
	llm := fakellm.Start()
	defer llm.Close()
	llm.SetModelFields(fakellm.DefaultModel, map[string]any{"context_length": 6000})
	llm.SetResponder(func(req fakellm.Request) (fakellm.Turn, bool) {
		if req.Messages[0].Content == compact.Instructions {
			return fakellm.Turn{Text: "summary"}, true
		}
		return fakellm.Turn{Text: strings.Repeat("v", 4000), Usage: &fakellm.Usage{PromptTokens: req.Tokens, CompletionTokens: 1000}}, true
	})
	models := newEndpointModels()
	cfg := config.Model{BaseURL: llm.URL, Model: fakellm.DefaultModel}
	models.known(t, cfg)
	h := newHarness(t, acp.Options{Models: models, Config: configOf(t, `{"model": {"baseUrl": "`+llm.URL+`", "model": "`+fakellm.DefaultModel+`"}, "limits": {"compactAt": 50}}`)}, nil)
	sid := h.newSession().SessionId
	_, ups := h.prompt(sid, "one")
	var usage *acpsdk.SessionUsageUpdate
	for _, u := range ups {
		if u.UsageUpdate != nil {
			usage = u.UsageUpdate
		}
	}
	if usage == nil || usage.Size != 6000 {
		t.Fatalf("usage_update %+v, want the listed window 6000", usage)
	}
	for i := range 3 { // 1000 tokens a turn: past 50 % of 6000 by the third
		if _, ups := h.prompt(sid, fmt.Sprint(i)); compactionCard(ups) != nil {
			return
		}
	}
	t.Error("no compaction at 50 % of the listed window")
}
