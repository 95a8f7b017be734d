package acp_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
)

// TestPermissions: a tool that is not read-only asks the client first,
// unless an "always" answer, auto mode or an autoApprove glob decides; the
// answer decides whether it runs; "always" answers outlive a reload of the
// session.
func TestPermissions(t *testing.T) {
	t.Parallel()
	const add = `/call mcp__alpha__add {"a": 2, "b": 3}`
	for _, tc := range []struct {
		name   string
		option string // the client's answer; "" cancels
		err    bool   // the client fails the request instead
		mode   string
		config string
		tool   string // the /call; default add
		status []acpsdk.ToolCallStatus
		asked  int    // permission requests for the calls
		text   string // the first call's tool text
	}{
		{name: "allow once", option: "allow_once", status: []acpsdk.ToolCallStatus{"completed", "completed"}, asked: 2, text: "5"},
		{name: "allow always", option: "allow_always", status: []acpsdk.ToolCallStatus{"completed", "completed"}, asked: 1, text: "5"},
		{name: "reject once", option: "reject_once", status: []acpsdk.ToolCallStatus{"failed", "failed"}, asked: 2, text: "The user rejected this tool call"},
		{name: "reject always", option: "reject_always", status: []acpsdk.ToolCallStatus{"failed", "failed"}, asked: 1, text: "The user rejected this tool call"},
		{name: "cancelled", option: "", status: []acpsdk.ToolCallStatus{"failed", "failed"}, asked: 2, text: "The user rejected this tool call"},
		{name: "client error", err: true, status: []acpsdk.ToolCallStatus{"failed", "failed"}, asked: 2, text: "could not be approved"},
		{name: "auto mode", mode: "auto", status: []acpsdk.ToolCallStatus{"completed", "completed"}, text: "5"},
		{name: "autoApprove glob", config: `{"agents": {"defaults": {"tools": {"autoApprove": ["mcp__alpha__a*"]}}}}`, status: []acpsdk.ToolCallStatus{"completed", "completed"}, text: "5"},
		{name: "read-only tool", tool: `/call mcp__alpha__echo {"text": "ro"}`, status: []acpsdk.ToolCallStatus{"completed", "completed"}, text: "ro"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			asked := 0
			var requests []acpsdk.RequestPermissionRequest
			fc := &fakeClient{}
			reply := answer(tc.option, &asked, &mu)
			fc.RequestPermissionFunc = func(ctx context.Context, p acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
				mu.Lock()
				requests = append(requests, p)
				mu.Unlock()
				if tc.err {
					mu.Lock()
					asked++
					mu.Unlock()
					return acpsdk.RequestPermissionResponse{}, errors.New("the editor crashed")
				}
				return reply(ctx, p)
			}
			opts := acp.Options{}
			if tc.config != "" {
				opts.Config = configOf(t, tc.config)
			}
			h := newHarness(t, opts, fc)
			sid := h.newSession(stdioServer("alpha")).SessionId
			if tc.mode != "" {
				h.setMode(sid, tc.mode)
			}
			call := tc.tool
			if call == "" {
				call = add
			}
			for i, want := range tc.status {
				_, ups := h.prompt(sid, call)
				id := firstCall(ups)
				if got := finalStatus(ups, id); got != want {
					t.Errorf("call %d: status %q, want %q: %s", i, got, want, dump(ups))
				}
				if i == 0 && !strings.Contains(toolText(ups, id), tc.text) {
					t.Errorf("call %d: text %q lacks %q", i, toolText(ups, id), tc.text)
				}
				if want == "failed" && !strings.Contains(agentText(ups), "failed.") {
					t.Errorf("call %d: agent text %q", i, agentText(ups))
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if asked != tc.asked {
				t.Errorf("asked %d times, want %d", asked, tc.asked)
			}
			if len(requests) > 0 {
				p := requests[0]
				var ids []string
				for _, o := range p.Options {
					ids = append(ids, string(o.OptionId)+"/"+string(o.Kind))
				}
				if p.SessionId != sid || p.ToolCall.Title == nil || *p.ToolCall.Title != "alpha: add" || mustJSON(p.ToolCall.RawInput) != `{"a":2,"b":3}` ||
					strings.Join(ids, ",") != "allow_once/allow_once,allow_always/allow_always,reject_once/reject_once,reject_always/reject_always" {
					t.Errorf("permission request %+v options %v", p, ids)
				}
			}
		})
	}
}

// TestAlwaysOutlivesLoad: an "always" answer is kept with the session: a
// loaded session does not ask again.
func TestAlwaysOutlivesLoad(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	asked := 0
	fc := &fakeClient{RequestPermissionFunc: answer("reject_always", &asked, &mu)}
	h := newHarness(t, acp.Options{}, fc)
	sid := h.newSession(stdioServer("alpha")).SessionId
	h.prompt(sid, `/call mcp__alpha__add {"a": 1, "b": 1}`)
	h.closeSession(sid)
	if _, err := h.conn.LoadSession(h.ctx(), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("alpha")}}); err != nil {
		t.Fatal(err)
	}
	_, ups := h.prompt(sid, `/call mcp__alpha__add {"a": 1, "b": 1}`)
	if got := finalStatus(ups, firstCall(ups)); got != acpsdk.ToolCallStatusFailed {
		t.Errorf("status %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked != 1 {
		t.Errorf("asked %d times, want 1", asked)
	}
}

// TestDenyPolicy: a denied tool is neither offered to the model nor
// listed nor callable; other tools are.
func TestDenyPolicy(t *testing.T) {
	t.Parallel()
	m := scripted(calls("c1", "mcp__alpha__add", `{"a":1,"b":2}`), says("ok"))
	h := newHarness(t, acp.Options{Provider: m, Config: configOf(t, `{"agents": {"defaults": {"tools": {"deny": ["mcp__alpha__a*"]}}}}`)}, nil)
	sid := h.newSession(stdioServer("alpha")).SessionId
	_, ups := h.prompt(sid, `/call mcp__alpha__add {"a": 1, "b": 2}`)
	if text := agentText(ups); !strings.Contains(text, "Cannot call mcp__alpha__add: tool not allowed") || firstCall(ups) != "" {
		t.Errorf("/call of a denied tool: %q %s", text, dump(ups))
	}
	_, ups = h.prompt(sid, "/tools tool")
	if text := agentText(ups); strings.Contains(text, "mcp__alpha__add") || !strings.Contains(text, "mcp__alpha__remove_tool") {
		t.Errorf("/tools: %s", text)
	}
	_, ups = h.prompt(sid, "add 1 and 2")
	if alpha := toolNamesWith(m.requests()[0], "mcp__alpha__"); !slices.Contains(alpha, "mcp__alpha__remove_tool") {
		t.Fatalf("alpha's allowed mcp__alpha__remove_tool was not offered either: %v", alpha)
	}
	if denied := toolNamesWith(m.requests()[0], "mcp__alpha__a"); len(denied) > 0 {
		t.Errorf("the model was offered %v", denied)
	}
	if got := finalStatus(ups, "c1"); got != acpsdk.ToolCallStatusFailed || !strings.Contains(toolText(ups, "c1"), "not allowed by policy") {
		t.Errorf("the model's call of a denied tool: %s", dump(ups))
	}
}
