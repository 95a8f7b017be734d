package acp_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// TestSlashCommands: /mcp, /tools and /call answer in the session, with
// no model, for every way they can go.
func TestSlashCommands(t *testing.T) {
	t.Parallel()
	h := newHarness(t, acp.Options{NoModelMessage: "NO MODEL"}, nil)
	empty := h.newSession().SessionId
	cwd := t.TempDir()
	resp, err := h.conn.NewSession(h.ctx(), acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{stdioServer("alpha")}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	h.settledServers(sid)
	h.setMode(sid, "auto")
	for _, tc := range []struct {
		name, prompt string
		session      acpsdk.SessionId
		text         []string // in the agent's text
		tool         string   // the tool text of the call, if one is made
	}{
		{"mcp, no servers", "/mcp", empty, []string{"This session has no MCP servers."}, ""},
		{"tools, none but update_plan", "/tools", empty, []string{"1 tools:\n\n- `update_plan` (other) Show the user your plan"}, ""},
		{"mcp", "/mcp", sid, []string{"MCP servers of this session:", "**alpha** (stdio): ready, ", " tools, protocol "}, ""},
		{"tools", "/tools", sid, []string{" tools:\n", "- `mcp__alpha__echo` (read) [MCP server alpha; untrusted description] Returns its text argument"}, ""},
		{"tools filter", "/tools ECHO", sid, []string{"1 tools:\n\n- `mcp__alpha__echo` (read)"}, ""},
		{"tools filter on a new line", "/tools\necho", sid, []string{"1 tools:\n\n- `mcp__alpha__echo` (read)"}, ""},
		{"tools no match", "/tools zzz", sid, []string{`No tool matches "zzz".`}, ""},
		{"call usage", "/call", sid, []string{"Usage: /call <tool> <json-arguments>"}, ""},
		{"call bad JSON", "/call mcp__alpha__echo {text: hi}", sid, []string{"The arguments for mcp__alpha__echo must be a JSON object"}, ""},
		{"call array", "/call mcp__alpha__echo [1]", sid, []string{"must be a JSON object"}, ""},
		{"call unknown tool", "/call mcp__alpha__nope {}", sid, []string{`Cannot call mcp__alpha__nope: unknown tool "mcp__alpha__nope" (see /tools)`}, ""},
		{"call, arguments on a new line", "/call mcp__alpha__echo\n{\"text\": \"nl\"}", sid, nil, "nl"},
		{"call, no arguments", "/call mcp__alpha__cwd", sid, nil, cwd},
		{"call failing tool", `/call mcp__alpha__fail {"message": "broken"}`, sid, []string{"mcp__alpha__fail failed."}, "broken"},
		{"not a command", "/unknown thing", sid, []string{"NO MODEL"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, ups := h.prompt(tc.session, tc.prompt)
			if resp.StopReason != acpsdk.StopReasonEndTurn {
				t.Errorf("stop %q", resp.StopReason)
			}
			for _, want := range tc.text {
				if !strings.Contains(agentText(ups), want) {
					t.Errorf("text %q lacks %q", agentText(ups), want)
				}
			}
			if id := firstCall(ups); (id != "") != (tc.tool != "") || toolText(ups, id) != tc.tool {
				t.Errorf("tool call %q: %q, want %q", id, toolText(ups, id), tc.tool)
			}
		})
	}
}

// TestNoModelDefault: without a model and without Options.NoModelMessage
// a prompt is answered with DefaultNoModelMessage, which names the slash
// commands that work without one.
func TestNoModelDefault(t *testing.T) {
	t.Parallel()
	h := newHarness(t, acp.Options{}, nil)
	sid := h.newSession().SessionId
	_, ups := h.prompt(sid, "hello")
	if got := agentText(ups); got != acp.DefaultNoModelMessage || !strings.Contains(got, "/mcp") || !strings.Contains(got, "/tools") || !strings.Contains(got, "/call") {
		t.Errorf("text %q", got)
	}
}

// TestCallWhileRestarting: /call of a tool whose server is restarting
// says so, with the restart count and the last error.
func TestCallWhileRestarting(t *testing.T) {
	t.Parallel()
	opts := acp.Options{}
	opts.MCP.Backoff = func(int) time.Duration { return time.Hour } // stays restarting
	h := newHarness(t, opts, nil)
	sid := h.newSession(stdioServer("alpha")).SessionId
	h.setMode(sid, "auto")
	h.prompt(sid, "/call mcp__alpha__crash {}")
	var text string
	testbin.WaitFor(t, "the tools to go", func() bool {
		_, ups := h.prompt(sid, `/call mcp__alpha__echo {"text": "x"}`)
		text = agentText(ups)
		return strings.Contains(text, "now:")
	})
	if !strings.Contains(text, "Cannot call mcp__alpha__echo now: MCP server alpha is restarting (restart 1); last error: ") {
		t.Errorf("text %q", text)
	}
	_, ups := h.prompt(sid, "/mcp")
	if text := agentText(ups); !strings.Contains(text, "**alpha** (stdio): restarting, 0 tools, ") || !strings.Contains(text, ", 1 restarts\n  last error: ") {
		t.Errorf("/mcp: %q", agentText(ups))
	}
}

// TestCallCancelled: session/cancel during a /call cancels the call at
// its server and the prompt ends cancelled.
func TestCallCancelled(t *testing.T) {
	t.Parallel()
	h := newHarness(t, acp.Options{}, nil)
	sid := h.newSession(stdioServer("alpha")).SessionId
	h.setMode(sid, "auto")
	from := h.fc.rec.len()
	done := make(chan acpsdk.PromptResponse, 1)
	go func() {
		resp, _ := h.conn.Prompt(h.ctx(), acpsdk.PromptRequest{SessionId: sid, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(`/call mcp__alpha__sleep {"ms": 600000}`)}})
		done <- resp
	}()
	h.fc.rec.waitFor(t, from, sid, "the call running", func(u acpsdk.SessionUpdate) bool {
		return u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == acpsdk.ToolCallStatusInProgress
	})
	if err := h.conn.Cancel(h.ctx(), acpsdk.CancelNotification{SessionId: sid}); err != nil {
		t.Fatal(err)
	}
	if resp := <-done; resp.StopReason != acpsdk.StopReasonCancelled {
		t.Errorf("stop %q", resp.StopReason)
	}
}

// mutableConfig is a configuration a test changes between calls.
type mutableConfig struct {
	mu  sync.Mutex
	cfg *config.Config
}

func (m *mutableConfig) get() *config.Config {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cfg
}

func (m *mutableConfig) set(t *testing.T, src string) {
	c := configOf(t, src)()
	m.mu.Lock()
	m.cfg = c
	m.mu.Unlock()
}

// TestReload: /reload applies the configuration in force: servers whose
// settings changed restart, the tool policy is replaced, and a profile
// that went away is an error.
func TestReload(t *testing.T) {
	t.Parallel()
	bin := mustJSON(serverBin)
	var mc mutableConfig
	mc.set(t, `{"mcpServers": {"conf": {"command": `+bin+`}}, "agents": {"list": [{"id": "p"}]}}`)
	h := newHarness(t, acp.Options{Config: mc.get}, nil)
	resp, err := h.conn.NewSession(h.ctx(), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}, Meta: map[string]any{"profile": "p"}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	steps := []struct {
		config string // "" keeps the current one
		want   string
	}{
		{"", "Configuration reloaded; no server changed."},
		{`{"mcpServers": {"conf": {"command": ` + bin + `, "args": ["-tools", "2"]}}, "agents": {"list": [{"id": "p", "tools": {"deny": ["*echo"]}}]}}`,
			"Configuration reloaded; restarted: conf."},
		{`{"mcpServers": {"conf": {"command": ` + bin + `}}}`, "Reload failed: "},
	}
	for i, s := range steps {
		if s.config != "" {
			mc.set(t, s.config)
		}
		_, ups := h.prompt(sid, "/reload")
		if text := agentText(ups); !strings.HasPrefix(text, s.want) {
			t.Errorf("step %d: %q, want %q", i, text, s.want)
		}
		if i == 1 {
			testbin.WaitFor(t, "the restarted server's tools", func() bool {
				_, ups := h.prompt(sid, "/tools mcp__conf__tool_")
				return strings.Contains(agentText(ups), "2 tools:")
			})
			_, ups := h.prompt(sid, "/tools echo")
			if text := agentText(ups); text != `No tool matches "echo".` {
				t.Errorf("the reloaded policy still offers echo: %q", text)
			}
		}
	}
}

// TestSharedServers: a server configured shared runs once for every
// session: each session sees and calls its tools, a change of its tools
// reaches every session, and a session's own server of the same name
// wins.
func TestSharedServers(t *testing.T) {
	t.Parallel()
	cfg := configOf(t, `{"mcpServers": {"sh": {"command": `+mustJSON(serverBin)+`, "shared": true, "env": {"WHO": "shared"}}}}`)
	h := newHarness(t, acp.Options{Config: cfg}, nil)
	one := h.newSession().SessionId
	two := h.newSession().SessionId
	h.setMode(one, "auto")
	_, ups := h.prompt(one, `/call mcp__sh__env {"name": "WHO"}`)
	if got := toolText(ups, firstCall(ups)); got != "shared" {
		t.Fatalf("shared call: %q %s", got, dump(ups))
	}
	h.prompt(one, `/call mcp__sh__add_tool {"name": "fresh"}`)
	testbin.WaitFor(t, "the new tool in the other session", func() bool {
		_, ups := h.prompt(two, "/tools fresh")
		return strings.Contains(agentText(ups), "`mcp__sh__fresh`")
	})

	own := stdioServer("sh")
	own.Stdio.Env = []acpsdk.EnvVariable{{Name: "WHO", Value: "mine"}}
	three := h.newSession(own).SessionId
	h.setMode(three, "auto")
	_, ups = h.prompt(three, `/call mcp__sh__env {"name": "WHO"}`)
	if got := toolText(ups, firstCall(ups)); got != "mine" {
		t.Errorf("the session's own sh: %q", got)
	}
}

// TestClientServerReplacesConfigured: a server the client passes replaces
// the configured one of the same name.
func TestClientServerReplacesConfigured(t *testing.T) {
	t.Parallel()
	cfg := configOf(t, `{"mcpServers": {"dup": {"command": `+mustJSON(serverBin)+`, "env": {"WHO": "config"}}, "other": {"command": `+mustJSON(serverBin)+`}}}`)
	h := newHarness(t, acp.Options{Config: cfg}, nil)
	client := stdioServer("dup")
	client.Stdio.Env = []acpsdk.EnvVariable{{Name: "WHO", Value: "client"}}
	sid := h.newSession(client).SessionId
	h.setMode(sid, "auto")
	_, ups := h.prompt(sid, `/call mcp__dup__env {"name": "WHO"}`)
	if got := toolText(ups, firstCall(ups)); got != "client" {
		t.Errorf("dup is %q", got)
	}
	_, ups = h.prompt(sid, "/mcp")
	if text := agentText(ups); strings.Count(text, "**dup**") != 1 || !strings.Contains(text, "**other**") {
		t.Errorf("/mcp: %s", text)
	}
}
