package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/bridge"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/compact"
	"github.com/acpgate/acpgate/gateway/hooks"
)

// This file is compaction: a session's conversation kept within its
// model's context window (gateway/compact does the work), what tells the
// user (a card; to a client that advertised session.compaction,
// compaction_update from its start and compaction_summary_chunk), the
// session log's record of it, and /compact.
//
// The session log keeps what the user saw and what the model has apart:
// a compaction is one recCompaction record, so session/load replays the
// conversation as it was with the compaction where it happened, in the
// shape the loading client advertised; the compacted history is one
// recHistory record, which replaces the messages before it when the
// history is rebuilt (load and resume), so the model goes on from the
// compacted conversation.

// recHistory is the record kind of a compacted history (gateway.History).
const recHistory = "history"

// compactThreshold is the share of the window limits.compactAt sets
// (compact.Options.Threshold).
func (sc *sessionConfig) compactThreshold() float64 {
	switch at := sc.limits.CompactAt; {
	case at == nil:
		return 0
	case *at == 0:
		return compact.Never
	default:
		return float64(*at) / 100
	}
}

// newCompactor returns the compactor of a session with configuration sc.
func (cf *agentConfig) newCompactor(id string, sc sessionConfig) *compact.Compactor {
	return compact.New(&compact.Options{Threshold: sc.compactThreshold(), Logger: cf.logger.With("session", id), Neutralize: bridge.Neutralize})
}

// compaction sets the session's compactor, with the threshold the
// configuration (cfg) says now, on a turn's options.
func (s *liveSession) compaction(run *gateway.RunOptions, cfg sessionConfig) {
	s.compactor.SetThreshold(cfg.compactThreshold())
	run.Compactor = s.compactor
}

// addHistory adds a model turn's messages to the session's history and
// its log; history, when set, is the whole conversation after a turn that
// compacted it, and replaces the history instead.
func (t *turnLog) addHistory(msgs []gateway.Message, history gateway.History) {
	t.s.addHistory(msgs, history)
	if history != nil {
		t.persist(recHistory, t.storedMessages(history))
		return
	}
	msgs = t.storedMessages(msgs)
	// The last assistant messages are the turn's answers, whose words
	// the chunk records hold already.
	first := -len(t.answers.answers)
	for _, m := range msgs {
		if m.Role == gateway.RoleAssistant {
			first++
		}
	}
	i := 0
	for _, m := range msgs {
		if m.Role != gateway.RoleAssistant {
			t.persist(recMessage, m)
			continue
		}
		t.persist(recMessage, t.answers.stored(m, i-first, t.redact))
		i++
	}
}

// storedMessages is msgs as the session log keeps them: their large
// images and audio as blob records, written now (blobs.go).
func (t *turnLog) storedMessages(msgs []gateway.Message) []gateway.Message {
	return storedMessages(msgs, func(b storedBlob) {
		if t.s.blobs().add(b.SHA256) && !t.persist(recBlob, b) {
			t.s.blobs().forget(b.SHA256)
		}
	})
}

// preCompact runs the session's PreCompact hooks (trigger: manual or
// auto; focus: what /compact was given), for their effects.
func (t *turnLog) preCompact(trigger, focus string) {
	if hr := t.s.hooksRun(); hr != nil {
		hr.run(t.s.lifetime(), hooks.PreCompact, trigger, hooks.Input{Trigger: trigger, CustomInstructions: &focus})
	}
}

// compactionStarted tells a client that advertised session.compaction
// that a compaction has started (compaction_update in_progress); the
// compaction's id is kept until it ends (compacted, compactionFailed).
// Other clients are shown nothing until it is done (the card).
func (t *turnLog) compactionStarted() {
	t.flush()
	t.compaction = t.tu.peer.nextCard(fmt.Sprintf("compact-%d", time.Now().UnixNano()))
	if t.tu.peer.sessionCapabilities().compaction {
		t.tu.peer.updateOwn(t.s, CompactionUpdate{CompactionID: t.compaction, Status: CompactionInProgress})
	}
}

// compacted tells the user of a compaction (showCompaction), records it
// so that session/load replays it where it happened, and sends the new
// size as a usage_update when the window is known.
func (t *turnLog) compacted(c *gateway.Compaction) {
	t.flush()
	id := t.compaction
	if id == "" { // a compactor that did not say it started
		id = t.tu.peer.nextCard(fmt.Sprintf("compact-%d", time.Now().UnixNano()))
	}
	t.compaction = ""
	meta := map[string]any{"acpgate": map[string]any{"compaction": map[string]any{
		"turns": c.Turns, "elided": c.Elided, "before": c.Before, "after": c.After, "summaryCalls": c.SummaryCalls,
	}}}
	card := acpsdk.StartToolCall(acpsdk.ToolCallId(id), compactionTitle(c),
		acpsdk.WithStartKind(acpsdk.ToolKindOther),
		acpsdk.WithStartStatus(acpsdk.ToolCallStatusCompleted),
		acpsdk.WithStartContent([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(compactionText(c)))}))
	card.ToolCall.Meta = meta
	rec := compactionRecord{Card: card, Update: CompactionUpdate{CompactionID: id, Status: CompactionCompleted, Meta: meta}, Summary: strings.TrimSpace(c.Summary)}
	t.persist(recCompaction, rec)
	t.tu.peer.showCompaction(t.s, rec)
	if up, ok := t.tu.usageUpdate(t.s, c.Usage); ok {
		up.Used = c.After
		t.tu.peer.update(t.s, acpsdk.SessionUpdate{UsageUpdate: &up})
	}
}

// compactionFailed ends the compaction under way, if any, that did not
// change the conversation (err says why): a client that advertised
// session.compaction is told it failed, or was cancelled (err wraps
// context.Canceled). Nothing is recorded: the conversation is as it was.
func (t *turnLog) compactionFailed(err error) {
	id := t.compaction
	t.compaction = ""
	if id == "" || !t.tu.peer.sessionCapabilities().compaction {
		return
	}
	u := CompactionUpdate{CompactionID: id, Status: CompactionFailed}
	switch {
	case errors.Is(err, context.Canceled):
		u.Status = CompactionCancelled
	case err != nil:
		u.Error = err.Error()
	}
	t.tu.peer.updateOwn(t.s, u)
}

// recCompaction is the record kind of a compaction shown to the user
// (compactionRecord). Logs written before it have the card as an update
// record, replayed as it is.
const recCompaction = "compaction"

// compactionRecord is a compaction as the session log keeps it: what a
// client is shown of it either way, for session/load to replay the shape
// the loading client advertised.
type compactionRecord struct {
	// Card is the card of clients without session.compaction.
	Card acpsdk.SessionUpdate `json:"card"`
	// Update (completed, with the card's _meta) and Summary (the
	// summary's text, "" for none) are what the others get.
	Update  CompactionUpdate `json:"update"`
	Summary string           `json:"summary,omitempty"`
}

// showCompaction shows a compaction that is done: the card, or, to a
// client that advertised session.compaction, the summary as a
// compaction_summary_chunk and the compaction_update that completes it
// (after its in_progress, live; on its own, replayed).
func (pe *peer) showCompaction(s peerSession, r compactionRecord) {
	if !pe.sessionCapabilities().compaction {
		pe.update(s, r.Card)
		return
	}
	if r.Summary != "" {
		pe.updateOwn(s, CompactionSummaryChunk{CompactionID: r.Update.CompactionID, Content: acpsdk.TextBlock(r.Summary)})
	}
	pe.updateOwn(s, r.Update)
}

// compactionTitle is the card's title: "Conversation compacted: 12 turns
// summarised, 3 tool results shortened, 25913 → 9876 tokens".
func compactionTitle(c *gateway.Compaction) string {
	var parts []string
	if c.Turns > 0 {
		parts = append(parts, plural(c.Turns, "turn", "turns")+" summarised")
	}
	if c.Elided > 0 {
		parts = append(parts, plural(c.Elided, "tool result", "tool results")+" shortened")
	}
	parts = append(parts, fmt.Sprintf("%d → %d tokens", c.Before, c.After))
	return "Conversation compacted: " + strings.Join(parts, ", ")
}

// compactionText is the card's text: what the model now has, and the
// summary it got.
func compactionText(c *gateway.Compaction) string {
	var b strings.Builder
	b.WriteString("The model now sees ")
	switch {
	case c.Turns > 0 || c.SummaryCalls > 0:
		fmt.Fprintf(&b, "a summary of the earlier conversation (written in %s) and the most recent turns", plural(c.SummaryCalls, "model request", "model requests"))
	default:
		b.WriteString("the conversation with the bodies of its oldest tool results replaced by a note")
	}
	b.WriteString("; the messages above stay as they were for you.")
	if c.Summary != "" {
		b.WriteString("\n\n" + strings.TrimSpace(c.Summary))
	}
	return b.String()
}

// plural is "1 turn", "2 turns".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// compact is /compact [focus]: every turn but the last summarised now,
// with focus passed to the summary.
func (co *commands) compact(ctx context.Context, s commandSession, t *turnLog, focus string) string {
	c, err := s.compact(ctx, co.conf, focus, func() {
		t.preCompact("manual", focus)
		t.compactionStarted()
	})
	if errors.Is(err, errNoModel) {
		return "No model is configured, so there is nothing to summarise with."
	}
	if c == nil || ctx.Err() != nil {
		t.compactionFailed(errors.Join(ctx.Err(), err)) // if one started
	}
	switch {
	case ctx.Err() != nil:
		return ""
	case err != nil:
		return fmt.Sprintf("Compacting the conversation failed: %v", err)
	case c == nil:
		return "Nothing to compact: the conversation has no turn before the last one."
	}
	t.addHistory(nil, c.Messages)
	t.compacted(c)
	return ""
}

// replaceHistory is what a recHistory record makes of the history rebuilt
// so far: the stored one (h unchanged if the record is unreadable), with a
// summary stored as the user's before summaries were the model's made the
// model's (compact.UpgradeSummaries).
func replaceHistory(h gateway.History, data json.RawMessage) gateway.History {
	var stored gateway.History
	if json.Unmarshal(data, &stored) != nil {
		return h
	}
	return compact.UpgradeSummaries(stored, bridge.Neutralize)
}
