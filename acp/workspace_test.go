package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/internal/testsupport/wsclient"
)

// editorCaps is what an editor that offers its files and terminals
// advertises.
func editorCaps() acpsdk.ClientCapabilities {
	return acpsdk.ClientCapabilities{Fs: acpsdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}, Terminal: true}
}

// initializeWith sends initialize with the client capabilities caps.
func (h *harness) initializeWith(caps acpsdk.ClientCapabilities) {
	h.t.Helper()
	if _, err := h.conn.Initialize(h.ctx(), acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber, ClientCapabilities: caps}); err != nil {
		h.t.Fatal(err)
	}
}

// sessionIn opens a session without servers in cwd.
func (h *harness) sessionIn(cwd string) acpsdk.SessionId {
	h.t.Helper()
	resp, err := h.conn.NewSession(h.ctx(), acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		h.t.Fatalf("session/new: %v", err)
	}
	h.fc.rec.waitFor(h.t, 0, resp.SessionId, "available_commands_update", isCommands)
	return resp.SessionId
}

// fileText is the text of the file at p.
func fileText(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// toolResult is what the model was told of call id, from the requests it
// was sent.
func toolResult(m *fakeModel, id string) string {
	for _, req := range m.requests() {
		for _, msg := range req.Messages {
			if msg.Role == gateway.RoleTool && msg.ToolCallID == id {
				return msg.Result.ModelText()
			}
		}
	}
	return ""
}

// offered is the names of the tools of the model's first request.
func offered(m *fakeModel) []string {
	var out []string
	for _, tl := range m.requests()[0].Tools {
		out = append(out, tl.Name)
	}
	return out
}

// argsJSON is a tool call's arguments.
func argsJSON(v map[string]any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// diffOf returns the diff of tool call content, or nil.
func diffOf(content []acpsdk.ToolCallContent) *acpsdk.ToolCallContentDiff {
	for _, c := range content {
		if c.Diff != nil {
			return c.Diff
		}
	}
	return nil
}

// terminalIn returns the terminal id embedded in tool call content, or "".
func terminalIn(content []acpsdk.ToolCallContent) string {
	for _, c := range content {
		if c.Terminal != nil {
			return c.Terminal.TerminalId
		}
	}
	return ""
}

// TestWorkspaceThroughEditor: with an editor that offers files and
// terminals, the model reads the editor's unsaved buffer, edits a file
// (asked first, the diff shown before and after), runs a command in the
// editor's terminal (asked first, embedded in the call, released, exit
// status and output given to the model), and is refused a file outside
// the cwd; /tools lists the tools; a reloaded session shows the command's
// output, not a terminal that is gone.
func TestWorkspaceThroughEditor(t *testing.T) {
	t.Parallel()
	cwd, outside := t.TempDir(), t.TempDir()
	notes := testbin.WriteFile(t, cwd, "notes.txt", "on disk\n")
	mainGo := testbin.WriteFile(t, cwd, "main.go", "package main\n\nfunc main() {}\n")
	secret := testbin.WriteFile(t, outside, "secret.txt", "secret\n")
	m := scripted(
		calls("r1", "read_file", argsJSON(map[string]any{"path": notes})),
		calls("e1", "edit_file", argsJSON(map[string]any{"path": mainGo, "old_text": "func main() {}", "new_text": "func main() { println(1) }"})),
		calls("x1", "run_command", argsJSON(map[string]any{"command": "echo hi; exit 2"})),
		calls("o1", "read_file", argsJSON(map[string]any{"path": secret})),
		says("done"),
	)
	ed := &wsclient.Workspace{}
	ed.SetBuffer(notes, "unsaved line\n")
	var mu sync.Mutex
	var asked []acpsdk.RequestPermissionRequest
	fc := &fakeClient{Workspace: ed, RequestPermissionFunc: func(_ context.Context, p acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
		mu.Lock()
		asked = append(asked, p)
		mu.Unlock()
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeSelected(acpsdk.PermissionOptionId("allow_once"))}, nil
	}}
	h := newHarness(t, acp.Options{Provider: m}, fc)
	h.initializeWith(editorCaps())
	sid := h.sessionIn(cwd)
	_, ups := h.prompt(sid, "work")

	if got := offered(m); !slices.Equal(got, []string{"read_file", "write_file", "edit_file", "run_command", "update_plan"}) {
		t.Errorf("offered %v", got)
	}
	if got := toolResult(m, "r1"); got != "unsaved line\n" {
		t.Errorf("read_file gave the model %q, want the editor's buffer", got)
	}
	start := toolUpdates(ups, "r1")[0].ToolCall
	if start.Title != "Read file "+notes || start.Kind != acpsdk.ToolKindRead || mustJSON(start.Meta["acpgate"]) != `{"tool":"read_file","workspace":"client"}` {
		t.Errorf("read_file call %s", mustJSON(start))
	}

	if len(asked) != 2 {
		t.Fatalf("asked %s, want edit_file and run_command", mustJSON(asked))
	}
	checkEdit(t, ups, asked[0], mainGo)
	checkRun(t, m, ed, ups, asked[1])

	// Outside the cwd: refused, and the editor was never asked.
	if got := toolResult(m, "o1"); !strings.Contains(got, "outside the workspace") || finalStatus(ups, "o1") != acpsdk.ToolCallStatusFailed {
		t.Errorf("outside: %q", got)
	}
	if slices.Contains(ed.Calls(), "fs/read_text_file "+secret) {
		t.Error("the editor was asked for a file outside the cwd")
	}

	_, ups = h.prompt(sid, "/tools")
	for _, name := range []string{"read_file", "write_file", "edit_file", "run_command"} {
		if !strings.Contains(agentText(ups), "`"+name+"`") {
			t.Errorf("/tools lacks %s: %s", name, agentText(ups))
		}
	}

	h.closeSession(sid)
	from := h.fc.rec.len()
	if _, err := h.conn.LoadSession(h.ctx(), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: cwd, McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	replayed := lastContent(h.fc.rec.since(from, sid), "x1")
	if terminalIn(replayed) != "" || !strings.Contains(toolText(h.fc.rec.since(from, sid), "x1"), "Exit code: 2") {
		t.Errorf("replayed run_command %s", mustJSON(replayed))
	}
}

// checkEdit checks the edit_file call e1 of TestWorkspaceThroughEditor:
// the file changed, the diff shown when the call was announced, in the
// permission question and in the result.
func checkEdit(t *testing.T, ups []acpsdk.SessionUpdate, asked acpsdk.RequestPermissionRequest, path string) {
	t.Helper()
	if got, want := fileText(t, path), "package main\n\nfunc main() { println(1) }\n"; got != want {
		t.Errorf("main.go is %q", got)
	}
	start := toolUpdates(ups, "e1")[0].ToolCall
	for what, d := range map[string]*acpsdk.ToolCallContentDiff{"announced": diffOf(start.Content), "asked": diffOf(asked.ToolCall.Content), "final": diffOf(lastContent(ups, "e1"))} {
		if d == nil || d.Path != path || d.OldText == nil || *d.OldText != "package main\n\nfunc main() {}\n" || !strings.Contains(d.NewText, "println(1)") {
			t.Errorf("%s diff %s", what, mustJSON(d))
		}
	}
	if start.Kind != acpsdk.ToolKindEdit || len(start.Locations) != 1 || start.Locations[0].Path != path || *asked.ToolCall.Title != "Edit file "+path {
		t.Errorf("edit_file call %s asked %s", mustJSON(start), mustJSON(asked.ToolCall))
	}
}

// checkRun checks the run_command call x1 of TestWorkspaceThroughEditor:
// asked, its terminal embedded while it ran and in the result, released,
// the exit status and output given to the model.
func checkRun(t *testing.T, m *fakeModel, ed *wsclient.Workspace, ups []acpsdk.SessionUpdate, asked acpsdk.RequestPermissionRequest) {
	t.Helper()
	var shown string
	for _, u := range toolUpdates(ups, "x1") {
		if u.ToolCallUpdate != nil && u.ToolCallUpdate.Status == nil {
			shown = terminalIn(u.ToolCallUpdate.Content)
		}
	}
	if shown == "" || terminalIn(lastContent(ups, "x1")) != shown || finalStatus(ups, "x1") != acpsdk.ToolCallStatusFailed {
		t.Errorf("run_command updates %s", dump(toolUpdates(ups, "x1")))
	}
	if got := toolResult(m, "x1"); got != "Exit code: 2\nOutput:\nhi\n" {
		t.Errorf("run_command gave the model %q", got)
	}
	if calls := ed.Calls(); !slices.Contains(calls, "terminal/release "+shown) || len(ed.Live()) != 0 {
		t.Errorf("editor calls %v, live %v", calls, ed.Live())
	}
	if *asked.ToolCall.Title != "Run command `echo hi; exit 2`" || *asked.ToolCall.Kind != acpsdk.ToolKindExecute {
		t.Errorf("asked %s", mustJSON(asked))
	}
}

// lastContent is the content of the last update of call id that carries
// some.
func lastContent(ups []acpsdk.SessionUpdate, id string) []acpsdk.ToolCallContent {
	var content []acpsdk.ToolCallContent
	for _, u := range toolUpdates(ups, id) {
		switch {
		case u.ToolCall != nil && len(u.ToolCall.Content) > 0:
			content = u.ToolCall.Content
		case u.ToolCallUpdate != nil && len(u.ToolCallUpdate.Content) > 0:
			content = u.ToolCallUpdate.Content
		}
	}
	return content
}

// TestWorkspaceToolsOffered: which workspace tools a session gets, and
// where they work, from the client's capabilities, --workspace-tools and
// the configuration (workspaceTools, tools.deny).
func TestWorkspaceToolsOffered(t *testing.T) {
	t.Parallel()
	all := []string{"read_file", "write_file", "edit_file", "run_command"}
	readOnly := acpsdk.ClientCapabilities{Fs: acpsdk.FileSystemCapabilities{ReadTextFile: true}}
	for _, c := range []struct {
		name   string
		caps   acpsdk.ClientCapabilities
		mode   config.WorkspaceTools
		config string
		want   []string
	}{
		{"no capabilities", acpsdk.ClientCapabilities{}, "", "", nil},
		{"editor", editorCaps(), "", "", all},
		{"read only", readOnly, "", "", []string{"read_file"}},
		{"local", acpsdk.ClientCapabilities{}, config.WorkspaceLocal, "", all},
		{"local from the file", acpsdk.ClientCapabilities{}, "", `{"workspaceTools": "local"}`, all},
		{"the flag over the file", acpsdk.ClientCapabilities{}, config.WorkspaceClient, `{"workspaceTools": "local"}`, nil},
		{"off", editorCaps(), "", `{"workspaceTools": "off"}`, nil},
		{"denied", editorCaps(), "", `{"agents": {"defaults": {"tools": {"deny": ["run_command", "write_*"]}}}}`, []string{"read_file", "edit_file"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m := scripted(says("ok"))
			opts := acp.Options{Provider: m, WorkspaceTools: c.mode}
			if c.config != "" {
				opts.Config = configOf(t, c.config)
			}
			h := newHarness(t, opts, nil)
			h.initializeWith(c.caps)
			cwd := t.TempDir()
			sid := h.sessionIn(cwd)
			h.prompt(sid, "hello")
			// update_plan is there whatever the workspace tools.
			if got := offered(m); !slices.Equal(got, append(c.want, "update_plan")) {
				t.Errorf("offered %v, want %v and update_plan", got, c.want)
			}
			_, ups := h.prompt(sid, "/tools")
			if c.want == nil && !strings.Contains(agentText(ups), "1 tools:\n\n- `update_plan`") {
				t.Errorf("/tools: %s", agentText(ups))
			}
			for _, tl := range m.requests()[0].Tools {
				if tl.Name != "update_plan" && !strings.Contains(tl.Description, cwd) {
					t.Errorf("%s: description %q does not name the workspace", tl.Name, tl.Description)
				}
			}
		})
	}
}

// TestLocalWorkspace: with --workspace-tools local and a client that
// offers nothing, the tools work on the local disk and processes; in auto
// mode write_file runs without a question while run_command still asks.
func TestLocalWorkspace(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	file := filepath.Join(cwd, "sub", "hello.txt")
	m := scripted(
		calls("w1", "write_file", argsJSON(map[string]any{"path": file, "content": "hello\n"})),
		calls("x1", "run_command", argsJSON(map[string]any{"command": "cat sub/hello.txt"})),
		says("done"),
	)
	var mu sync.Mutex
	asked := 0
	h := newHarness(t, acp.Options{Provider: m, WorkspaceTools: config.WorkspaceLocal}, &fakeClient{RequestPermissionFunc: answer("allow_once", &asked, &mu)})
	sid := h.sessionIn(cwd)
	h.setMode(sid, "auto")
	_, ups := h.prompt(sid, "work")
	if got := fileText(t, file); got != "hello\n" {
		t.Errorf("file %q", got)
	}
	if got := toolResult(m, "x1"); got != "Exit code: 0\nOutput:\nhello\n" {
		t.Errorf("run_command: %q", got)
	}
	if d := diffOf(lastContent(ups, "w1")); d == nil || d.OldText != nil || d.NewText != "hello\n" {
		t.Errorf("write_file diff %s", mustJSON(d))
	}
	if !strings.Contains(toolText(ups, "x1"), "$ cat sub/hello.txt") || terminalIn(lastContent(ups, "x1")) != "" {
		t.Errorf("run_command content %s", mustJSON(lastContent(ups, "x1")))
	}
	mu.Lock()
	defer mu.Unlock()
	if asked != 1 {
		t.Errorf("asked %d times in auto mode, want 1 (run_command only)", asked)
	}
}

// TestRunCommandCancelled: session/cancel during run_command kills the
// command in the editor's terminal and releases the terminal; the turn
// ends cancelled.
func TestRunCommandCancelled(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "pid")
	m := scripted(calls("x1", "run_command", argsJSON(map[string]any{"command": fmt.Sprintf("echo $$ > %s; exec sleep 120", pidFile)})), says("never"))
	ed := &wsclient.Workspace{}
	var mu sync.Mutex
	asked := 0
	h := newHarness(t, acp.Options{Provider: m}, &fakeClient{Workspace: ed, RequestPermissionFunc: answer("allow_always", &asked, &mu)})
	h.initializeWith(editorCaps())
	sid := h.sessionIn(cwd)
	done := make(chan acpsdk.StopReason, 1)
	go func() {
		resp, err := h.conn.Prompt(h.ctx(), acpsdk.PromptRequest{SessionId: sid, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("sleep")}})
		if err != nil {
			t.Error(err)
		}
		done <- resp.StopReason
	}()
	var pid int
	testbin.WaitFor(t, "the command's pid", func() bool {
		b, _ := os.ReadFile(pidFile)
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		pid = n
		return err == nil
	})
	if err := h.conn.Cancel(h.ctx(), acpsdk.CancelNotification{SessionId: sid}); err != nil {
		t.Fatal(err)
	}
	if stop := <-done; stop != acpsdk.StopReasonCancelled {
		t.Errorf("stop %s", stop)
	}
	calls := ed.Calls()
	kill, release := slices.Index(calls, "terminal/kill term-1"), slices.Index(calls, "terminal/release term-1")
	if kill < 0 || release < kill || len(ed.Live()) != 0 {
		t.Errorf("editor calls %v, live %v", calls, ed.Live())
	}
	testbin.WaitFor(t, "the command to die", func() bool { return !testbin.Alive(pid) })
}
