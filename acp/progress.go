package acp

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/gateway"
)

// This file is a tool call's progress on its card: notifications/progress
// throttled per call.

// progressEvery is the least time between two progress updates of one
// tool call card: a server may send progress far faster than an editor
// can usefully redraw. Updates in between are coalesced (the latest wins
// and is sent when the interval is over), and one whose text is the
// card's current text is not sent at all.
const progressEvery = 200 * time.Millisecond

// maxProgressMessage caps the server's message on a card.
const maxProgressMessage = 300

// progressCards throttles the progress updates of a turn's tool call
// cards. Safe for concurrent use; the zero value is ready.
type progressCards struct {
	mu    sync.Mutex
	cards map[string]*progressCard
}

// progressCard is the throttle of one card; mu is held while an update of
// it is sent, so a late one never follows the card's final update.
type progressCard struct {
	every       time.Duration // progressEvery
	mu          sync.Mutex
	sent        string    // text of the last update sent
	last        time.Time // when it was sent
	pending     func()    // sends the latest update not yet sent
	pendingText string
	timer       *time.Timer
	done        bool
}

func (pc *progressCards) card(id string) *progressCard {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.cards == nil {
		pc.cards = map[string]*progressCard{}
	}
	c := pc.cards[id]
	if c == nil {
		c = &progressCard{every: progressEvery}
		pc.cards[id] = c
	}
	return c
}

// finish ends the card id's progress: nothing pending is sent any more,
// and a report that arrives later (one already on its way from the server)
// finds the card finished, so no update follows the card's final one. It
// returns once no progress update of the card is being sent.
func (pc *progressCards) finish(id string) {
	c := pc.card(id) // kept, finished, for the rest of the turn
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done, c.pending = true, nil
	if c.timer != nil {
		c.timer.Stop()
	}
}

// offer sends (through send) an update whose card text is text, now or
// once the card's interval is over; see progressEvery.
func (c *progressCard) offer(text string, send func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return
	}
	if text == c.sent {
		c.pending = nil // the card already says this
		return
	}
	wait := c.every - time.Since(c.last)
	if wait <= 0 && c.timer == nil {
		c.sent, c.last = text, time.Now()
		send()
		return
	}
	c.pending, c.pendingText = send, text
	if c.timer == nil {
		c.timer = time.AfterFunc(max(wait, 0), c.flush)
	}
}

// flush sends the pending update, if any.
func (c *progressCard) flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timer = nil
	if c.done || c.pending == nil {
		return
	}
	send := c.pending
	c.pending = nil
	c.sent, c.last = c.pendingText, time.Now()
	send()
}

// progressText is a card's text for a progress report, e.g.
// "working — 40 %: Gathering sources..." or "running — 3: step 3".
func progressText(p gateway.Progress) string {
	var b strings.Builder
	status := strings.ReplaceAll(p.Status, "_", " ")
	if status == "" {
		status = "running"
	}
	b.WriteString(status)
	switch {
	case p.Total > 0:
		fmt.Fprintf(&b, " — %d %%", int(math.Round(100*min(max(p.Progress/p.Total, 0), 1))))
	case p.Progress > 0:
		fmt.Fprintf(&b, " — %g", p.Progress)
	}
	if msg := strings.TrimSpace(p.Message); msg != "" {
		if len(msg) > maxProgressMessage {
			msg = strings.ToValidUTF8(msg[:maxProgressMessage], "") + "…"
		}
		b.WriteString(": " + msg)
	}
	if p.TaskID != "" {
		fmt.Fprintf(&b, " (task %s)", p.TaskID)
	}
	return b.String()
}

// progress shows a tool's progress report e on its card: the card's text
// (see progressText) and, in _meta.progress, the report's fields;
// throttled (see progressEvery).
func (t *turnLog) progress(e gateway.Event) {
	p := e.Progress
	text := progressText(p)
	meta := map[string]any{"progress": p.Progress, "total": p.Total, "message": p.Message}
	if p.Status != "" {
		meta["status"] = p.Status
	}
	if p.TaskID != "" {
		meta["taskId"] = p.TaskID
	}
	u := acpsdk.UpdateToolCall(acpsdk.ToolCallId(e.Call.ID),
		acpsdk.WithUpdateContent([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(text))}))
	u.ToolCallUpdate.Meta = map[string]any{"progress": meta}
	t.cards.card(e.Call.ID).offer(text, func() { t.tu.peer.send(t.s, named(u, e.Call)) })
}
