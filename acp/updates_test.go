package acp_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/internal/inputs/secrets"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// TestChunks: streamed thinking and text become agent_thought_chunk and
// agent_message_chunk updates, in order; the user's prompt is not echoed.
func TestChunks(t *testing.T) {
	t.Parallel()
	m := scripted(func(_ gateway.ModelRequest, onDelta func(gateway.Delta)) (gateway.ModelResponse, error) {
		onDelta(gateway.Delta{Thinking: "let me think"})
		onDelta(gateway.Delta{Text: "Hello, "})
		onDelta(gateway.Delta{Text: "world."})
		return gateway.ModelResponse{Message: assistant("Hello, world."), Stop: gateway.StopEndTurn}, nil
	})
	h := newHarness(t, acp.Options{Provider: m}, nil)
	sid := h.newSession().SessionId
	resp, ups := h.prompt(sid, "hi")
	if resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Errorf("stop %q", resp.StopReason)
	}
	var got []string
	for _, u := range ups {
		switch {
		case u.AgentThoughtChunk != nil:
			got = append(got, "thought:"+u.AgentThoughtChunk.Content.Text.Text)
		case u.AgentMessageChunk != nil:
			got = append(got, "text:"+u.AgentMessageChunk.Content.Text.Text)
		case u.SessionInfoUpdate != nil:
			got = append(got, "title:"+*u.SessionInfoUpdate.Title)
		default:
			got = append(got, "other")
		}
	}
	if want := "title:hi|thought:let me think|text:Hello, |text:world."; strings.Join(got, "|") != want {
		t.Errorf("updates %q, want %q", got, want)
	}
	if r := m.requests(); len(r) != 1 || !strings.HasPrefix(r[0].System, "You are acpgate") {
		t.Errorf("model requests %+v", r)
	}
}

// TestStopReasons: the model's stop reasons and failures map to ACP's.
func TestStopReasons(t *testing.T) {
	t.Parallel()
	stop := func(s gateway.StopReason) step {
		return func(gateway.ModelRequest, func(gateway.Delta)) (gateway.ModelResponse, error) {
			return gateway.ModelResponse{Message: assistant("x"), Stop: s}, nil
		}
	}
	for _, tc := range []struct {
		name  string
		model gateway.Provider
		want  acpsdk.StopReason
		text  string // in the agent's text
	}{
		{"end turn", scripted(says("ok")), acpsdk.StopReasonEndTurn, "ok"},
		{"max tokens", scripted(stop(gateway.StopMaxTokens)), acpsdk.StopReasonMaxTokens, ""},
		{"refusal", scripted(stop(gateway.StopRefusal)), acpsdk.StopReasonRefusal, ""},
		{"provider error", scripted(func(gateway.ModelRequest, func(gateway.Delta)) (gateway.ModelResponse, error) {
			return gateway.ModelResponse{}, fmt.Errorf("%w: 503 overloaded", gateway.ErrProvider)
		}), acpsdk.StopReasonEndTurn, "503 overloaded"},
		// The model keeps calling a tool that does not exist: the turn
		// ends at the Runner's model-call limit.
		{"max turn requests", scripted(calls("", "no_such_tool", `{}`)), acpsdk.StopReasonMaxTurnRequests, ""},
		{"no model", nil, acpsdk.StopReasonEndTurn, "no model here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, acp.Options{Provider: tc.model, NoModelMessage: "no model here"}, nil)
			sid := h.newSession().SessionId
			resp, ups := h.prompt(sid, "go")
			if resp.StopReason != tc.want {
				t.Errorf("stop %q, want %q", resp.StopReason, tc.want)
			}
			if !strings.Contains(agentText(ups), tc.text) {
				t.Errorf("text %q lacks %q", agentText(ups), tc.text)
			}
		})
	}
}

// TestPromptContent: every content block a prompt may carry reaches the
// model as the matching gateway content.
func TestPromptContent(t *testing.T) {
	t.Parallel()
	m := scripted(says("ok"))
	h := newHarness(t, acp.Options{Provider: m}, nil)
	sid := h.newSession().SessionId
	link := acpsdk.ResourceLinkBlock("notes", "file:///notes.md")
	link.ResourceLink.Description = acpsdk.Ptr("my notes")
	link.ResourceLink.MimeType = acpsdk.Ptr("text/markdown")
	prompt := []acpsdk.ContentBlock{
		acpsdk.TextBlock("look"),
		acpsdk.ImageBlock("iVBORw0KGgo=", "image/png"),
		acpsdk.AudioBlock("UklGRg==", "audio/wav"),
		link,
		acpsdk.ResourceBlock(acpsdk.EmbeddedResourceResource{TextResourceContents: &acpsdk.TextResourceContents{Uri: "file:///a.txt", Text: "alpha", MimeType: acpsdk.Ptr("text/plain")}}),
		acpsdk.ResourceBlock(acpsdk.EmbeddedResourceResource{BlobResourceContents: &acpsdk.BlobResourceContents{Uri: "file:///b.bin", Blob: "AAEC", MimeType: acpsdk.Ptr("application/octet-stream")}}),
	}
	if _, err := h.conn.Prompt(h.ctx(), acpsdk.PromptRequest{SessionId: sid, Prompt: prompt}); err != nil {
		t.Fatal(err)
	}
	got := m.requests()[0].Messages[0].Content
	want := []gateway.Content{
		{Type: gateway.ContentText, Text: "look"},
		{Type: gateway.ContentImage, Data: "iVBORw0KGgo=", MIMEType: "image/png"},
		{Type: gateway.ContentAudio, Data: "UklGRg==", MIMEType: "audio/wav"},
		{Type: gateway.ContentResourceLink, URI: "file:///notes.md", Name: "notes", Description: "my notes", MIMEType: "text/markdown"},
		{Type: gateway.ContentResource, URI: "file:///a.txt", Text: "alpha", MIMEType: "text/plain"},
		{Type: gateway.ContentResource, URI: "file:///b.bin", Data: "AAEC", MIMEType: "application/octet-stream"},
	}
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("model input\n got %+v\nwant %+v", got, want)
	}
}

// TestToolCallUpdates: a model's tool call is announced (tool_call,
// pending, with the tool's title, kind, input and _meta), set running,
// reports progress in _meta.progress (throttled), and finishes with the result's
// content and rawOutput; a failed call ends failed.
func TestToolCallUpdates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, tool, args string
		title            string
		kind             acpsdk.ToolKind
		status           acpsdk.ToolCallStatus
		text             string
		progress         int // progress notifications (updates: the first, then throttled)
		raw              string
	}{
		{"echo", "echo", `{"text":"hi there"}`, "alpha: Echo", acpsdk.ToolKindRead, acpsdk.ToolCallStatusCompleted, "hi there", 0, `{"isError":false}`},
		{"progress", "progress", `{"steps":3}`, "alpha: progress", acpsdk.ToolKindOther, acpsdk.ToolCallStatusCompleted, "done 3", 3, `{"isError":false}`},
		{"fail", "fail", `{"message":"nope"}`, "alpha: fail", acpsdk.ToolKindOther, acpsdk.ToolCallStatusFailed, "nope", 0, `{"isError":true}`},
		{"structured", "structured", `{}`, "alpha: structured", acpsdk.ToolKindOther, acpsdk.ToolCallStatusCompleted, `{"answer":42}`, 0, `{"isError":false,"structuredContent":{"answer":42}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := scripted(calls("c1", "mcp__alpha__"+tc.tool, tc.args), says("done"))
			h := newHarness(t, acp.Options{Provider: m}, nil)
			sid := h.newSession(stdioServer("alpha")).SessionId
			h.setMode(sid, "auto")
			_, ups := h.prompt(sid, "go")
			calls := toolUpdates(ups, "c1")
			if len(calls) < 3 || calls[0].ToolCall == nil || calls[1].ToolCallUpdate == nil {
				t.Fatalf("updates %s", dump(ups))
			}
			start := calls[0].ToolCall
			meta, _ := start.Meta["acpgate"].(map[string]any)
			if start.Status != acpsdk.ToolCallStatusPending || start.Title != tc.title || start.Kind != tc.kind ||
				mustJSON(start.RawInput) != tc.args || meta["tool"] != "mcp__alpha__"+tc.tool || meta["mcpTool"] != tc.tool || meta["server"] != "alpha" {
				t.Errorf("tool_call %s", dump(calls[:1]))
			}
			if s := calls[1].ToolCallUpdate.Status; s == nil || *s != acpsdk.ToolCallStatusInProgress {
				t.Errorf("second update %s", dump(calls[1:2]))
			}
			var progress []string
			for _, u := range calls {
				if u.ToolCallUpdate != nil && u.ToolCallUpdate.Meta["progress"] != nil {
					progress = append(progress, mustJSON(u.ToolCallUpdate.Meta["progress"]))
				}
			}
			if len(progress) > tc.progress || tc.progress > 0 && (len(progress) == 0 || progress[0] != `{"message":"step 1/3","progress":1,"total":3}`) {
				t.Errorf("progress %q", progress)
			}
			last := calls[len(calls)-1].ToolCallUpdate
			if finalStatus(ups, "c1") != tc.status || toolText(ups, "c1") != tc.text || mustJSON(last.RawOutput) != tc.raw {
				t.Errorf("final update %s", dump(calls[len(calls)-1:]))
			}
			if agentText(ups) != "done" {
				t.Errorf("text %q", agentText(ups))
			}
		})
	}
}

func (h *harness) setMode(sid acpsdk.SessionId, mode string) {
	h.t.Helper()
	if _, err := h.conn.SetSessionMode(h.ctx(), acpsdk.SetSessionModeRequest{SessionId: sid, ModeId: acpsdk.SessionModeId(mode)}); err != nil {
		h.t.Fatal(err)
	}
}

// TestResultContent: a result's image, audio, embedded resource and
// resource link reach the client as the matching content blocks.
func TestResultContent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, acp.Options{}, nil)
	sid := h.newSession(stdioServer("alpha")).SessionId
	h.setMode(sid, "auto")
	_, ups := h.prompt(sid, "/call mcp__alpha__mixed {}")
	var id string
	for _, u := range ups {
		if u.ToolCall != nil {
			id = string(u.ToolCall.ToolCallId)
		}
	}
	var content []acpsdk.ToolCallContent
	for _, u := range toolUpdates(ups, id) {
		if u.ToolCallUpdate != nil && len(u.ToolCallUpdate.Content) > 0 {
			content = u.ToolCallUpdate.Content
		}
	}
	var got []string
	for _, c := range content {
		b := c.Content.Content
		switch {
		case b.Text != nil:
			got = append(got, "text "+b.Text.Text)
		case b.Image != nil:
			got = append(got, "image "+b.Image.MimeType)
		case b.Audio != nil:
			got = append(got, "audio "+b.Audio.MimeType)
		case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
			r := b.Resource.Resource.TextResourceContents
			got = append(got, "resource "+r.Uri+" "+r.Text+" "+*r.MimeType)
		case b.ResourceLink != nil:
			got = append(got, "link "+b.ResourceLink.Name+" "+b.ResourceLink.Uri+" "+*b.ResourceLink.MimeType)
		}
	}
	want := "text mixed content|image image/png|audio audio/wav|resource test://mixed mixed resource text/plain|link hello test://hello text/plain"
	if strings.Join(got, "|") != want {
		t.Errorf("content %q\nwant %q", got, want)
	}
}

// TestFailureCards: a server that fails at start gets a failed card after
// the session/new response, with its error and stderr; one that gives up
// restarting gets a "failed" card.
func TestFailureCards(t *testing.T) {
	t.Parallel()
	t.Run("at start", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, acp.Options{}, nil)
		resp, err := h.conn.NewSession(h.ctx(), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("bad", "-exit-at-start", "7"), stdioServer("good")}})
		if err != nil {
			t.Fatal(err)
		}
		card := h.fc.rec.waitFor(t, 0, resp.SessionId, "failure card", isCard("mcp-server-failed-bad", acpsdk.ToolCallStatusFailed)).ToolCall
		raw := card.RawOutput.(map[string]any)
		if card.Title != "MCP server bad failed to start" || !strings.Contains(toolText([]acpsdk.SessionUpdate{{ToolCall: card}}, "mcp-server-failed-bad"), "fatal: exiting at start") ||
			raw["server"] != "bad" || raw["state"] != "failed" || !strings.Contains(raw["stderr"].(string), "fatal: exiting at start") {
			t.Errorf("card %s", dump([]acpsdk.SessionUpdate{{ToolCall: card}}))
		}
		// The card follows the announcement; the good server has none.
		ups := h.fc.rec.since(0, resp.SessionId)
		if !isCommands(ups[0]) || len(toolUpdates(ups, "mcp-server-failed-good")) != 0 {
			t.Errorf("updates %s", dump(ups))
		}
		h.settledServers(resp.SessionId)
		_, ups = h.prompt(resp.SessionId, "/mcp")
		if text := agentText(ups); !strings.Contains(text, "**bad** (stdio): failed, 0 tools") || !strings.Contains(text, "last error:") ||
			!strings.Contains(text, "**good** (stdio): ready") || !strings.Contains(text, "protocol ") {
			t.Errorf("/mcp: %s", text)
		}
	})
	t.Run("gave up", func(t *testing.T) {
		t.Parallel()
		cfg := configOf(t, `{"mcpServers": {"crashy": {"command": `+mustJSON(serverBin)+`, "maxRestarts": 1}}}`)
		opts := acp.Options{Config: cfg}
		opts.MCP.Backoff = func(int) time.Duration { return time.Millisecond }
		h := newHarness(t, opts, nil)
		sid := h.newSession().SessionId
		h.setMode(sid, "auto")
		h.prompt(sid, "/call mcp__crashy__crash {}")
		testbin.WaitFor(t, "the restart", func() bool {
			_, ups := h.prompt(sid, "/mcp")
			return strings.Contains(agentText(ups), "ready, ") && strings.Contains(agentText(ups), "1 restarts")
		})
		from := h.fc.rec.len()
		h.prompt(sid, "/call mcp__crashy__crash {}")
		card := h.fc.rec.waitFor(t, from, sid, "failure card", isCard("mcp-server-failed-crashy", acpsdk.ToolCallStatusFailed)).ToolCall
		if card.Title != "MCP server crashy failed" || !strings.Contains(card.RawOutput.(map[string]any)["error"].(string), "gave up") {
			t.Errorf("card %s", dump([]acpsdk.SessionUpdate{{ToolCall: card}}))
		}
	})
	t.Run("crashed without restarts", func(t *testing.T) {
		// maxRestarts 0: the server that worked and crashed did not fail
		// to start.
		t.Parallel()
		cfg := configOf(t, `{"mcpServers": {"once": {"command": `+mustJSON(serverBin)+`, "maxRestarts": 0}}}`)
		h := newHarness(t, acp.Options{Config: cfg}, nil)
		sid := h.newSession().SessionId
		h.setMode(sid, "auto")
		from := h.fc.rec.len()
		h.prompt(sid, "/call mcp__once__crash {}")
		card := h.fc.rec.waitFor(t, from, sid, "failure card", isCard("mcp-server-failed-once", acpsdk.ToolCallStatusFailed)).ToolCall
		if card.Title != "MCP server once failed" {
			t.Errorf("card title %q", card.Title)
		}
	})
}

// TestConnectingCard: a prompt that finds a server still connecting after
// the startup budget shows an in-progress card, closed (completed) when
// the server is ready; the model meanwhile runs without its tools, and
// /tools says the server is connecting.
func TestConnectingCard(t *testing.T) {
	t.Parallel()
	m := scripted(says("ok"))
	// slow answers initialize 1 s after it gets it, well after the budget.
	h := newHarness(t, acp.Options{Provider: m, StartupBudget: 500 * time.Millisecond}, nil)
	sid := h.openSession(stdioServer("slow", "-init-delay", "1s"), stdioServer("fast")).SessionId
	_, ups := h.prompt(sid, "hello")
	card := toolUpdates(ups, "mcp-server-connecting-slow")
	if len(card) != 1 || card[0].ToolCall == nil || card[0].ToolCall.Status != acpsdk.ToolCallStatusInProgress || card[0].ToolCall.Title != "MCP server slow is still connecting" {
		t.Fatalf("updates %s", dump(ups))
	}
	testbin.WaitFor(t, "fast ready", func() bool {
		_, ups := h.prompt(sid, "/mcp")
		return strings.Contains(agentText(ups), "**fast** (stdio): ready")
	})
	if names := offered(m); !slices.Contains(names, "update_plan") {
		t.Fatalf("the model was not offered the native update_plan either: %v", names)
	}
	if slow := toolNamesWith(m.requests()[0], "mcp__slow__"); len(slow) > 0 {
		t.Errorf("the model got %v before its server was ready", slow)
	}
	_, ups = h.prompt(sid, "/tools echo")
	if text := agentText(ups); !strings.Contains(text, "`mcp__fast__echo` (read)") || !strings.Contains(text, "(slow is connecting; its tools are not listed yet)") {
		t.Errorf("/tools: %s", text)
	}
	done := h.fc.rec.waitFor(t, 0, sid, "closed card", isCard("mcp-server-connecting-slow", acpsdk.ToolCallStatusCompleted))
	if text := toolText([]acpsdk.SessionUpdate{done}, "mcp-server-connecting-slow"); !strings.HasPrefix(text, "MCP server slow is ready: ") {
		t.Errorf("closing card: %q", text)
	}
	_, ups = h.prompt(sid, "/tools mcp__slow__echo")
	if !strings.Contains(agentText(ups), "1 tools:") {
		t.Errorf("/tools after ready: %s", agentText(ups))
	}
}

// TestSharedConnectingCard: a shared server still connecting when a
// prompt's wait for it ends gets a "still connecting" card too, closed
// (completed) once it is ready.
func TestSharedConnectingCard(t *testing.T) {
	t.Parallel()
	cfg := configOf(t, `{"limits": {"startupBudget": 300}, "mcpServers": {"slowshared": {"command": `+mustJSON(serverBin)+`, "args": ["-name", "slowshared", "-init-delay", "1s"], "shared": true}}}`)
	h := newHarness(t, acp.Options{Config: cfg}, nil)
	sid := h.openSession().SessionId
	_, ups := h.prompt(sid, "/tools")
	if card := toolUpdates(ups, "mcp-server-connecting-slowshared"); len(card) != 1 || card[0].ToolCall == nil || card[0].ToolCall.Status != acpsdk.ToolCallStatusInProgress {
		t.Fatalf("updates %s", dump(ups))
	}
	h.fc.rec.waitFor(t, 0, sid, "closed card", isCard("mcp-server-connecting-slowshared", acpsdk.ToolCallStatusCompleted))
}

// TestStoredCopyReplayed: the client sees a tool's whole result live; the
// session log keeps a copy cut to limits.maxStoredResultBytes, which a
// load replays with rawOutput.truncated.
func TestStoredCopyReplayed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, acp.Options{Config: configOf(t, `{"limits": {"maxStoredResultBytes": 10}}`)}, nil)
	sid := h.newSession(stdioServer("alpha")).SessionId
	h.setMode(sid, "auto")
	_, ups := h.prompt(sid, `/call mcp__alpha__big {"bytes": 100}`)
	var id string
	for _, u := range ups {
		if u.ToolCall != nil {
			id = string(u.ToolCall.ToolCallId)
		}
	}
	if toolText(ups, id) != strings.Repeat("a", 100) {
		t.Fatalf("live result %q", toolText(ups, id))
	}
	h.closeSession(sid)
	from := h.fc.rec.len()
	if _, err := h.conn.LoadSession(h.ctx(), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	replayed := toolUpdates(h.fc.rec.since(from, sid), id)
	if len(replayed) != 1 || !strings.HasPrefix(toolText(replayed, id), strings.Repeat("a", 10)+"\n[stored copy truncated: 10 of 100 bytes kept]") ||
		mustJSON(replayed[0].ToolCall.RawOutput) != `{"isError":false,"truncated":{"fullBytes":100,"keptBytes":10}}` {
		t.Errorf("replayed %s", dump(replayed))
	}
}

// TestSecretsRedacted: a resolved secret the model repeats, even split
// across chunks, never reaches the client or the session log; configured
// servers get their secret references resolved, the client's servers get
// their env exactly as given.
func TestSecretsRedacted(t *testing.T) {
	t.Parallel()
	red := secrets.NewRedactor()
	res := &secrets.Resolver{Redactor: red, LookupEnv: func(name string) (string, bool) {
		if name == "ACPGATE_TEST_TOKEN" {
			return "tok-hunter2-xyz", true
		}
		return "", false
	}}
	m := scripted(func(_ gateway.ModelRequest, onDelta func(gateway.Delta)) (gateway.ModelResponse, error) {
		onDelta(gateway.Delta{Text: "the token is tok-hun"})
		onDelta(gateway.Delta{Text: "ter2-xyz, keep it"})
		return gateway.ModelResponse{Message: assistant("the token is tok-hunter2-xyz, keep it"), Stop: gateway.StopEndTurn}, nil
	})
	cfg := configOf(t, `{"mcpServers": {"conf": {"command": `+mustJSON(serverBin)+`, "env": {"TOKEN": "secret://env/ACPGATE_TEST_TOKEN"}}}}`)
	h := newHarness(t, acp.Options{Provider: m, Secrets: res, Config: cfg}, nil)
	client := stdioServer("client")
	client.Stdio.Env = []acpsdk.EnvVariable{{Name: "TOKEN", Value: "secret://env/ACPGATE_TEST_TOKEN"}}
	sid := h.newSession(client).SessionId
	h.setMode(sid, "auto")

	_, ups := h.prompt(sid, "/call mcp__client__env {\"name\":\"TOKEN\"}")
	if text := toolText(ups, firstCall(ups)); text != "secret://env/ACPGATE_TEST_TOKEN" {
		t.Errorf("the client's server got TOKEN=%q, want the reference as given", text)
	}
	_, ups = h.prompt(sid, "/call mcp__conf__env {\"name\":\"TOKEN\"}")
	if text := toolText(ups, firstCall(ups)); text != secrets.Redacted {
		t.Errorf("the configured server's TOKEN shows as %q: want it resolved and redacted", text)
	}

	_, ups = h.prompt(sid, "what is the token?")
	if text := agentText(ups); strings.Contains(text, "hunter2") || !strings.Contains(text, "keep it") {
		t.Errorf("client saw %q", text)
	}
	h.closeSession(sid)
	from := h.fc.rec.len()
	if _, err := h.conn.LoadSession(h.ctx(), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	if replay := dump(h.fc.rec.since(from, sid)); strings.Contains(replay, "hunter2") || !strings.Contains(replay, "keep it") {
		t.Errorf("the session log kept the secret: %s", replay)
	}
}

// firstCall is the id of the first tool_call of ups.
func firstCall(ups []acpsdk.SessionUpdate) string {
	for _, u := range ups {
		if u.ToolCall != nil {
			return string(u.ToolCall.ToolCallId)
		}
	}
	return ""
}

// TestClientGone: when writing to the client fails, Serve ends as on
// stdin EOF, closing the sessions.
func TestClientGone(t *testing.T) {
	t.Parallel()
	p := startAgent(t, acp.Options{})
	_ = p.out.Close() // the client stops reading
	// The agent notices at its first write: the answer to this request.
	go func() {
		_, _ = p.in.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}` + "\n"))
	}()
	select {
	case err := <-p.done:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(hangGuard):
		t.Fatal("Serve did not end when the client went away")
	}
}
