package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/bridge"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/compact"
)

// This file is compaction: a session's conversation kept within its
// model's context window (gateway/compact does the work), the card that
// tells the user, the session log's record of it, and /compact.
//
// The session log keeps what the user saw and what the model has apart:
// the card is an update like the others, so session/load replays the
// conversation as it was with the card where the compaction happened; the
// compacted history is one recHistory record, which replaces the messages
// before it when the history is rebuilt (load and resume), so the model
// goes on from the compacted conversation.

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
func (su *setup) newCompactor(id string, sc sessionConfig) *compact.Compactor {
	return compact.New(&compact.Options{Threshold: sc.compactThreshold(), Logger: su.logger.With("session", id), Neutralize: bridge.Neutralize})
}

// compaction sets the session's compactor, with the threshold the
// configuration says now, on a turn's options. The caller holds s.mu.
func (s *liveSession) compaction(run *gateway.RunOptions) {
	s.compactor.SetThreshold(s.cfg.compactThreshold())
	run.Compactor = s.compactor
}

// addHistory adds a model turn's messages to the session's history and
// its log; history, when set, is the whole conversation after a turn that
// compacted it, and replaces the history instead.
func (t *turnLog) addHistory(msgs []gateway.Message, history gateway.History) {
	s := t.s
	s.mu.Lock()
	if history != nil {
		s.history = history
	} else {
		s.history = append(s.history, msgs...)
	}
	s.mu.Unlock()
	if history != nil {
		t.persist(recHistory, history)
		return
	}
	for _, m := range msgs {
		t.persist(recMessage, m)
	}
}

// compacted tells the user of a compaction with a card (recorded, so that
// session/load replays it where it happened) and sends the new size as a
// usage_update when the window is known.
func (t *turnLog) compacted(c *gateway.Compaction) {
	t.flush()
	id := t.tu.peer.nextCard(fmt.Sprintf("compact-%d", time.Now().UnixNano()))
	u := acpsdk.StartToolCall(acpsdk.ToolCallId(id), compactionTitle(c),
		acpsdk.WithStartKind(acpsdk.ToolKindOther),
		acpsdk.WithStartStatus(acpsdk.ToolCallStatusCompleted),
		acpsdk.WithStartContent([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(compactionText(c)))}))
	u.ToolCall.Meta = map[string]any{"acpgate": map[string]any{"compaction": map[string]any{
		"turns": c.Turns, "elided": c.Elided, "before": c.Before, "after": c.After, "summaryCalls": c.SummaryCalls,
	}}}
	t.tu.peer.update(t.s, u)
	t.record(u)
	if up, ok := t.tu.usageUpdate(t.s, c.Usage); ok {
		up.Used = c.After
		t.tu.peer.update(t.s, acpsdk.SessionUpdate{UsageUpdate: &up})
	}
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
func (co *commands) compact(ctx context.Context, s *liveSession, t *turnLog, focus string) string {
	s.mu.Lock()
	model, history := s.provider, s.history
	_, window, _ := s.current(co.setup)
	s.mu.Unlock()
	if model == nil {
		return "No model is configured, so there is nothing to summarise with."
	}
	c, err := s.compactor.Fit(ctx, gateway.FitRequest{Model: model, Request: gateway.ModelRequest{Messages: history}, Window: window, Force: true, Focus: focus})
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
