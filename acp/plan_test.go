package acp_test

import (
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
)

// plans returns the plan updates among ups.
func plans(ups []acpsdk.SessionUpdate) [][]acpsdk.PlanEntry {
	var out [][]acpsdk.PlanEntry
	for _, u := range ups {
		if u.Plan != nil {
			out = append(out, u.Plan.Entries)
		}
	}
	return out
}

// TestPlanUpdates: update_plan calls become plan updates, with no tool
// call card and no permission request (in ask mode); a bad plan is a
// failed card saying why, and the model is told; session/load replays the
// plans.
func TestPlanUpdates(t *testing.T) {
	t.Parallel()
	good := `{"entries":[{"content":"Read the code","priority":"high","status":"completed"},{"content":"Fix the bug","priority":"medium","status":"in_progress"}]}`
	m := scripted(calls("p1", "update_plan", good), calls("p2", "update_plan", `{"entries":[{"content":"x","priority":"urgent","status":"pending"}]}`),
		calls("p3", "update_plan", `{"entries":[]}`), says("done"))
	h := newHarness(t, acp.Options{Provider: m}, nil) // any permission request fails the test
	sid := h.newSession().SessionId
	_, ups := h.prompt(sid, "fix it")
	got := plans(ups)
	if len(got) != 2 || len(got[0]) != 2 || mustJSON(got[0][1]) != `{"content":"Fix the bug","priority":"medium","status":"in_progress"}` || len(got[1]) != 0 {
		t.Fatalf("plans %s", mustJSON(got))
	}
	if len(toolUpdates(ups, "p1")) != 0 || len(toolUpdates(ups, "p3")) != 0 {
		t.Errorf("cards for a plan: %s", dump(ups))
	}
	if finalStatus(ups, "p2") != acpsdk.ToolCallStatusFailed || !strings.Contains(toolText(ups, "p2"), `entries[0].priority must be high, medium or low, not "urgent"`) {
		t.Errorf("bad plan: %s", dump(toolUpdates(ups, "p2")))
	}
	if got := toolResult(m, "p2"); !strings.Contains(got, "invalid plan") {
		t.Errorf("the model was told %q", got)
	}
	if got := toolResult(m, "p1"); !strings.HasPrefix(got, "Plan updated: 2 steps (1 completed, 1 in progress, 0 pending)") {
		t.Errorf("the model was told %q", got)
	}

	h.closeSession(sid)
	from := h.fc.rec.len()
	if _, err := h.conn.LoadSession(h.ctx(), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	if replayed := plans(h.fc.rec.since(from, sid)); mustJSON(replayed) != mustJSON(got) {
		t.Errorf("replayed %s, want %s", mustJSON(replayed), mustJSON(got))
	}
}

// TestPlanDenied: tools.deny removes update_plan: it is not offered, the
// system prompt does not mention it, and a call of it is refused.
func TestPlanDenied(t *testing.T) {
	t.Parallel()
	m := scripted(calls("p1", "update_plan", `{"entries":[]}`), says("ok"))
	h := newHarness(t, acp.Options{Provider: m, Config: configOf(t, `{"agents": {"defaults": {"tools": {"deny": ["update_plan"]}}}}`)}, nil)
	sid := h.newSession().SessionId
	_, ups := h.prompt(sid, "plan")
	if got := offered(m); len(got) != 0 {
		t.Errorf("offered %v", got)
	}
	if sys := m.requests()[0].System; strings.Contains(sys, "update_plan") {
		t.Errorf("the system prompt mentions update_plan:\n%s", sys)
	}
	if len(plans(ups)) != 0 || !strings.Contains(toolResult(m, "p1"), "not allowed by policy") {
		t.Errorf("a denied plan: %s; the model was told %q", dump(ups), toolResult(m, "p1"))
	}
}
