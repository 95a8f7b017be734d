package acp_test

import (
	"encoding/json"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
)

// editorHeading is the heading the system prompt puts the client's
// _meta.systemPrompt under.
const editorHeading = "# Instructions from the user's editor\n"

// lastSystem is the system prompt of the last request m was sent.
func lastSystem(t *testing.T, m *fakeModel) string {
	t.Helper()
	reqs := m.requests()
	if len(reqs) == 0 {
		t.Fatal("the model got no request")
	}
	return reqs[len(reqs)-1].System
}

// clientPart is the part of a system prompt before its environment: the
// client's prompt and acpgate's own instructions, as they are.
func clientPart(sys string) string {
	i := strings.Index(sys, "# Environment\n")
	if i < 0 {
		return sys
	}
	return sys[:i]
}

// reopenPrompted closes session sid and opens it again in cwd with method
// (session/load or session/resume) and _meta meta (nil: none), then
// prompts it once.
func reopenPrompted(h *harness, sid acpsdk.SessionId, cwd, method string, meta map[string]any) {
	h.t.Helper()
	if _, err := h.conn.CloseSession(h.ctx(), acpsdk.CloseSessionRequest{SessionId: sid}); err != nil {
		h.t.Fatal(err)
	}
	params := map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}
	if meta != nil {
		params["_meta"] = meta
	}
	if r := h.call(method, params); r.Error != nil {
		h.t.Fatalf("%s: %s", method, r.Raw)
	}
	h.prompt(sid, "after "+method)
}

// forkPrompted forks session sid into cwd with _meta meta (nil: none),
// prompts the fork once and returns it.
func forkPrompted(h *harness, sid acpsdk.SessionId, cwd string, meta map[string]any) acpsdk.SessionId {
	h.t.Helper()
	resp, err := h.conn.UnstableForkSession(h.ctx(), acpsdk.UnstableForkSessionRequest{SessionId: sid, Cwd: cwd, McpServers: []acpsdk.UnstableMcpServer{}, Meta: meta})
	if err != nil {
		h.t.Fatal(err)
	}
	h.prompt(resp.SessionId, "in the fork")
	return resp.SessionId
}

// TestClientSystemPrompt: a string _meta.systemPrompt of session/new
// takes the place of acpgate's own instructions, framed as the user's with
// its headings demoted, the same bytes every turn, and /context shows it;
// session/load without one (and session/resume with a null one) keeps it,
// and so does a fork that gives none; a fork's {"append": …} follows
// acpgate's instructions instead; "" removes it, for good.
func TestClientSystemPrompt(t *testing.T) {
	t.Parallel()
	m := scripted(says("ok"))
	h := newHarness(t, acp.Options{Provider: m}, nil)
	cwd := t.TempDir()
	resp, err := h.conn.NewSession(h.ctx(), acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{},
		Meta: map[string]any{"systemPrompt": "You are Marvin, a reviewer.\n# Environment\n- Date: 1999-01-01"}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	h.prompt(sid, "one")
	h.prompt(sid, "two")
	reqs := m.requests()
	sys := reqs[0].System
	if !strings.HasPrefix(sys, editorHeading) || !strings.Contains(sys, "in place of acpgate's own: they are the user's own words.") ||
		!strings.Contains(sys, "\n\nYou are Marvin, a reviewer.\n### Environment\n- Date: 1999-01-01\n\n# Environment\n- Date: ") ||
		strings.Contains(sys, "You are acpgate") || strings.Count(sys, "\n# Environment") != 1 {
		t.Errorf("the system prompt:\n%s", sys)
	}
	if len(reqs) != 2 || reqs[1].System != sys {
		t.Errorf("the second turn's system prompt differs (%d requests)", len(reqs))
	}
	_, ups := h.prompt(sid, "/context")
	text := agentText(ups)
	for _, want := range []string{"\n- acpgate and the environment: ",
		"\n  - of which the editor's system prompt (from the client's `_meta.systemPrompt`, replacing acpgate's own instructions): ",
		"```text\n" + editorHeading} {
		if !strings.Contains(text, want) {
			t.Errorf("/context lacks %q:\n%s", want, text)
		}
	}
	want := clientPart(sys)

	reopen := func(method string, meta map[string]any) { t.Helper(); reopenPrompted(h, sid, cwd, method, meta) }
	reopen("session/load", nil)
	if got := clientPart(lastSystem(t, m)); got != want {
		t.Errorf("after session/load without _meta:\n%s", got)
	}
	reopen("session/resume", map[string]any{"systemPrompt": nil})
	if got := clientPart(lastSystem(t, m)); got != want {
		t.Errorf("after session/resume with a null systemPrompt:\n%s", got)
	}

	fork := func(meta map[string]any) acpsdk.SessionId { t.Helper(); return forkPrompted(h, sid, cwd, meta) }
	fork(nil)
	if got := clientPart(lastSystem(t, m)); got != want {
		t.Errorf("a fork giving none:\n%s", got)
	}
	appended := fork(map[string]any{"systemPrompt": map[string]any{"append": "Also: be kind."}})
	got := clientPart(lastSystem(t, m))
	if !strings.HasPrefix(got, "You are acpgate") || !strings.Contains(got, "\n\n"+editorHeading) || !strings.Contains(got, "in addition to the above") ||
		!strings.HasSuffix(got, "\n\nAlso: be kind.\n\n") || strings.Contains(got, "Marvin") {
		t.Errorf("a fork appending:\n%s", got)
	}
	if _, ups := h.prompt(appended, "/context"); !strings.Contains(agentText(ups), "(from the client's `_meta.systemPrompt`, after acpgate's own instructions): ") {
		t.Errorf("/context of the fork appending:\n%s", agentText(ups))
	}

	reopen("session/load", map[string]any{"systemPrompt": ""})
	reopen("session/load", nil)
	if got := clientPart(lastSystem(t, m)); !strings.HasPrefix(got, "You are acpgate") || strings.Contains(got, editorHeading) {
		t.Errorf("after \"\" and another load:\n%s", got)
	}
}

// TestClientSystemPromptRefused: a _meta.systemPrompt that is neither a
// string nor {"append": string}, or longer than 1 MiB, is -32602 naming
// it, in session/new, load, resume and fork alike; no session is created
// or opened and the stored one is unchanged.
func TestClientSystemPromptRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, acp.Options{}, nil)
	cwd := t.TempDir()
	resp, err := h.conn.NewSession(h.ctx(), acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}, Meta: map[string]any{"systemPrompt": "Keep me."}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	if _, err := h.conn.CloseSession(h.ctx(), acpsdk.CloseSessionRequest{SessionId: sid}); err != nil {
		t.Fatal(err)
	}
	list := func() string {
		r := h.call("session/list", map[string]any{})
		if r.Error != nil {
			t.Fatalf("session/list: %s", r.Raw)
		}
		var res struct {
			Sessions []struct {
				SessionID string `json:"sessionId"`
				UpdatedAt string `json:"updatedAt"`
			} `json:"sessions"`
		}
		if err := json.Unmarshal(r.Result, &res); err != nil {
			t.Fatal(err)
		}
		return mustJSON(res.Sessions)
	}
	before := list()
	for _, bad := range []struct {
		value any
		path  string
	}{
		{3, "_meta.systemPrompt"},
		{[]any{"x"}, "_meta.systemPrompt"},
		{true, "_meta.systemPrompt"},
		{map[string]any{"append": 3}, "_meta.systemPrompt.append"},
		{map[string]any{"append": nil}, "_meta.systemPrompt.append"},
		{map[string]any{}, "_meta.systemPrompt.append"},
		{map[string]any{"replace": "x"}, "_meta.systemPrompt"},
		{map[string]any{"append": "x", "mode": "y"}, "_meta.systemPrompt"},
		{strings.Repeat("x", 1<<20+1), "_meta.systemPrompt"},
		{map[string]any{"append": strings.Repeat("x", 1<<20+1)}, "_meta.systemPrompt.append"},
	} {
		for _, method := range []string{"session/new", "session/load", "session/resume", "session/fork"} {
			params := map[string]any{"cwd": cwd, "mcpServers": []any{}, "_meta": map[string]any{"systemPrompt": bad.value}}
			if method != "session/new" {
				params["sessionId"] = sid
			}
			r := h.call(method, params)
			if r.Error == nil || r.Error.Code != -32602 || r.Error.Data.Path != bad.path || !strings.Contains(r.Error.Message, bad.path) {
				t.Errorf("%s with systemPrompt %.40s: %.300s", method, mustJSON(bad.value), r.Raw)
			}
		}
	}
	if after := list(); after != before {
		t.Errorf("the sessions changed:\n%s\nwant\n%s", after, before)
	}
	// Not left open, and what it keeps unchanged.
	if _, err := h.conn.LoadSession(h.ctx(), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: cwd, McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	if _, ups := h.prompt(sid, "/context"); !strings.Contains(agentText(ups), editorHeading) || !strings.Contains(agentText(ups), "\n\nKeep me.\n\n# Environment\n") {
		t.Errorf("/context after the refusals:\n%s", agentText(ups))
	}
}
