package acp_test

import (
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// /mcp add, remove and restart change a live session's servers: tools
// join and leave, the model is told once at its next turn, and load
// restores the change on top of the servers its request passes.
func TestLiveServerEdits(t *testing.T) {
	t.Parallel()
	m := scripted(says("ok"))
	h := newHarness(t, acp.Options{Provider: m}, nil)
	sid := h.newSession(stdioServer("alpha")).SessionId
	bin := mustJSON(serverBin)

	_, ups := h.prompt(sid, "/mcp add beta -- "+bin+" -name beta")
	if text := agentText(ups); !strings.HasPrefix(text, "Added MCP server beta: ready, ") {
		t.Fatalf("/mcp add: %q", text)
	}
	if _, ups := h.prompt(sid, "/tools mcp__beta__echo"); !strings.Contains(agentText(ups), "`mcp__beta__echo`") {
		t.Fatalf("the added server's tools: %q", agentText(ups))
	}
	_, ups = h.prompt(sid, "/mcp remove alpha")
	if text := agentText(ups); !strings.HasPrefix(text, "Removed MCP server alpha") {
		t.Fatalf("/mcp remove: %q", text)
	}
	if _, ups := h.prompt(sid, "/tools mcp__alpha__"); strings.Contains(agentText(ups), "`mcp__alpha__") {
		t.Fatalf("the removed server's tools stay: %q", agentText(ups))
	}
	_, ups = h.prompt(sid, "/mcp restart beta")
	if text := agentText(ups); !strings.HasPrefix(text, "Restarted MCP server beta: ready") {
		t.Fatalf("/mcp restart: %q", text)
	}

	// Like a client's server, an added one gets its env as typed: only
	// the configuration resolves references.
	h.setMode(sid, "auto")
	h.prompt(sid, "/mcp add --env 'WHO=${HOME}' gamma -- "+bin)
	if _, ups := h.prompt(sid, `/call mcp__gamma__env {"name": "WHO"}`); toolText(ups, firstCall(ups)) != "${HOME}" {
		t.Errorf("the added server's env: %s", dump(ups))
	}

	// The model hears of the changes once, before the user's words.
	h.prompt(sid, "hello")
	h.prompt(sid, "again")
	reqs := m.requests()
	first := userMessage(reqs[0].Messages)
	if len(first.Content) != 2 || first.Content[1].Text != "hello" ||
		!strings.Contains(first.Content[0].Text, "MCP server beta was added.") ||
		!strings.Contains(first.Content[0].Text, "MCP server alpha was removed.") ||
		!strings.Contains(first.Content[0].Text, "MCP server beta was restarted.") ||
		!strings.Contains(first.Content[0].Text, "MCP server gamma was added.") {
		t.Errorf("first turn's input: %+v", first.Content)
	}
	if second := userMessage(reqs[1].Messages); len(second.Content) != 1 || second.Content[0].Text != "again" {
		t.Errorf("second turn's input: %+v", second.Content)
	}

	// Load with the same request servers: alpha stays removed, beta is back.
	h.closeSession(sid)
	resp, err := h.conn.LoadSession(h.ctx(), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("alpha")}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range resp.Meta["acpgate"].(map[string]any)["mcpServers"].([]any) {
		names = append(names, s.(map[string]any)["name"].(string))
	}
	if strings.Join(names, ",") != "beta,gamma" {
		t.Errorf("servers after load: %v, want beta and gamma", names)
	}
	testbin.WaitFor(t, "beta's tools after load", func() bool {
		_, ups := h.prompt(sid, "/tools mcp__beta__echo")
		return strings.Contains(agentText(ups), "`mcp__beta__echo`")
	})

	// A fork has the servers of its own request, not the source's changes.
	fork, err := h.conn.UnstableForkSession(h.ctx(), acpsdk.UnstableForkSessionRequest{SessionId: sid, Cwd: t.TempDir(), McpServers: []acpsdk.UnstableMcpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if servers := fork.Meta["acpgate"].(map[string]any)["mcpServers"].([]any); len(servers) != 0 {
		t.Errorf("the fork has servers %v, want none", servers)
	}
}

// Bad /mcp add lines are answered with what is wrong, and change nothing.
func TestLiveServerEditErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t, acp.Options{}, nil)
	sid := h.newSession(stdioServer("alpha")).SessionId
	for _, tc := range []struct{ line, want string }{
		{"/mcp add", "Cannot add the server: usage: /mcp add NAME"},
		{"/mcp add beta", "Cannot add the server: usage: /mcp add NAME"},
		{"/mcp add beta --", "no command after --"},
		{"/mcp add beta http://127.0.0.1:1/mcp -- cmd", "Cannot add the server: usage"},
		{"/mcp add --sse beta -- cmd", "--header and --sse are for a server at a URL"},
		{"/mcp add --env X beta -- cmd", "--env takes KEY=VALUE"},
		{"/mcp add --bogus beta -- cmd", "unknown option --bogus"},
		{"/mcp add beta ftp://127.0.0.1/x", "Cannot add the server: invalid MCP server spec: server \"beta\": URL \"ftp://127.0.0.1/x\": scheme must be http or https"},
		{"/mcp add beta 'unterminated", "unterminated ' quote"},
		{"/mcp add alpha -- cmd", "already has an MCP server called alpha"},
		{"/mcp remove", "Usage: /mcp remove NAME"},
		{"/mcp remove nope", "This session has no MCP server called nope"},
		{"/mcp restart nope", "This session has no MCP server called nope"},
	} {
		_, ups := h.prompt(sid, tc.line)
		if text := agentText(ups); !strings.Contains(text, tc.want) {
			t.Errorf("%s: %q, want %q", tc.line, text, tc.want)
		}
	}
	if _, ups := h.prompt(sid, "/mcp"); !strings.Contains(agentText(ups), "**alpha**") || strings.Contains(agentText(ups), "beta") {
		t.Errorf("servers changed: %q", agentText(ups))
	}
}

// userMessage returns the last user message of msgs.
func userMessage(msgs []gateway.Message) gateway.Message {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == gateway.RoleUser {
			return msgs[i]
		}
	}
	return gateway.Message{}
}

// TestFailedAddIsNotKept: an /mcp add whose server fails at once is
// answered with why, not "Added"; it is neither listed nor kept with the
// session (a load brings the servers before it back), and the model is
// told nothing of it.
func TestFailedAddIsNotKept(t *testing.T) {
	t.Parallel()
	h := newHarness(t, acp.Options{}, nil)
	sid := h.newSession(stdioServer("alpha")).SessionId
	missing := filepath.Join(t.TempDir(), "no-such-server")
	_, ups := h.prompt(sid, "/mcp add beta -- "+missing)
	if text := agentText(ups); !strings.Contains(text, "Cannot add MCP server beta: ") || !strings.Contains(text, "It is not kept with the session.") || strings.Contains(text, "Added") {
		t.Fatalf("/mcp add of a server that cannot start: %q", text)
	}
	if _, ups := h.prompt(sid, "/mcp"); strings.Contains(agentText(ups), "beta") || !strings.Contains(agentText(ups), "**alpha**") {
		t.Errorf("/mcp after the failed add: %q", agentText(ups))
	}
	h.closeSession(sid)
	if _, err := h.conn.LoadSession(h.ctx(), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("alpha")}}); err != nil {
		t.Fatal(err)
	}
	if _, ups := h.prompt(sid, "/mcp"); strings.Contains(agentText(ups), "beta") {
		t.Errorf("the failed server came back with the session: %q", agentText(ups))
	}
}

// TestAddOverTheLimitIsNotKept: an /mcp add over limits.maxServers is
// refused naming the limit, and the session keeps the servers it had.
func TestAddOverTheLimitIsNotKept(t *testing.T) {
	t.Parallel()
	h := newHarness(t, acp.Options{Config: configOf(t, `{"limits": {"maxServers": 1}}`)}, nil)
	sid := h.newSession(stdioServer("alpha")).SessionId
	_, ups := h.prompt(sid, "/mcp add beta -- "+serverBin+" -name beta")
	if text := agentText(ups); !strings.Contains(text, "Cannot add MCP server beta: ") || !strings.Contains(text, "at most 1 servers per session") {
		t.Fatalf("/mcp add over the limit: %q", text)
	}
	if _, ups := h.prompt(sid, "/mcp"); strings.Contains(agentText(ups), "beta") || !strings.Contains(agentText(ups), "**alpha**") {
		t.Errorf("/mcp after the refused add: %q", agentText(ups))
	}
}
