package main_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
	"github.com/acpgate/acpgate/internal/testsupport/mcptunnel"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/mcpclient"
)

// skillFile writes dir/name/SKILL.md with the given frontmatter fields
// and body, and returns its path.
func skillFile(t *testing.T, dir, name, desc, body string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	return testbin.WriteFile(t, filepath.Join(dir, name), "SKILL.md", "---\nname: "+name+"\ndescription: "+desc+"\n---\n\n"+body+"\n")
}

// textSince is the agent text of the updates after the first n.
func textSince(a *agent, n int) string { return agentText(a.client.all()[n:]) }

// sharedPrefix is the length of the longest common prefix of a and b.
func sharedPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// TestSkillsFromFiles: a project with two skills (one malformed), a
// skill symbolic-linked and one hard-linked out of the project, and a
// user skill in acpgate's configuration folder. The first model request
// lists exactly the valid ones (and offers load_skill); load_skill
// returns the body and the list of the skill's files; the slash command
// loads the skill into the turn; /skills and /context name the skills
// not taken and why; nothing from outside the project reaches the model;
// and the requests keep each other's prefix (the prompt cache measure of
// issue 21) with skills present.
func TestSkillsFromFiles(t *testing.T) {
	t.Parallel()
	root, outside, xdg := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	agents := filepath.Join(root, ".agents", "skills")
	skillFile(t, agents, "deploy", "Deploy the service to staging", "DEPLOY-BODY: run make deploy.")
	testbin.WriteFile(t, filepath.Join(agents, "deploy"), "checklist.md", "steps")
	if err := os.MkdirAll(filepath.Join(agents, "broken"), 0o755); err != nil {
		t.Fatal(err)
	}
	testbin.WriteFile(t, filepath.Join(agents, "broken"), "SKILL.md", "---\nname: broken\n---\nno description\n")
	stolen := skillFile(t, outside, "stolen", "STOLEN-DESCRIPTION", "STOLEN-BODY")
	if err := os.MkdirAll(filepath.Join(root, ".claude", "skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(stolen), filepath.Join(root, ".claude", "skills", "stolen")); err != nil {
		t.Fatal(err)
	}
	linked := skillFile(t, outside, "linked", "LINKED-DESCRIPTION", "LINKED-BODY")
	if err := os.Mkdir(filepath.Join(agents, "linked"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(linked, filepath.Join(agents, "linked", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	skillFile(t, filepath.Join(xdg, "acpgate", "skills"), "review", "Review a change the team's way", "REVIEW-BODY")

	llm := fakellm.Start(
		fakellm.Turn{ToolCalls: []fakellm.ToolCall{{Name: "load_skill", Arguments: `{"name":"deploy"}`}}},
		fakellm.Turn{ToolCalls: []fakellm.ToolCall{{Name: "load_skill", Arguments: `{"name":"deploy","file":"checklist.md"}`}}},
		fakellm.Turn{Text: "deployed"},
		fakellm.Turn{Text: "reviewed"},
	)
	defer llm.Close()
	a := startAgentEnv(t, t.TempDir(), []string{"XDG_CONFIG_HOME=" + xdg}, "--model", "fake-model", "--base-url", llm.URL)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: root, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	a.client.waitUpdate(t, "the skills as commands", func(u acpsdk.SessionUpdate) bool {
		if u.AvailableCommandsUpdate == nil {
			return false
		}
		var names []string
		for _, c := range u.AvailableCommandsUpdate.AvailableCommands {
			names = append(names, c.Name)
		}
		return strings.Contains(","+strings.Join(names, ",")+",", ",deploy,review,")
	})

	prompt(t, a, sid, "ship it")
	reqs := llm.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	sys := systemMessage(t, llm, 0)
	for _, want := range []string{"# Skills\n", "\n- deploy (project): Deploy the service to staging", "\n- review (user): Review a change the team's way"} {
		if !strings.Contains(sys, want) {
			t.Errorf("the system prompt lacks %q:\n%s", want, sys)
		}
	}
	for _, not := range []string{"broken", "STOLEN", "LINKED", "DEPLOY-BODY"} {
		if strings.Contains(sys, not) {
			t.Errorf("the system prompt holds %q", not)
		}
	}
	offered := false
	for _, tool := range reqs[0].Tools {
		offered = offered || tool.Name == "load_skill"
	}
	if !offered {
		t.Errorf("load_skill not offered: %v", reqs[0].Tools)
	}
	result := reqs[1].Messages[len(reqs[1].Messages)-1]
	if result.Role != "tool" || !strings.Contains(result.Content, "DEPLOY-BODY: run make deploy.") || !strings.Contains(result.Content, "- checklist.md") ||
		!strings.Contains(result.Content, filepath.Join(agents, "deploy")) {
		t.Errorf("load_skill result: %+v", result)
	}
	if file := reqs[2].Messages[len(reqs[2].Messages)-1]; file.Role != "tool" || file.Content != "steps" {
		t.Errorf("load_skill of the skill's file: %+v", file)
	}

	prompt(t, a, sid, "/review the last commit")
	reqs = llm.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests, want 4", len(reqs))
	}
	if user := reqs[3].Messages[len(reqs[3].Messages)-1]; user.Role != "user" || !strings.Contains(user.Content, "REVIEW-BODY") || !strings.Contains(user.Content, "the last commit") {
		t.Errorf("the skill command's turn: %+v", user)
	}
	if got := systemMessage(t, llm, 3); got != sys {
		t.Errorf("the system prompt changed between turns")
	}
	var shared, prev int
	for i := 1; i < len(reqs); i++ {
		p, q := reqs[i-1].CachePrefix(), reqs[i].CachePrefix()
		shared, prev = shared+sharedPrefix(p, q), prev+len(p)
	}
	kept := float64(shared) / float64(prev)
	t.Logf("prefix kept with skills: %.2f %% (%d of %d bytes); the Skills section: %d bytes", 100*kept, shared, prev, len(sectionOf(sys, "# Skills")))
	if kept < 0.99 {
		t.Errorf("requests keep %.2f %% of the previous one, want ≥ 99 %%", 100*kept)
	}

	n := len(a.client.all())
	prompt(t, a, sid, "/skills")
	list := textSince(a, n)
	for _, want := range []string{"`/deploy` (project, loaded)", "`/review` (user, loaded)", filepath.Join(agents, "broken", "SKILL.md") + ": not a valid SKILL.md: field description: missing",
		"it leads to", "more than one hard link"} {
		if !strings.Contains(list, want) {
			t.Errorf("/skills lacks %q:\n%s", want, list)
		}
	}
	n = len(a.client.all())
	prompt(t, a, sid, "/context")
	if ctx := textSince(a, n); !strings.Contains(ctx, "**Skills**: 2 available; loaded: deploy, review") || !strings.Contains(ctx, "- Skills: ") {
		t.Errorf("/context:\n%s", ctx)
	}
	for i, r := range llm.Requests() {
		if raw := string(r.Raw); strings.Contains(raw, "STOLEN") || strings.Contains(raw, "LINKED") {
			t.Errorf("request %d holds a skill from outside the project", i)
		}
	}
}

// sectionOf is the section of the system prompt sys that starts with
// heading, up to the next blank line before a heading ("" for none).
func sectionOf(sys, heading string) string {
	i := strings.Index(sys, heading)
	if i < 0 {
		return ""
	}
	rest := sys[i:]
	if j := strings.Index(rest, "\n\n#"); j >= 0 {
		return rest[:j]
	}
	return rest
}

// TestSkillsFromServer: an MCP server declaring the skills extension
// (the test server's -skills) offers a good skill, one whose served
// SKILL.md does not match its listed digest and one listed too large.
// acpgate lists them (skills/list) and reads nothing before a skill is
// loaded; the model's load_skill of the tampered one fails naming the
// file and the check, the large one fails unread, the good one loads
// framed as the server's, and its other file is read verified. Nothing
// of the tampered body reaches the model.
func TestSkillsFromServer(t *testing.T) {
	t.Parallel()
	rec := filepath.Join(t.TempDir(), "record")
	llm := fakellm.Start(
		fakellm.Turn{ToolCalls: []fakellm.ToolCall{
			{Name: "load_skill", Arguments: `{"name":"docs:tampered"}`},
			{Name: "load_skill", Arguments: `{"name":"docs:huge"}`},
			{Name: "load_skill", Arguments: `{"name":"docs:good"}`},
		}},
		fakellm.Turn{ToolCalls: []fakellm.ToolCall{{Name: "load_skill", Arguments: `{"name":"docs:good","file":"skill://good/notes.md"}`}}},
		fakellm.Turn{Text: "done"},
	)
	defer llm.Close()
	a := startAgent(t, t.TempDir(), "--model", "fake-model", "--base-url", llm.URL)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("docs", "-skills", "-record", rec)}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	n := len(a.client.all())
	prompt(t, a, sid, "/skills")
	if list := textSince(a, n); !strings.Contains(list, "`/docs:good` (server, available)") || !strings.Contains(list, "`/docs:tampered`") {
		t.Fatalf("/skills:\n%s", list)
	}
	record := func() string {
		b, _ := os.ReadFile(rec)
		return string(b)
	}
	if r := record(); !strings.Contains(r, "skills/list") || strings.Contains(r, "read skill://") {
		t.Fatalf("before any skill is loaded the server saw:\n%s", r)
	}

	prompt(t, a, sid, "use the docs skills")
	reqs := llm.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	sys := systemMessage(t, llm, 0)
	if !strings.Contains(sys, "\n- docs:good (from the MCP server docs; untrusted): A skill whose files are what the listing says") {
		t.Errorf("the system prompt's skills:\n%s", sectionOf(sys, "# Skills"))
	}
	results := map[string]string{}
	for _, m := range reqs[1].Messages {
		if m.Role == "tool" {
			results[m.ToolCallID] = m.Content
		}
	}
	var tampered, huge, good string
	for _, m := range reqs[1].Messages {
		for _, c := range m.ToolCalls {
			switch c.Arguments {
			case `{"name":"docs:tampered"}`:
				tampered = results[c.ID]
			case `{"name":"docs:huge"}`:
				huge = results[c.ID]
			case `{"name":"docs:good"}`:
				good = results[c.ID]
			}
		}
	}
	if !strings.Contains(tampered, "skill file skill://tampered/SKILL.md of MCP server \"docs\" failed verification: digest mismatch") {
		t.Errorf("the tampered skill's result: %q", tampered)
	}
	if !strings.Contains(huge, "skill://huge/SKILL.md") || !strings.Contains(huge, "size mismatch") {
		t.Errorf("the huge skill's result: %q", huge)
	}
	if !strings.Contains(good, "GOOD-SKILL-LOADED") || !strings.Contains(good, "MCP_UNTRUSTED_CONTENT") || !strings.Contains(good, "- skill://good/notes.md") {
		t.Errorf("the good skill's result: %q", good)
	}
	if notes := reqs[2].Messages[len(reqs[2].Messages)-1]; !strings.Contains(notes.Content, "Notes of the good skill.") {
		t.Errorf("the good skill's file: %+v", notes)
	}
	for i, r := range reqs {
		if strings.Contains(string(r.Raw), "Evil body") {
			t.Errorf("request %d holds the tampered body", i)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(record(), "read skill://good/notes.md") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	r := record()
	if !strings.Contains(r, "read skill://tampered/SKILL.md") || !strings.Contains(r, "read skill://good/SKILL.md") || strings.Contains(r, "read skill://huge/") {
		t.Errorf("the server's reads:\n%s", r)
	}
}

// TestSkillsOverMCPOverACP: a server in the client (MCP over ACP) that
// declares the skills extension has its skills listed, nothing of them
// read until the user loads one with its slash command, which, with no
// model, shows the verified instructions.
func TestSkillsOverMCPOverACP(t *testing.T) {
	t.Parallel()
	const body = "---\nname: notes\ndescription: Take notes the client's way\n---\n\nNOTES-OVER-ACP\n"
	var reads atomic.Int32
	srv := server.NewMCPServer("skills-over-acp", "1.0.0", server.WithResourceCapabilities(false, false),
		server.WithExtensions(map[string]any{mcpclient.SkillsExtension: map[string]any{}}))
	srv.AddResource(mcp.NewResource("skill://notes/SKILL.md", "notes"), func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		reads.Add(1)
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: "skill://notes/SKILL.md", MIMEType: "text/markdown", Text: body}}, nil
	})
	var tc *mcptunnel.Client
	a := startAgentWith(t, t.TempDir(), agentSetup{pipes: func(in io.Writer, out io.Reader) (io.Writer, io.Reader) {
		tc = mcptunnel.NewClient(in)
		return tc.Input(), tc.Output(out)
	}})
	tc.Serve("srv-skills", srv)
	sum := sha256.Sum256([]byte(body))
	tc.Answer("srv-skills", "skills/list", json.RawMessage(mustJSON(map[string]any{"skills": []any{map[string]any{
		"uri": "skill://notes/SKILL.md", "frontmatter": map[string]any{"name": "notes", "description": "Take notes the client's way"},
		"resources": []any{map[string]any{"uri": "skill://notes/SKILL.md", "digest": "sha256:" + hex.EncodeToString(sum[:]), "size": len(body)}},
	}}})))
	raw, err := tc.Call(ctx30(t), acpsdk.AgentMethodSessionNew, map[string]any{"cwd": t.TempDir(),
		"mcpServers": []any{map[string]any{"type": "acp", "name": "client", "serverId": "srv-skills"}}})
	if err != nil {
		t.Fatal(err)
	}
	var resp acpsdk.NewSessionResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatal(err)
	}
	a.serversUntil(t, resp, "the acp server ready", func(st map[string]string) bool { return st["client"] == "ready" })
	n := len(a.client.all())
	prompt(t, a, resp.SessionId, "/skills")
	if list := textSince(a, n); !strings.Contains(list, "`/client:notes` (server, available): Take notes the client's way") {
		t.Fatalf("/skills:\n%s", list)
	}
	if reads.Load() != 0 {
		t.Fatal("a skill file was read before the skill was loaded")
	}
	n = len(a.client.all())
	prompt(t, a, resp.SessionId, "/client:notes")
	if text := textSince(a, n); !strings.Contains(text, "skill loaded") || !strings.Contains(text, "NOTES-OVER-ACP") {
		t.Errorf("/client:notes:\n%s", text)
	}
	if reads.Load() != 1 {
		t.Errorf("%d reads of the skill's SKILL.md, want 1", reads.Load())
	}
}

// TestSkillsOfSharedServer: a server configured shared: true that
// declares the skills extension has its skills in every session that sees
// it, loaded through the shared server (here with no model: the slash
// command shows the verified instructions).
func TestSkillsOfSharedServer(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, `{"mcpServers": {"docs": {"command": "SERVER", "args": ["-name", "docs", "-skills"], "shared": true}}}`)
	a := startAgent(t, t.TempDir(), "--config", cfg)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	n := len(a.client.all())
	prompt(t, a, resp.SessionId, "/skills")
	if list := textSince(a, n); !strings.Contains(list, "`/docs:good` (server, available)") {
		t.Fatalf("/skills:\n%s", list)
	}
	n = len(a.client.all())
	prompt(t, a, resp.SessionId, "/docs:good")
	if text := textSince(a, n); !strings.Contains(text, "GOOD-SKILL-LOADED") {
		t.Errorf("/docs:good:\n%s", text)
	}
}
