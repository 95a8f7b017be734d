package acp_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/compact"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/session"
)

// compactionKinds are the session updates of a client that advertised
// session.compaction.
var compactionKinds = []string{"compaction_update", "compaction_summary_chunk"}

// compactionStep is a compaction_update or compaction_summary_chunk as
// the client got it.
type compactionStep struct {
	kind   string
	update acp.CompactionUpdate
	chunk  acp.CompactionSummaryChunk
}

// compactionSteps returns the compaction updates of session sid from
// index from on.
func compactionSteps(t *testing.T, ups *testbin.Updates, from int, sid acpsdk.SessionId) []compactionStep {
	t.Helper()
	var out []compactionStep
	for _, u := range ups.Since(from, string(sid), compactionKinds...) {
		st := compactionStep{kind: u.Kind}
		if u.Kind == "compaction_update" {
			u.Decode(t, &st.update)
		} else {
			u.Decode(t, &st.chunk)
		}
		out = append(out, st)
	}
	return out
}

// openStore opens the session store in dir.
func openStore(t *testing.T, dir string) *session.Store {
	t.Helper()
	st, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestCompactionUpdates: a client that advertised session.compaction
// sees a compaction as compaction_update in_progress, then the summary
// as a compaction_summary_chunk and compaction_update completed (with
// the sizes in _meta), all with one id, and no card. session/load
// replays it in the shape the loading client advertised: the summary
// chunk and the completed update, or the card.
func TestCompactionUpdates(t *testing.T) {
	t.Parallel()
	m := talker(3000) // ~750 tokens a turn
	dir := t.TempDir()
	opts := func() acp.Options {
		return acp.Options{Store: openStore(t, dir), Provider: m, Config: configOf(t, `{"model": {"contextWindow": 4000}}`)}
	}
	h, ups := sessionHarness(t, opts(), nil, "compaction")
	sid := h.newSession().SessionId
	var steps []compactionStep
	for i := 0; len(steps) == 0; i++ {
		if i == 8 {
			t.Fatal("no compaction in 8 turns")
		}
		from := ups.Len()
		_, sdk := h.prompt(sid, fmt.Sprintf("prompt %d", i))
		if steps = compactionSteps(t, ups, from, sid); len(steps) > 0 && compactionCard(sdk) != nil {
			t.Errorf("a card as well: %s", dump(sdk))
		}
	}
	if len(steps) != 3 || steps[0].update.Status != acp.CompactionInProgress ||
		steps[1].kind != "compaction_summary_chunk" || steps[1].chunk.Content.Text == nil || steps[1].chunk.Content.Text.Text != "SUMMARY of the talk" ||
		steps[2].update.Status != acp.CompactionCompleted {
		t.Fatalf("compaction updates %+v", steps)
	}
	id := steps[0].update.CompactionID
	if id == "" || steps[1].chunk.CompactionID != id || steps[2].update.CompactionID != id {
		t.Errorf("ids %q, %q, %q", id, steps[1].chunk.CompactionID, steps[2].update.CompactionID)
	}
	meta, _ := steps[2].update.Meta["acpgate"].(map[string]any)
	if c, _ := meta["compaction"].(map[string]any); c["turns"] == nil || c["after"] == nil {
		t.Errorf("_meta %v", steps[2].update.Meta)
	}
	h.closeSession(sid)

	for _, caps := range [][]string{{"compaction"}, nil} {
		t.Run(fmt.Sprintf("load with %v", caps), func(t *testing.T) {
			l, lups := sessionHarness(t, opts(), nil, caps...)
			if _, err := l.conn.LoadSession(l.ctx(), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}}); err != nil {
				t.Fatal(err)
			}
			card, replayed := compactionCard(l.fc.rec.since(0, sid)), compactionSteps(t, lups, 0, sid)
			if caps == nil {
				if card == nil || string(card.ToolCallId) != id || len(replayed) != 0 {
					t.Errorf("card %+v, compaction updates %+v", card, replayed)
				}
				return
			}
			if card != nil || len(replayed) != 2 || replayed[0].chunk.CompactionID != id || replayed[0].chunk.Content.Text == nil ||
				replayed[0].chunk.Content.Text.Text != "SUMMARY of the talk" || replayed[1].update.CompactionID != id || replayed[1].update.Status != acp.CompactionCompleted {
				t.Errorf("card %v, compaction updates %+v", card != nil, replayed)
			}
		})
	}
}

// TestCompactionOldLogReplay: a log written before compactions had a
// record of their own holds the card as an update: it is replayed as it
// is, to a client that advertised session.compaction too.
func TestCompactionOldLogReplay(t *testing.T) {
	t.Parallel()
	store := openStore(t, t.TempDir())
	st, err := store.Create("sess_old", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	card := acpsdk.StartToolCall("compact-1-1", "Conversation compacted: 2 turns summarised, 900 → 300 tokens",
		acpsdk.WithStartKind(acpsdk.ToolKindOther), acpsdk.WithStartStatus(acpsdk.ToolCallStatusCompleted),
		acpsdk.WithStartContent([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock("The model now sees a summary."))}))
	if err := st.Append("update", card); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	h, ups := sessionHarness(t, acp.Options{Store: store}, nil, "compaction")
	if _, err := h.conn.LoadSession(h.ctx(), acpsdk.LoadSessionRequest{SessionId: "sess_old", Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	if got := compactionCard(h.fc.rec.since(0, "sess_old")); got == nil || got.ToolCallId != "compact-1-1" {
		t.Errorf("replayed card %+v", got)
	}
	if steps := compactionSteps(t, ups, 0, "sess_old"); len(steps) != 0 {
		t.Errorf("compaction updates %+v", steps)
	}
}

// TestCompactionFailedOrCancelled: a /compact whose summary fails, or
// that the user cancels while the model writes it, ends as a
// compaction_update failed (with the error) or cancelled for a client
// that advertised session.compaction, and shows nothing to one that did
// not (as before). Neither is recorded: session/load replays no
// compaction.
func TestCompactionFailedOrCancelled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		caps   []string
		cancel bool
	}{{[]string{"compaction"}, false}, {[]string{"compaction"}, true}, {nil, false}, {nil, true}} {
		t.Run(fmt.Sprintf("%v cancel=%v", tc.caps, tc.cancel), func(t *testing.T) {
			t.Parallel()
			summarising := make(chan struct{}, 1)
			m := &fakeModel{}
			m.CompleteFunc = func(ctx context.Context, req gateway.ModelRequest, onDelta func(gateway.Delta)) (gateway.ModelResponse, error) {
				if req.System != compact.Instructions {
					return says("ok")(req, onDelta)
				}
				summarising <- struct{}{}
				if tc.cancel {
					<-ctx.Done()
					return gateway.ModelResponse{}, ctx.Err()
				}
				return gateway.ModelResponse{}, errors.New("the endpoint is down")
			}
			h, ups := sessionHarness(t, acp.Options{Provider: m}, nil, tc.caps...)
			sid := h.newSession().SessionId
			h.prompt(sid, "first")
			h.prompt(sid, "second")
			done := make(chan acpsdk.StopReason, 1)
			go func() {
				resp, err := h.conn.Prompt(h.ctx(), acpsdk.PromptRequest{SessionId: sid, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("/compact")}})
				if err != nil {
					t.Errorf("/compact: %v", err)
				}
				done <- resp.StopReason
			}()
			recv(t, summarising)
			if tc.cancel {
				if err := h.conn.Cancel(h.ctx(), acpsdk.CancelNotification{SessionId: sid}); err != nil {
					t.Fatal(err)
				}
			}
			if stop := recv(t, done); (stop == acpsdk.StopReasonCancelled) != tc.cancel {
				t.Errorf("stop reason %s", stop)
			}
			steps := compactionSteps(t, ups, 0, sid)
			if card := compactionCard(h.fc.rec.since(0, sid)); card != nil {
				t.Errorf("a card: %+v", card)
			}
			switch {
			case tc.caps == nil:
				if len(steps) != 0 {
					t.Errorf("compaction updates %+v", steps)
				}
			case len(steps) != 2 || steps[0].update.Status != acp.CompactionInProgress || steps[1].update.CompactionID != steps[0].update.CompactionID:
				t.Errorf("compaction updates %+v", steps)
			case tc.cancel && (steps[1].update.Status != acp.CompactionCancelled || steps[1].update.Error != ""),
				!tc.cancel && (steps[1].update.Status != acp.CompactionFailed || steps[1].update.Error == ""):
				t.Errorf("the compaction ended %+v", steps[1].update)
			}
			h.closeSession(sid)
			from := ups.Len()
			if _, err := h.conn.LoadSession(h.ctx(), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}}); err != nil {
				t.Fatal(err)
			}
			if steps := compactionSteps(t, ups, from, sid); len(steps) != 0 {
				t.Errorf("replayed compaction updates %+v", steps)
			}
		})
	}
}
