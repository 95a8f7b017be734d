package cachekit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/workspace"
)

// ResultBytes is about how long the result of each tool call of the
// scenarios is.
const ResultBytes = 1500

// Native returns the workspace tools (read_file, write_file, edit_file,
// run_command) as a session on the local backend has them: the native
// tools every scenario offers.
func Native() []gateway.Tool {
	local := workspace.NewLocal(nil)
	return workspace.Tools(workspace.Options{Files: local, Terminals: local, Cwd: "/home/user/project"})
}

// RealTools returns servers*perServer tools with the names, descriptions
// and schemas of four real MCP servers (the snapshots of
// gateway/toolsearch/testdata: everything, filesystem, github, memory),
// dealt out to servers named srv00, srv01, … and named as the bridge
// names them (mcp__srv03__create_issue_7). Each answers calls with a
// result of about ResultBytes.
func RealTools(t testing.TB, servers, perServer int) []gateway.Tool {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "gateway", "toolsearch", "testdata")
	type def struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	var defs []def
	for _, s := range []string{"everything", "filesystem", "github", "memory"} {
		data, err := os.ReadFile(filepath.Join(dir, s+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var list struct{ Tools []def }
		if err := json.Unmarshal(data, &list); err != nil {
			t.Fatalf("%s.json: %v", s, err)
		}
		defs = append(defs, list.Tools...)
	}
	out := make([]gateway.Tool, 0, servers*perServer)
	for s := range servers {
		for i := range perServer {
			d := defs[(s*perServer+i)%len(defs)]
			out = append(out, fakeTool(ToolName(s, d.Name, i), d.Description, d.InputSchema, ResultBytes))
		}
	}
	return out
}

// ToolName is the name RealTools gives the i-th tool of server s, a copy
// of the real tool bare.
func ToolName(s int, bare string, i int) string {
	return fmt.Sprintf("mcp__srv%02d__%s_%d", s, bare, i)
}

// answer is a model answer calling one tool.
func answer(name, args string) Answer { return Answer{Calls: []Call{{Name: name, Args: args}}} }

// search is a model answer searching the deferred tools for query.
func search(query string) Answer {
	return answer(gateway.SearchToolName, fmt.Sprintf(`{"query":%q}`, query))
}

// text is a model answer ending the turn.
func text(s string) Answer { return Answer{Text: s} }

// OneServer is a session with the native tools and one server's 32 tools
// (fewer than the search threshold: every tool is offered): three
// prompts, each a tool call and an answer.
func OneServer(t testing.TB) Scenario {
	extra := RealTools(t, 1, 32)
	return Scenario{
		Name: "one server, 32 tools", Native: Native(), Extra: extra,
		Prompts: []Prompt{
			{"What is in the notes directory?", []Answer{
				answer(ToolName(0, "list_directory", 20), `{"path":"/home/user/project/notes"}`),
				text("The notes directory holds three files: todo.md, ideas.md and log.md.")}},
			{"Show me todo.md.", []Answer{
				answer(ToolName(0, "read_text_file", 14), `{"path":"/home/user/project/notes/todo.md"}`),
				text("todo.md lists the release checklist; two items are still open.")}},
			{"Add a file done.md that says the release is out.", []Answer{
				answer(ToolName(0, "write_file", 17), `{"path":"/home/user/project/notes/done.md","content":"The release is out.\n"}`),
				text("Written: notes/done.md.")}},
		},
	}
}

// The three tools the search scenarios find, among the 1000.
var (
	issueTool  = ToolName(0, "create_issue", 32)
	searchTool = ToolName(4, "search_code", 26)
	nodesTool  = ToolName(9, "search_nodes", 44)
)

// SearchThreePrompts is a session with the native tools and 1000 tools
// (20 servers of 50) behind tool search: three prompts, each a search, a
// call to a tool found and an answer.
func SearchThreePrompts(t testing.TB) Scenario {
	return Scenario{
		Name: "1000 tools, three prompts", Native: Native(), Extra: RealTools(t, 20, 50),
		Prompts: []Prompt{
			{"File an issue: the app crashes on start.", []Answer{
				search(issueTool),
				answer(issueTool, `{"owner":"acme","repo":"widgets","title":"Crash on start","body":"The app crashes on start."}`),
				text("Filed acme/widgets#42.")}},
			{"Where is the retry logic in the code?", []Answer{
				search(searchTool),
				answer(searchTool, `{"q":"retry repo:acme/widgets"}`),
				text("The retry logic is in client/retry.go.")}},
			{"What do we know about Alice?", []Answer{
				search(nodesTool),
				answer(nodesTool, `{"query":"Alice"}`),
				text("Alice maintains the client package.")}},
		},
	}
}

// SearchTwentySteps is a session with the 1000 tools of
// SearchThreePrompts: 20 model requests over four prompts; the first
// finds three tools (a search and a call each) and the next three work
// with them.
func SearchTwentySteps(t testing.TB) Scenario {
	issue := func(n int) Answer {
		return answer(issueTool, fmt.Sprintf(`{"owner":"acme","repo":"widgets","title":"Follow-up %d","body":"Found while fixing the crash."}`, n))
	}
	code := func(q string) Answer { return answer(searchTool, fmt.Sprintf(`{"q":"%s repo:acme/widgets"}`, q)) }
	nodes := func(q string) Answer { return answer(nodesTool, fmt.Sprintf(`{"query":%q}`, q)) }
	return Scenario{
		Name: "1000 tools, 20 steps", Native: Native(), Extra: RealTools(t, 20, 50),
		Prompts: []Prompt{
			{"Find the retry logic, ask the graph who owns it and file an issue for them.", []Answer{
				search(searchTool), code("retry"),
				search(nodesTool), nodes("client/retry.go owner"),
				search(issueTool), issue(1),
				text("Filed acme/widgets#42 for Alice, who owns client/retry.go.")}},
			{"Look for other places that retry and file issues for them.", []Answer{
				code("backoff"), code("attempts"), issue(2), issue(3),
				text("Filed #43 and #44.")}},
			{"Who reviews the client package?", []Answer{
				nodes("client package reviewers"), nodes("Bob"), code("CODEOWNERS"),
				text("Bob reviews the client package.")}},
			{"File one more issue for the timeouts and tell Bob.", []Answer{
				code("timeout"), issue(4), nodes("Bob contact"),
				text("Filed #45; Bob's contact is in the graph.")}},
		},
	}
}
