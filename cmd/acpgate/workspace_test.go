package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/internal/testsupport/wsclient"
)

// toolMessage is what the model was told of call id.
func toolMessage(llm *fakellm.Server, id string) string {
	for _, req := range llm.Requests() {
		for _, m := range req.Messages {
			if m.Role == "tool" && m.ToolCallID == id {
				return m.Content
			}
		}
	}
	return ""
}

// toolNames is the names of the tools offered in the model's request n.
func toolNames(llm *fakellm.Server, n int) []string {
	var out []string
	for _, tl := range llm.Requests()[n].Tools {
		out = append(out, tl.Name)
	}
	return out
}

// call is a scripted model's tool call.
func call(id, name string, args map[string]any) fakellm.Turn {
	b, _ := json.Marshal(args)
	return fakellm.Turn{ToolCalls: []fakellm.ToolCall{{ID: id, Name: name, Arguments: string(b)}}}
}

// finished is the final update of call id.
func finished(t *testing.T, a *agent, id string) *acpsdk.SessionToolCallUpdate {
	t.Helper()
	return a.client.waitUpdate(t, id+" finished", func(u acpsdk.SessionUpdate) bool {
		return u.ToolCallUpdate != nil && string(u.ToolCallUpdate.ToolCallId) == id && u.ToolCallUpdate.Status != nil &&
			(*u.ToolCallUpdate.Status == acpsdk.ToolCallStatusCompleted || *u.ToolCallUpdate.Status == acpsdk.ToolCallStatusFailed)
	}).ToolCallUpdate
}

// TestWorkspaceThroughTheEditor: acpgate with an editor that offers its
// files and terminals: the model reads the editor's unsaved buffer, edits
// a file (the diff in the question and on the card), runs a command in
// the editor's terminal (embedded, released; exit status and output to
// the model), and is refused a file outside the cwd.
func TestWorkspaceThroughTheEditor(t *testing.T) {
	t.Parallel()
	cwd, outside := t.TempDir(), t.TempDir()
	notes := testbin.WriteFile(t, cwd, "notes.txt", "on disk\n")
	mainGo := testbin.WriteFile(t, cwd, "main.go", "package main\n\nfunc main() {}\n")
	secret := testbin.WriteFile(t, outside, "secret.txt", "secret\n")
	llm := fakellm.Start(
		call("r1", "read_file", map[string]any{"path": notes}),
		call("e1", "edit_file", map[string]any{"path": mainGo, "old_text": "func main() {}", "new_text": "func main() { println(1) }"}),
		call("x1", "run_command", map[string]any{"command": "echo hi; exit 2"}),
		call("o1", "read_file", map[string]any{"path": secret}),
		fakellm.Turn{Text: "done"},
	)
	defer llm.Close()
	ed := &wsclient.Workspace{}
	ed.SetBuffer(notes, "unsaved line\n")
	a := startAgentWith(t, t.TempDir(), agentSetup{ws: ed}, "--model", "fake-model", "--base-url", llm.URL)
	a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if r := prompt(t, a, resp.SessionId, "work"); r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop %s", r.StopReason)
	}
	if got := toolNames(llm, 0); !slices.Equal(got, []string{"read_file", "write_file", "edit_file", "run_command", "update_plan"}) {
		t.Errorf("offered %v", got)
	}
	if got := toolMessage(llm, "r1"); got != "unsaved line\n" {
		t.Errorf("read_file: %q", got)
	}
	b, _ := os.ReadFile(mainGo)
	if string(b) != "package main\n\nfunc main() { println(1) }\n" {
		t.Errorf("main.go: %q", b)
	}
	var diffs []*acpsdk.ToolCallContentDiff
	for _, c := range append(a.client.asked[0].ToolCall.Content, finished(t, a, "e1").Content...) {
		if c.Diff != nil {
			diffs = append(diffs, c.Diff)
		}
	}
	if len(diffs) != 2 {
		t.Fatalf("diffs in the question and the result: %s", mustJSON(diffs))
	}
	for _, d := range diffs {
		if d.Path != mainGo || d.OldText == nil || *d.OldText != "package main\n\nfunc main() {}\n" || d.NewText != string(b) {
			t.Errorf("diff %s", mustJSON(d))
		}
	}
	x := finished(t, a, "x1")
	if len(x.Content) != 1 || x.Content[0].Terminal == nil || *x.Status != acpsdk.ToolCallStatusFailed {
		t.Errorf("run_command result %s", mustJSON(x))
	}
	if got := toolMessage(llm, "x1"); got != "Exit code: 2\nOutput:\nhi\n" {
		t.Errorf("run_command: %q", got)
	}
	if !slices.Contains(ed.Calls(), "terminal/release "+x.Content[0].Terminal.TerminalId) || len(ed.Live()) != 0 {
		t.Errorf("editor calls %v", ed.Calls())
	}
	if got := toolMessage(llm, "o1"); !strings.Contains(got, "outside the workspace") || slices.Contains(ed.Calls(), "fs/read_text_file "+secret) {
		t.Errorf("outside: %q, editor calls %v", got, ed.Calls())
	}
	if len(a.client.asked) != 2 {
		t.Errorf("%d permission questions, want 2 (edit_file, run_command)", len(a.client.asked))
	}
}

// TestLocalWorkspaceTools: a client that offers no files nor terminals
// gets no workspace tool (update_plan only), unless acpgate runs with --workspace-tools
// local: then the tools work on the local disk and processes.
func TestLocalWorkspaceTools(t *testing.T) {
	t.Parallel()
	llm := fakellm.Start(fakellm.Turn{Text: "no tools"})
	defer llm.Close()
	a := startAgent(t, t.TempDir(), "--model", "fake-model", "--base-url", llm.URL)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	prompt(t, a, resp.SessionId, "hello")
	if got := toolNames(llm, 0); !slices.Equal(got, []string{"update_plan"}) {
		t.Errorf("offered %v to a client without capabilities", got)
	}

	cwd := t.TempDir()
	file := filepath.Join(cwd, "hello.txt")
	llm = fakellm.Start(
		call("w1", "write_file", map[string]any{"path": file, "content": "hello\n"}),
		call("x1", "run_command", map[string]any{"command": "cat hello.txt; echo \"key=$OPENAI_API_KEY\""}),
		call("o1", "write_file", map[string]any{"path": "/etc/acpgate-test", "content": "x"}),
		fakellm.Turn{Text: "done"},
	)
	defer llm.Close()
	a = startAgent(t, t.TempDir(), "--model", "fake-model", "--base-url", llm.URL, "--workspace-tools", "local")
	a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
	resp, err = a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	prompt(t, a, resp.SessionId, "work")
	if got := toolNames(llm, 0); !slices.Equal(got, []string{"read_file", "write_file", "edit_file", "run_command", "update_plan"}) {
		t.Errorf("offered %v", got)
	}
	if b, _ := os.ReadFile(file); string(b) != "hello\n" {
		t.Errorf("file %q", b)
	}
	// The model's API key is not in the commands' environment.
	if got := toolMessage(llm, "x1"); got != "Exit code: 0\nOutput:\nhello\nkey=\n" {
		t.Errorf("run_command: %q", got)
	}
	if got := toolMessage(llm, "o1"); !strings.Contains(got, "outside the workspace") {
		t.Errorf("outside: %q", got)
	}
	// write_file and run_command were asked about; the refused write was
	// not (it failed before the question).
	if len(a.client.asked) != 2 {
		t.Errorf("%d permission questions, want 2", len(a.client.asked))
	}
	start := a.client.waitUpdate(t, "w1 announced", func(u acpsdk.SessionUpdate) bool { return u.ToolCall != nil && u.ToolCall.ToolCallId == "w1" })
	if meta := mustJSON(start.ToolCall.Meta); meta != `{"acpgate":{"tool":"write_file","workspace":"local"}}` || start.ToolCall.Title != "Write file "+file {
		t.Errorf("write_file announced %s", mustJSON(start.ToolCall))
	}
}
