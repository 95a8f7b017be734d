package acp_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/mcpclient"
)

// promptBlocks sends blocks to session sid and returns the updates that
// arrived while it ran.
func (h *harness) promptBlocks(sid acpsdk.SessionId, blocks ...acpsdk.ContentBlock) []acpsdk.SessionUpdate {
	h.t.Helper()
	from := h.fc.rec.len()
	if _, err := h.conn.Prompt(h.ctx(), acpsdk.PromptRequest{SessionId: sid, Prompt: blocks}); err != nil {
		h.t.Fatalf("prompt: %v", err)
	}
	return h.fc.rec.since(from, sid)
}

// lastUser is the text the model was given as the user's last message.
func lastUser(t *testing.T, m *fakeModel) string {
	t.Helper()
	reqs := m.requests()
	if len(reqs) == 0 {
		t.Fatal("the model was not called")
	}
	msgs := reqs[len(reqs)-1].Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == gateway.RoleUser {
			return gateway.PlainText(msgs[i].Content)
		}
	}
	t.Fatal("no user message")
	return ""
}

// allowing is a fake client that allows every tool call once.
func allowing() *fakeClient {
	var (
		asked int
		mu    sync.Mutex
	)
	return &fakeClient{RequestPermissionFunc: answer("allow_once", &asked, &mu)}
}

// resourceUpdates makes opts signal (without blocking) each
// resources/updated event, once the session has handled it.
func resourceUpdates(opts *acp.Options) <-chan struct{} {
	updated := make(chan struct{}, 1)
	opts.MCP.OnEvent = func(e mcpclient.Event) {
		if e.Kind == mcpclient.EventResourceUpdated {
			select {
			case updated <- struct{}{}:
			default:
			}
		}
	}
	return updated
}

func readRecord(t *testing.T, path string) []string {
	t.Helper()
	b, _ := os.ReadFile(path)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func TestResourcesCommand(t *testing.T) {
	h := newHarness(t, acp.Options{}, nil)
	sid := h.newSession(stdioServer("s", "-live")).SessionId
	_, ups := h.prompt(sid, "/resources")
	got := agentText(ups)
	for _, want := range []string{"**s**", "hello `test://hello` (text/plain) A plain text greeting.", "item `test://items/{id}`", "counter `test://counter`"} {
		if !strings.Contains(got, want) {
			t.Errorf("/resources lacks %q:\n%s", want, got)
		}
	}
	if _, ups = h.prompt(sid, "/resources nope"); !strings.Contains(agentText(ups), `no MCP server "nope"`) {
		t.Errorf("/resources nope: %s", agentText(ups))
	}
	empty := h.newSession().SessionId
	if _, ups = h.prompt(empty, "/resources"); !strings.Contains(agentText(ups), "offer no resources") {
		t.Errorf("/resources without servers: %s", agentText(ups))
	}
}

// A mentioned resource of a server reaches the model read now, framed as
// untrusted; it is subscribed to, the model is told on its next turn
// that it changed, and the subscription ends with the session. A link to
// no server's resource stays a link.
func TestResourceMention(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "record")
	m := scripted(says("ok"))
	opts := acp.Options{Provider: m}
	updated := resourceUpdates(&opts)
	h := newHarness(t, opts, allowing())
	sid := h.newSession(stdioServer("s", "-live", "-record", rec)).SessionId

	h.promptBlocks(sid, acpsdk.TextBlock("look at"), acpsdk.ResourceLinkBlock("counter", "test://counter"),
		acpsdk.ResourceLinkBlock("notes", "file:///tmp/notes.txt"))
	got := lastUser(t, m)
	if !strings.Contains(got, `<<<MCP_UNTRUSTED_CONTENT id=`) || !strings.Contains(got, `the resource "test://counter" of the MCP server "s"`) || !strings.Contains(got, "counter 0") {
		t.Fatalf("the model did not get the framed resource:\n%s", got)
	}
	if !strings.Contains(got, "[resource link notes: file:///tmp/notes.txt]") {
		t.Fatalf("a link to no server's resource changed:\n%s", got)
	}
	if !slices.Contains(readRecord(t, rec), "subscribe test://counter") {
		t.Fatalf("not subscribed: %q", readRecord(t, rec))
	}

	h.prompt(sid, "/call mcp__s__bump_counter {}")
	select { // the session has taken the update in
	case <-updated:
	case <-h.ctx().Done():
		t.Fatal("no resources/updated event")
	}
	h.prompt(sid, "and now?")
	if got := lastUser(t, m); !strings.Contains(got, "have changed") || !strings.Contains(got, "- test://counter (MCP server s)") {
		t.Fatalf("the model was not told the resource changed:\n%s", got)
	}
	h.prompt(sid, "again?")
	if got := lastUser(t, m); strings.Contains(got, "have changed") {
		t.Fatalf("the change was told twice:\n%s", got)
	}

	if _, err := h.conn.CloseSession(h.ctx(), acpsdk.CloseSessionRequest{SessionId: sid}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(readRecord(t, rec), "unsubscribe test://counter") {
		t.Fatalf("not unsubscribed at session end: %q", readRecord(t, rec))
	}
}

// An embedded resource of a server is read from the server too.
func TestEmbeddedResourceMention(t *testing.T) {
	m := scripted(says("ok"))
	h := newHarness(t, acp.Options{Provider: m}, nil)
	sid := h.newSession(stdioServer("s")).SessionId
	h.promptBlocks(sid, acpsdk.TextBlock("see"), acpsdk.ResourceBlock(acpsdk.EmbeddedResourceResource{
		TextResourceContents: &acpsdk.TextResourceContents{Uri: "test://items/7", Text: "stale copy"}}))
	if got := lastUser(t, m); !strings.Contains(got, "item 7") || strings.Contains(got, "stale copy") || !strings.Contains(got, "MCP_UNTRUSTED_CONTENT") {
		t.Fatalf("the model did not get the server's resource:\n%s", got)
	}
}

// The model's resource tools: offered when a server has resources (not
// otherwise), read-only, their results framed; a resource link in a tool
// result reaches the editor as a resource_link and is readable.
func TestResourceTools(t *testing.T) {
	m := scripted(calls("c1", "mcp_read_resource", `{"uri":"test://items/7"}`), says("done"))
	h := newHarness(t, acp.Options{Provider: m}, allowing())
	sid := h.newSession(stdioServer("s", "-live")).SessionId

	_, ups := h.prompt(sid, "/call mcp__s__link {\"id\":\"7\"}")
	var link *acpsdk.ContentBlockResourceLink
	for _, u := range ups {
		if u.ToolCallUpdate != nil {
			for _, c := range u.ToolCallUpdate.Content {
				if c.Content != nil && c.Content.Content.ResourceLink != nil {
					link = c.Content.Content.ResourceLink
				}
			}
		}
	}
	if link == nil || link.Uri != "test://items/7" {
		t.Fatalf("the tool's resource link did not reach the editor: %+v", ups)
	}

	h.prompt(sid, "read it")
	reqs := m.requests()
	if !slices.ContainsFunc(reqs[0].Tools, func(s gateway.ToolSpec) bool { return s.Name == "mcp_list_resources" }) {
		t.Fatalf("mcp_list_resources not offered: %+v", reqs[0].Tools)
	}
	var result string
	for _, msg := range reqs[len(reqs)-1].Messages {
		if msg.Role == gateway.RoleTool && msg.Result != nil {
			result = msg.Result.ModelText()
		}
	}
	if !strings.Contains(result, "item 7") || !strings.Contains(result, "MCP_UNTRUSTED_CONTENT") {
		t.Fatalf("mcp_read_resource result for the model:\n%s", result)
	}

	none := scripted(says("ok"))
	h2 := newHarness(t, acp.Options{Provider: none}, nil)
	h2.prompt(h2.newSession().SessionId, "hi")
	if slices.ContainsFunc(none.requests()[0].Tools, func(s gateway.ToolSpec) bool { return strings.HasPrefix(s.Name, "mcp_") }) {
		t.Fatalf("resource tools offered without resources: %+v", none.requests()[0].Tools)
	}
}

// What a server logs (notifications/message) during a call the model
// made stays out of the model's context: the model sees the result only.
func TestServerLogNotInModelContext(t *testing.T) {
	m := scripted(calls("c1", "mcp__s__log", `{"level":"error","message":"server-log-line-xyz"}`), says("done"))
	h := newHarness(t, acp.Options{Provider: m}, allowing())
	sid := h.newSession(stdioServer("s")).SessionId
	h.prompt(sid, "log something")
	reqs := m.requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(reqs))
	}
	var all strings.Builder
	for _, msg := range reqs[1].Messages {
		all.WriteString(gateway.PlainText(msg.Content))
		if msg.Result != nil {
			all.WriteString(msg.Result.ModelText())
		}
	}
	if !strings.Contains(all.String(), "logged") || strings.Contains(all.String(), "server-log-line-xyz") {
		t.Fatalf("model context:\n%s", all.String())
	}
}
