package acp

import (
	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/plan"
)

// This file is the model's plan: an update_plan call (gateway/plan) is
// shown as the session's plan (session/update "plan", which editors show
// as a task list), not as a tool call.

// planEvent handles an event of an update_plan call: nothing shows while
// it runs; once it is done, its plan is sent and recorded (session/load
// replays it), or, when it failed, a failed tool call card says why.
func (t *turnLog) planEvent(e gateway.Event) {
	if e.Kind != gateway.EventToolCallFinished {
		return
	}
	t.flush()
	entries, ok := plan.Entries(*e.Result)
	if !ok {
		card := toolCallStart(e.Call)
		card.Status, card.Content = acpsdk.ToolCallStatusFailed, toolContent(e.Result.Content)
		u := acpsdk.SessionUpdate{ToolCall: card}
		t.tu.peer.update(t.s, u)
		t.record(u)
		return
	}
	u := acpsdk.UpdatePlan(planEntries(entries)...)
	t.tu.peer.update(t.s, u)
	t.record(u)
}

// planEntries converts a plan to ACP's entries (never nil: an empty plan
// is sent as [], which clears the editor's).
func planEntries(entries []plan.Entry) []acpsdk.PlanEntry {
	out := make([]acpsdk.PlanEntry, len(entries))
	for i, e := range entries {
		out[i] = acpsdk.PlanEntry{Content: e.Content, Priority: acpsdk.PlanEntryPriority(e.Priority), Status: acpsdk.PlanEntryStatus(e.Status)}
	}
	return out
}
