package acp

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/acpgate/acpgate/bridge"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/sysprompt"
	"github.com/acpgate/acpgate/mcpclient"
)

// TestSlashRegistry: the registry is the one list of slash commands: each
// command advertised is recognised at the start of a prompt (with its
// argument trimmed), in the registry's order, and nothing else is.
func TestSlashRegistry(t *testing.T) {
	co := &commands{}
	co.slashes = co.registry()
	list := co.commandList()
	if len(list) != len(co.slashes) || len(list) < 7 {
		t.Fatalf("advertised %d commands, the registry has %d", len(list), len(co.slashes))
	}
	for i, ac := range list {
		c, arg, ok := co.slashCommand([]gateway.Content{{Type: gateway.ContentText, Text: "  /" + ac.Name + "  some arg \n"}})
		if !ok || c != &co.slashes[i] || arg != "some arg" {
			t.Errorf("/%s: recognised %v (%v), arg %q", ac.Name, ok, c, arg)
		}
		if (co.slashes[i].hint != "") != (ac.Input != nil) {
			t.Errorf("/%s: hint %q, advertised input %v", ac.Name, co.slashes[i].hint, ac.Input)
		}
	}
	for _, text := range []string{"/nope", "mcp", "/mcpx", "/server.prompt"} {
		if _, _, ok := co.slashCommand([]gateway.Content{{Type: gateway.ContentText, Text: text}}); ok {
			t.Errorf("%q recognised as a slash command", text)
		}
	}
}

// fakeSession is a commandSession with fixed servers and tools: what the
// slash commands see of a session, without a liveSession behind it.
type fakeSession struct {
	statuses []mcpclient.Status
	toolList []gateway.Tool
}

var _ commandSession = (*fakeSession)(nil)

// sessionID implements commandSession.
func (f *fakeSession) sessionID() string { return "fake" }

// ownStatuses implements commandSession.
func (f *fakeSession) ownStatuses() []mcpclient.Status { return f.statuses }

// serverStatus implements commandSession: every server is the session's
// own.
func (f *fakeSession) serverStatus(name string) (mcpclient.Status, bool, bool) {
	i := slices.IndexFunc(f.statuses, func(st mcpclient.Status) bool { return st.Name == name })
	if i < 0 {
		return mcpclient.Status{}, false, false
	}
	return f.statuses[i], false, true
}

// waitServers implements commandSession: there is nothing to wait for.
func (f *fakeSession) waitServers(context.Context, *peer, func() bool) {}

// login implements commandSession.
func (f *fakeSession) login(context.Context, string) error { return mcpclient.ErrNoOAuth }

// logout implements commandSession.
func (f *fakeSession) logout(context.Context, string) error { return mcpclient.ErrNoOAuth }

// restartServer implements commandSession.
func (f *fakeSession) restartServer(context.Context, *agentConfig, string) error {
	return mcpclient.ErrUnknownServer
}

// edits implements commandSession.
func (f *fakeSession) edits() serverEdits { return serverEdits{} }

// applyEdits implements commandSession.
func (f *fakeSession) applyEdits(context.Context, *agentConfig, serverEdits) error {
	return errors.New("the fake session's servers are fixed")
}

// tellModel implements commandSession.
func (f *fakeSession) tellModel(string) {}

// tools implements commandSession: the tools whose name has filter in it.
func (f *fakeSession) tools(filter string) []gateway.Tool {
	return slices.DeleteFunc(slices.Clone(f.toolList), func(t gateway.Tool) bool { return !strings.Contains(t.Name, filter) })
}

// offersTool implements commandSession.
func (f *fakeSession) offersTool(name string) bool {
	return slices.ContainsFunc(f.toolList, func(t gateway.Tool) bool { return t.Name == name })
}

// toolServer implements commandSession.
func (f *fakeSession) toolServer(string) (string, bool) { return "", false }

// toolAccess implements commandSession.
func (f *fakeSession) toolAccess() gateway.ToolAccess { return gateway.ToolAccess{} }

// reload implements commandSession.
func (f *fakeSession) reload(context.Context, *agentConfig) ([]string, error) { return nil, nil }

// systemPrompt implements commandSession.
func (f *fakeSession) systemPrompt(context.Context, *agentConfig) (sysprompt.Prompt, []sysprompt.Skipped) {
	return sysprompt.Prompt{}, nil
}

// historySize implements commandSession.
func (f *fakeSession) historySize() (int, int) { return 0, 0 }

// historyMedia implements commandSession.
func (f *fakeSession) historyMedia() (int, int, int) { return 0, 0, 0 }

// compact implements commandSession.
func (f *fakeSession) compact(context.Context, *agentConfig, string, func()) (*gateway.Compaction, error) {
	return nil, errNoModel
}

// resources implements commandSession.
func (f *fakeSession) resources() bridge.ResourceCaller { return nil }

// prompts implements commandSession.
func (f *fakeSession) prompts() []mcpclient.ServerResource[mcp.Prompt] { return nil }
func (f *fakeSession) skills() *sessionSkills                          { return newSessionSkills(skillSource{}, nil) }

// TestCommandsOnFakeSession: the slash commands need nothing of a session
// but commandSession: /mcp and /tools, run through the registry on a fake
// one, report its servers and tools.
func TestCommandsOnFakeSession(t *testing.T) {
	co := &commands{}
	co.slashes = co.registry()
	s := &fakeSession{
		statuses: []mcpclient.Status{
			{Name: "github", Transport: mcpclient.TransportHTTP, State: mcpclient.StateReady, Tools: 2, ProtocolVersion: "2025-06-18"},
			{Name: "slow", Transport: mcpclient.TransportStdio, State: mcpclient.StateConnecting, Restarts: 1, Error: "no answer"},
			{Name: "vault", Transport: mcpclient.TransportHTTP, State: mcpclient.StateNeedsAuth},
		},
		toolList: []gateway.Tool{
			{Name: "mcp__github__get_me", Kind: gateway.KindFetch, Description: "Who am I.\nMore."},
			{Name: "mcp__github__list_issues", Kind: gateway.KindRead, Description: "List issues."},
		},
	}
	run := func(text string) string {
		t.Helper()
		c, arg, ok := co.slashCommand([]gateway.Content{{Type: gateway.ContentText, Text: text}})
		if !ok {
			t.Fatalf("%q is not a slash command", text)
		}
		var out strings.Builder
		if stop := c.run(context.Background(), s, nil, arg, func(text string) { out.WriteString(text) }); stop != gateway.StopEndTurn {
			t.Errorf("%s: stop reason %q", text, stop)
		}
		return out.String()
	}
	for _, tc := range []struct{ text, want string }{
		{"/mcp", "MCP servers of this session:\n" +
			"\n- **github** (http): ready, 2 tools, protocol 2025-06-18" +
			"\n- **slow** (stdio): connecting, 0 tools, 1 restarts\n  last error: no answer\n  sandbox: off" +
			"\n- **vault** (http): needs-auth, 0 tools\n  `/mcp login vault` signs in"},
		{"/mcp restart", "Usage: /mcp restart NAME. /mcp lists the servers."},
		{"/mcp remove nope", "This session has no MCP server called nope. /mcp lists the servers."},
		{"/tools", "2 tools:\n" +
			"\n- `mcp__github__get_me` (fetch) Who am I." +
			"\n- `mcp__github__list_issues` (read) List issues." +
			"\n\n(slow is connecting; its tools are not listed yet)"},
		{"/tools list", "1 tools:\n\n- `mcp__github__list_issues` (read) List issues.\n\n(slow is connecting; its tools are not listed yet)"},
		{"/tools nothing", `No tool matches "nothing".`},
	} {
		if got := run(tc.text); got != tc.want {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.text, got, tc.want)
		}
	}
}

func TestSandboxLine(t *testing.T) {
	stdio := mcpclient.TransportStdio
	for _, c := range []struct {
		st   mcpclient.Status
		want string
	}{
		{mcpclient.Status{Transport: stdio}, "sandbox: off"},
		{mcpclient.Status{Transport: mcpclient.TransportHTTP}, ""},
		{mcpclient.Status{Transport: stdio, Sandbox: &mcpclient.SandboxStatus{Policy: "read-only", Pending: true}}, "sandbox: read-only, not started yet"},
		{mcpclient.Status{Transport: stdio, Sandbox: &mcpclient.SandboxStatus{Policy: "read-only", Enforced: true}}, "sandbox: read-only, enforced"},
		{mcpclient.Status{Transport: stdio, Sandbox: &mcpclient.SandboxStatus{Policy: "read-only", Note: "no Landlock"}}, "sandbox: read-only, NOT enforced: no Landlock"},
	} {
		if got := sandboxLine(c.st); got != c.want {
			t.Errorf("sandboxLine(%+v) = %q, want %q", c.st.Sandbox, got, c.want)
		}
	}
}
