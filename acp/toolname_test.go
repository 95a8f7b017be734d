package acp_test

import (
	"encoding/json"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
)

// wireToolUpdates returns the tool_call and tool_call_update updates of
// call id the agent wrote on the wire since byte from, as JSON objects
// (the SDK's types drop the name member).
func wireToolUpdates(t *testing.T, wire string, id string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(wire, "\n") {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Update map[string]any `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(line), &m) != nil || m.Method != acpsdk.ClientMethodSessionUpdate {
			continue
		}
		u := m.Params.Update
		if (u["sessionUpdate"] == "tool_call" || u["sessionUpdate"] == "tool_call_update") && u["toolCallId"] == id {
			out = append(out, u)
		}
	}
	return out
}

// TestToolCallNames: every tool_call and tool_call_update of a call
// carries the schema's name: an MCP tool's own name ("fail", not
// "mcp__alpha__fail"), a native tool's name ("mcp_read_resource"); so
// does the tool call of its permission request; and session/load replays
// the finished call with it.
func TestToolCallNames(t *testing.T) {
	t.Parallel()
	m := scripted(calls("c1", "mcp__alpha__fail", `{"message":"nope"}`), calls("c2", "mcp_read_resource", `{"uri":"test://items/7"}`), says("done"))
	h := newHarness(t, acp.Options{Provider: m}, allowing())
	sid := h.newSession(stdioServer("alpha")).SessionId
	h.prompt(sid, "go")
	asked := 0
	for _, line := range strings.Split(h.wire.String(), "\n") {
		var m struct {
			Method string `json:"method"`
			Params struct {
				ToolCall map[string]any `json:"toolCall"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(line), &m) != nil || m.Method != acpsdk.ClientMethodSessionRequestPermission || m.Params.ToolCall["toolCallId"] != "c1" {
			continue
		}
		asked++
		if m.Params.ToolCall["name"] != "fail" {
			t.Errorf("the permission request's tool call is named %v", m.Params.ToolCall["name"])
		}
	}
	if asked != 1 {
		t.Errorf("%d permission requests for c1, want 1", asked)
	}
	for _, tc := range []struct{ id, name string }{{"c1", "fail"}, {"c2", "mcp_read_resource"}} {
		ups := wireToolUpdates(t, h.wire.String(), tc.id)
		if len(ups) < 3 {
			t.Fatalf("%s: %d updates on the wire", tc.id, len(ups))
		}
		for _, u := range ups {
			if u["name"] != tc.name {
				t.Errorf("%s: %s update named %v, want %q", tc.id, u["sessionUpdate"], u["name"], tc.name)
			}
		}
	}
	h.closeSession(sid)
	before := len(h.wire.String())
	if _, err := h.conn.LoadSession(h.ctx(), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	replayed := wireToolUpdates(t, h.wire.String()[before:], "c1")
	if len(replayed) != 1 || replayed[0]["name"] != "fail" || replayed[0]["status"] != "failed" {
		t.Errorf("replayed %v", replayed)
	}
}
