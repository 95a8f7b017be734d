package acp_test

import (
	"strings"
	"testing"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// toolNamesWith returns the names of the tools offered in req that start
// with prefix.
func toolNamesWith(req gateway.ModelRequest, prefix string) []string {
	var out []string
	for _, tl := range req.Tools {
		if strings.HasPrefix(tl.Name, prefix) {
			out = append(out, tl.Name)
		}
	}
	return out
}

// TestToolViewFollowsEvents: a session's tools are the view its servers'
// events keep: the first turn after session/new offers every tool the
// servers' state update counted (no refresh needed after the start), a tool a server
// adds reaches the session's next turn, and no session is offered
// another's tools.
func TestToolViewFollowsEvents(t *testing.T) {
	t.Parallel()
	m := scripted(says("ok"))
	h := newHarness(t, acp.Options{Provider: m}, nil)
	resp := h.newSession(stdioServer("alpha"))
	one := resp.SessionId
	two := h.newSession(stdioServer("beta")).SessionId
	servers := h.settledServers(one)
	counted := int(servers[0]["tools"].(float64))

	h.prompt(one, "first")
	if got := toolNamesWith(m.requests()[0], "mcp__alpha__"); len(got) != counted || counted == 0 {
		t.Fatalf("the first turn was offered %d alpha tools, the response counted %d: %v", len(got), counted, got)
	}
	h.setMode(one, "auto")
	h.prompt(one, `/call mcp__alpha__add_tool {"name": "fresh"}`)
	testbin.WaitFor(t, "the new tool in /tools", func() bool {
		_, ups := h.prompt(one, "/tools fresh")
		return strings.Contains(agentText(ups), "`mcp__alpha__fresh`")
	})
	h.prompt(one, "again")
	h.prompt(two, "other")
	reqs := m.requests()
	if got := toolNamesWith(reqs[1], "mcp__alpha__fresh"); len(got) != 1 {
		t.Errorf("the added tool did not reach the next turn: %v", toolNamesWith(reqs[1], ""))
	}
	if got := toolNamesWith(reqs[2], "mcp__alpha__"); len(got) != 0 || len(toolNamesWith(reqs[2], "mcp__beta__")) == 0 {
		t.Errorf("session two was offered %v", toolNamesWith(reqs[2], ""))
	}
}
