package acp_test

import (
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
)

// The throttle sends the first update at once, coalesces those within the
// interval (the latest wins), never repeats the card's text, and sends
// nothing once the card is finished.
func TestProgressThrottle(t *testing.T) {
	p := acp.NewProgressCard(time.Hour)
	var sent []string
	offer := func(text string) { p.Offer(text, func() { sent = append(sent, text) }) }
	offer("a")
	offer("b")
	offer("c")
	if strings.Join(sent, ",") != "a" {
		t.Fatalf("sent %q, want only the first", sent)
	}
	p.Flush()
	offer("c")
	if strings.Join(sent, ",") != "a,c" {
		t.Fatalf("sent %q, want the first and the latest, once", sent)
	}
	offer("d")
	p.Finish()
	p.Flush()
	offer("e")
	p.OfferLate("f", func() { sent = append(sent, "f") })
	if strings.Join(sent, ",") != "a,c" {
		t.Errorf("sent %q after the card finished", sent)
	}
}

// A task's status and progress reach the card's text (not only _meta).
func TestTaskProgressCard(t *testing.T) {
	t.Parallel()
	// The first step takes long enough for the task's status to reach the
	// card before its first progress does, even on a loaded machine.
	m := scripted(calls("c1", "mcp__alpha__task", `{"steps":2,"interval_ms":250}`), says("done"))
	h := newHarness(t, acp.Options{Provider: m}, nil)
	sid := h.newSession(stdioServer("alpha")).SessionId
	h.setMode(sid, "auto")
	_, ups := h.prompt(sid, "go")
	var texts []string
	for _, u := range toolUpdates(ups, "c1") {
		if u.ToolCallUpdate != nil && u.ToolCallUpdate.Meta["progress"] != nil && len(u.ToolCallUpdate.Content) == 1 {
			if tb := u.ToolCallUpdate.Content[0].Content; tb != nil && tb.Content.Text != nil {
				texts = append(texts, tb.Content.Text.Text)
			}
		}
	}
	if len(texts) == 0 || !strings.HasPrefix(texts[0], "working (task ") {
		t.Errorf("card texts %q, want the task working first", texts)
	}
	if finalStatus(ups, "c1") != acpsdk.ToolCallStatusCompleted || toolText(ups, "c1") != "task done 2" {
		t.Errorf("final %s", dump(toolUpdates(ups, "c1")))
	}
}
