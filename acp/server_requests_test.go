package acp_test

// MCP servers' requests (elicitation, sampling, roots) through the
// in-process harness: the test MCP server's elicit, elicit_url, sample and
// roots tools, called with /call, send them; the fake client answers.

import (
	"bufio"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/gateway/openaicompat"
	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

// initialize says what the client can do (elicitation form and url).
func (h *harness) initialize(form, url bool) {
	h.t.Helper()
	caps := acpsdk.ClientCapabilities{}
	if form || url {
		caps.Elicitation = &acpsdk.ElicitationCapabilities{}
		if form {
			caps.Elicitation.Form = &acpsdk.ElicitationFormCapabilities{}
		}
		if url {
			caps.Elicitation.Url = &acpsdk.ElicitationUrlCapabilities{}
		}
	}
	if _, err := h.conn.Initialize(h.ctx(), acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber, ClientCapabilities: caps}); err != nil {
		h.t.Fatalf("initialize: %v", err)
	}
}

// callResult runs "/call tool args" in sid and returns the call's final
// text and status.
func (h *harness) callResult(sid acpsdk.SessionId, tool, args string) (string, acpsdk.ToolCallStatus, []acpsdk.SessionUpdate) {
	h.t.Helper()
	_, ups := h.prompt(sid, "/call "+tool+" "+args)
	id := callID(ups)
	if id == "" {
		h.t.Fatalf("no tool call in %s", dump(ups))
	}
	return toolText(ups, id), finalStatus(ups, id), ups
}

// callID is the id of the first tool call in ups.
func callID(ups []acpsdk.SessionUpdate) string {
	for _, u := range ups {
		if u.ToolCall != nil && strings.HasPrefix(string(u.ToolCall.ToolCallId), "call_") {
			return string(u.ToolCall.ToolCallId)
		}
	}
	return ""
}

// allowTools answers the tool calls' permission requests with allow once;
// other requests (server questions) go to other.
func allowTools(other func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse) func(context.Context, acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	return func(_ context.Context, p acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
		if strings.HasPrefix(string(p.ToolCall.ToolCallId), "call_") && hasOption(p, "allow_always") {
			return selected("allow_once"), nil
		}
		if other == nil {
			return acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeCancelled()}, nil
		}
		return other(p), nil
	}
}

func selected(id string) acpsdk.RequestPermissionResponse {
	return acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeSelected(acpsdk.PermissionOptionId(id))}
}

func hasOption(p acpsdk.RequestPermissionRequest, id string) bool {
	for _, o := range p.Options {
		if string(o.OptionId) == id {
			return true
		}
	}
	return false
}

// elicitFrames returns the params of every elicitation/create the agent
// sent, as they were on the wire.
func (h *harness) elicitFrames() []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(h.wire.String()))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m struct {
			Method string         `json:"method"`
			Params map[string]any `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Method == "elicitation/create" {
			out = append(out, m.Params)
		}
	}
	return out
}

const personSchema = `{"type":"object","properties":{"name":{"type":"string"},"color":{"type":"string","default":"blue"},"age":{"type":"integer","minimum":0}},"required":["name"]}`

func TestElicitationForm(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer acpsdk.UnstableCreateElicitationResponse
		want   string // the server's result
		failed bool
	}{
		{"accepted, defaults applied", acpsdk.UnstableCreateElicitationResponse{Accept: &acpsdk.UnstableCreateElicitationAccept{Action: "accept", Content: map[string]any{"name": "Ann", "age": 7}}},
			`{"action":"accept","content":{"age":7,"color":"blue","name":"Ann"}}`, false},
		{"invalid answer rejected", acpsdk.UnstableCreateElicitationResponse{Accept: &acpsdk.UnstableCreateElicitationAccept{Action: "accept", Content: map[string]any{"age": -1}}},
			"does not match the requested schema", true},
		{"declined", acpsdk.NewUnstableCreateElicitationResponseDecline(), `{"action":"decline"}`, false},
		{"cancelled", acpsdk.NewUnstableCreateElicitationResponseCancel(), `{"action":"cancel"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var asked []acpsdk.UnstableCreateElicitationRequest
			fc := &fakeClient{RequestPermissionFunc: allowTools(nil)}
			fc.ElicitFunc = func(_ context.Context, p acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
				mu.Lock()
				asked = append(asked, p)
				mu.Unlock()
				return tc.answer, nil
			}
			h := newHarness(t, acp.Options{}, fc)
			h.initialize(true, false)
			sid := h.newSession(stdioServer("s")).SessionId
			text, status, ups := h.callResult(sid, "mcp__s__elicit", `{"message":"Who are you?","schema":`+personSchema+`}`)
			if !strings.Contains(text, tc.want) || (status == acpsdk.ToolCallStatusFailed) != tc.failed {
				t.Errorf("result %q (%s), want %q", text, status, tc.want)
			}
			if len(asked) != 1 || asked[0].Form == nil || asked[0].Form.Message != "Who are you?" || asked[0].Form.RequestedSchema.Required[0] != "name" {
				t.Fatalf("the client was asked %+v", asked)
			}
			// On the wire the request names the session and the call.
			frames := h.elicitFrames()
			id := callID(ups)
			if len(frames) != 1 || frames[0]["sessionId"] != string(sid) || frames[0]["toolCallId"] != id || frames[0]["mode"] != "form" || frames[0]["_meta"] != nil {
				t.Errorf("elicitation/create on the wire: %v", frames)
			}
			// The call's card showed that it waited for the user.
			if !hasWaiting(ups, id) {
				t.Errorf("the call never showed it waited: %s", dump(toolUpdates(ups, id)))
			}
		})
	}
}

// hasWaiting reports whether call id went pending with a "Waiting for"
// text while it ran.
func hasWaiting(ups []acpsdk.SessionUpdate, id string) bool {
	for _, u := range toolUpdates(ups, id) {
		if c := u.ToolCallUpdate; c != nil && c.Status != nil && *c.Status == acpsdk.ToolCallStatusPending && len(c.Content) > 0 &&
			c.Content[0].Content != nil && strings.HasPrefix(c.Content[0].Content.Content.Text.Text, "Waiting for") {
			return true
		}
	}
	return false
}

// TestElicitationCancelledWithTheCall: session/cancel while the user has
// the form open ends the client's request and the turn.
func TestElicitationCancelledWithTheCall(t *testing.T) {
	asked, ended := make(chan struct{}), make(chan struct{})
	fc := &fakeClient{RequestPermissionFunc: allowTools(nil)}
	fc.ElicitFunc = func(ctx context.Context, _ acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
		close(asked)
		<-ctx.Done()
		close(ended)
		return acpsdk.UnstableCreateElicitationResponse{}, ctx.Err()
	}
	h := newHarness(t, acp.Options{}, fc)
	h.initialize(true, true)
	sid := h.newSession(stdioServer("s")).SessionId
	done := make(chan acpsdk.PromptResponse, 1)
	go func() {
		resp, _ := h.prompt(sid, `/call mcp__s__elicit {"schema":`+personSchema+`}`)
		done <- resp
	}()
	await(t, asked, "elicitation")
	if err := h.conn.Cancel(h.ctx(), acpsdk.CancelNotification{SessionId: sid}); err != nil {
		t.Fatal(err)
	}
	await(t, ended, "end of the client's request")
	if resp := await(t, done, "end of the turn"); resp.StopReason != acpsdk.StopReasonCancelled {
		t.Errorf("stop reason %s", resp.StopReason)
	}
}

// TestElicitationWithoutClientSupport: a client without elicitation gets
// a yes/no or choice question as a permission request; any other form is
// declined with a card saying what was asked.
func TestElicitationWithoutClientSupport(t *testing.T) {
	var mu sync.Mutex
	var questions []acpsdk.RequestPermissionRequest
	fc := &fakeClient{}
	fc.RequestPermissionFunc = allowTools(func(p acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		mu.Lock()
		questions = append(questions, p)
		mu.Unlock()
		if hasOption(p, "yes") {
			return selected("yes")
		}
		return selected("choice-1")
	})
	h := newHarness(t, acp.Options{}, fc)
	sid := h.newSession(stdioServer("s")).SessionId

	text, _, _ := h.callResult(sid, "mcp__s__elicit", `{"message":"Go on?","schema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}`)
	if text != `{"action":"accept","content":{"ok":true}}` {
		t.Errorf("boolean: the server got %s", text)
	}
	text, _, _ = h.callResult(sid, "mcp__s__elicit", `{"message":"Pick","schema":{"type":"object","properties":{"c":{"type":"string","oneOf":[{"const":"r","title":"Red"},{"const":"g","title":"Green"}]}}}}`)
	if text != `{"action":"accept","content":{"c":"g"}}` {
		t.Errorf("choice: the server got %s", text)
	}
	if len(questions) != 2 || !strings.Contains(questions[0].ToolCall.Content[0].Content.Content.Text.Text, "Go on?") || questions[1].Options[1].Name != "Green" {
		t.Errorf("questions %+v", questions)
	}

	text, _, ups := h.callResult(sid, "mcp__s__elicit", `{"message":"Your address?","schema":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}}`)
	if text != `{"action":"decline"}` {
		t.Errorf("form: the server got %s", text)
	}
	card := findCard(ups, "mcp-question-")
	if card == nil || card.Status != acpsdk.ToolCallStatusFailed || !strings.Contains(card.Content[0].Content.Content.Text.Text, "Your address?") ||
		!strings.Contains(card.Content[0].Content.Content.Text.Text, "city, street") {
		t.Errorf("no card saying what was asked: %s", dump(ups))
	}
}

// await receives from ch, failing the test after the hang guard.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(hangGuard):
		t.Fatalf("no %s", what)
	}
	var zero T
	return zero
}

// findCard returns the first tool_call whose id starts with prefix.
func findCard(ups []acpsdk.SessionUpdate, prefix string) *acpsdk.SessionUpdateToolCall {
	for _, u := range ups {
		if u.ToolCall != nil && strings.HasPrefix(string(u.ToolCall.ToolCallId), prefix) {
			return u.ToolCall
		}
	}
	return nil
}

func TestElicitationURL(t *testing.T) {
	t.Run("client shows it", func(t *testing.T) {
		completed := make(chan string, 1)
		fc := &fakeClient{RequestPermissionFunc: allowTools(nil)}
		fc.ElicitFunc = func(_ context.Context, p acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
			if p.Url == nil || p.Url.Url != "https://example.com/auth" || p.Url.ElicitationId != "e1" {
				t.Errorf("asked %+v", p)
			}
			return acpsdk.NewUnstableCreateElicitationResponseAccept(), nil
		}
		fc.CompleteFunc = func(_ context.Context, n acpsdk.UnstableCompleteElicitationNotification) error {
			completed <- string(n.ElicitationId)
			return nil
		}
		h := newHarness(t, acp.Options{}, fc)
		h.initialize(false, true)
		sid := h.newSession(stdioServer("s")).SessionId
		text, _, _ := h.callResult(sid, "mcp__s__elicit_url", `{"url":"https://example.com/auth","id":"e1","complete":true}`)
		if text != `{"action":"accept"}` {
			t.Errorf("the server got %s", text)
		}
		if id := await(t, completed, "elicitation/complete"); id != "e1" {
			t.Errorf("completed %q", id)
		}
		if f := h.elicitFrames(); len(f) != 1 || f[0]["sessionId"] != string(sid) || f[0]["mode"] != "url" {
			t.Errorf("on the wire: %v", f)
		}
	})
	t.Run("card with the link", func(t *testing.T) {
		fc := &fakeClient{RequestPermissionFunc: allowTools(nil)}
		h := newHarness(t, acp.Options{}, fc)
		h.initialize(true, false) // forms only
		sid := h.newSession(stdioServer("s")).SessionId
		from := h.fc.rec.len()
		text, _, ups := h.callResult(sid, "mcp__s__elicit_url", `{"url":"https://example.com/auth","id":"e2","complete":true}`)
		if text != `{"action":"accept"}` {
			t.Errorf("the server got %s", text)
		}
		card := findCard(ups, "mcp-link-")
		if card == nil || len(card.Content) != 2 || card.Content[1].Content.Content.ResourceLink == nil || card.Content[1].Content.Content.ResourceLink.Uri != "https://example.com/auth" {
			t.Fatalf("no card with the link: %s", dump(ups))
		}
		h.fc.rec.waitFor(t, from, sid, "the link's card completed", isCard(string(card.ToolCallId), acpsdk.ToolCallStatusCompleted))
	})
}

// samplingHarness is a session whose model is fakellm answering turns,
// with the test server s; its client answers sampling questions with
// option.
func samplingHarness(t *testing.T, cfg string, option string, turns ...fakellm.Turn) (*harness, acpsdk.SessionId, *fakellm.Server, *[]acpsdk.RequestPermissionRequest) {
	t.Helper()
	srv := fakellm.Start(turns...)
	t.Cleanup(srv.Close)
	var asked []acpsdk.RequestPermissionRequest
	var mu sync.Mutex
	fc := &fakeClient{RequestPermissionFunc: allowTools(func(p acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		mu.Lock()
		asked = append(asked, p)
		mu.Unlock()
		return selected(option)
	})}
	opts := acp.Options{Provider: srv.Provider(t, openaicompat.Config{})}
	if cfg != "" {
		opts.Config = configOf(t, cfg)
	}
	h := newHarness(t, opts, fc)
	return h, h.newSession(stdioServer("s")).SessionId, srv, &asked
}

func TestSampling(t *testing.T) {
	t.Run("approved", func(t *testing.T) {
		h, sid, srv, asked := samplingHarness(t, "", "allow_once", fakellm.Turn{Text: "model says hi"})
		text, _, ups := h.callResult(sid, "mcp__s__sample", `{"prompt":"hello","system":"be brief","max_tokens":100000}`)
		var res struct {
			Role    string `json:"role"`
			Content struct{ Type, Text string }
			Model   string `json:"model"`
			Stop    string `json:"stopReason"`
		}
		if err := json.Unmarshal([]byte(text), &res); err != nil || res.Content.Text != "model says hi" || res.Model != fakellm.DefaultModel || res.Stop != "endTurn" || res.Role != "assistant" {
			t.Errorf("the server got %s", text)
		}
		reqs := srv.Requests()
		if len(reqs) != 1 || len(reqs[0].Messages) != 2 || reqs[0].Messages[0].Role != "system" || reqs[0].Messages[0].Content != "be brief" ||
			reqs[0].Messages[1].Content != "hello" || !strings.Contains(string(reqs[0].Raw), `"max_tokens":4096`) {
			t.Errorf("the model was sent %+v", reqs)
		}
		if len(*asked) != 1 || !strings.Contains((*asked)[0].ToolCall.Content[0].Content.Content.Text.Text, "user: hello") {
			t.Errorf("asked %+v", *asked)
		}
		if card := findCard(ups, "mcp-sampling-"); card == nil || finalStatus(ups, string(card.ToolCallId)) != acpsdk.ToolCallStatusCompleted {
			t.Errorf("no completed sampling card: %s", dump(ups))
		}
	})
	t.Run("denied", func(t *testing.T) {
		h, sid, srv, _ := samplingHarness(t, "", "reject_once", fakellm.Turn{Text: "unused"})
		text, _, _ := h.callResult(sid, "mcp__s__sample", `{"prompt":"hello"}`)
		if !strings.Contains(text, "rejected") || len(srv.Requests()) != 0 {
			t.Errorf("the server got %s; the model got %d requests", text, len(srv.Requests()))
		}
	})
	t.Run("auto mode still asks; always reject holds", func(t *testing.T) {
		h, sid, srv, asked := samplingHarness(t, "", "reject_always", fakellm.Turn{Text: "unused"})
		h.setMode(sid, "auto")
		for range 2 {
			if text, _, _ := h.callResult(sid, "mcp__s__sample", `{"prompt":"hello"}`); !strings.Contains(text, "rejected") {
				t.Errorf("the server got %s", text)
			}
		}
		if len(*asked) != 1 || len(srv.Requests()) != 0 {
			t.Errorf("asked %d times (want once); the model got %d requests", len(*asked), len(srv.Requests()))
		}
	})
	t.Run("allowed by the configuration, rate limited", func(t *testing.T) {
		h, sid, srv, asked := samplingHarness(t, `{"sampling":"allow","limits":{"samplingPerMinute":1}}`, "reject_once", fakellm.Turn{Text: "ok"})
		if text, _, _ := h.callResult(sid, "mcp__s__sample", `{"prompt":"one"}`); !strings.Contains(text, `"ok"`) {
			t.Errorf("first: %s", text)
		}
		if text, _, _ := h.callResult(sid, "mcp__s__sample", `{"prompt":"two"}`); !strings.Contains(text, "rate limit") {
			t.Errorf("second: %s", text)
		}
		if len(*asked) != 0 || len(srv.Requests()) != 1 {
			t.Errorf("asked %d times, model called %d times", len(*asked), len(srv.Requests()))
		}
	})
	t.Run("with tools", func(t *testing.T) {
		h, sid, srv, _ := samplingHarness(t, "", "allow_once",
			fakellm.Turn{ToolCalls: []fakellm.ToolCall{{ID: "tu_1", Name: "lookup", Arguments: `{"q":"x"}`}}})
		text, _, _ := h.callResult(sid, "mcp__s__sample", `{"prompt":"find x","with_tools":true}`)
		if !strings.Contains(text, `"type":"tool_use"`) || !strings.Contains(text, `"name":"lookup"`) || !strings.Contains(text, `"stopReason":"toolUse"`) {
			t.Errorf("the server got %s", text)
		}
		if r := srv.Requests(); len(r) != 1 || len(r[0].Tools) != 1 || r[0].Tools[0].Name != "lookup" {
			t.Errorf("the model was sent %+v", r)
		}
	})
}

// TestSamplingTrustedServer: a trusted server's sampling is not asked
// about.
func TestSamplingTrustedServer(t *testing.T) {
	srv := fakellm.Start(fakellm.Turn{Text: "trusted ok"})
	t.Cleanup(srv.Close)
	fc := &fakeClient{RequestPermissionFunc: allowTools(func(p acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		t.Errorf("asked %+v", p.ToolCall)
		return selected("reject_once")
	})}
	h := newHarness(t, acp.Options{Provider: srv.Provider(t, openaicompat.Config{}),
		Config: configOf(t, `{"mcpServers": {"t": {"command": `+mustJSON(serverBin)+`, "trusted": true}}}`)}, fc)
	sid := h.newSession().SessionId
	if text, _, _ := h.callResult(sid, "mcp__t__sample", `{"prompt":"hello"}`); !strings.Contains(text, "trusted ok") {
		t.Errorf("the server got %s", text)
	}
}

// TestSamplingAnswerBounded: a model answer to a server's sampling
// request past limits.maxAnswerBytes is not read further, and the server
// gets an error instead of the answer (issue 34, item 4).
func TestSamplingAnswerBounded(t *testing.T) {
	srv := fakellm.Start(fakellm.Turn{Flood: &fakellm.Flood{TextBytes: 16 << 20}})
	t.Cleanup(srv.Close)
	h := newHarness(t, acp.Options{Provider: srv.Provider(t, openaicompat.Config{}),
		Config: configOf(t, `{"limits": {"maxAnswerBytes": 1000}, "mcpServers": {"t": {"command": `+mustJSON(serverBin)+`, "trusted": true}}}`)},
		&fakeClient{RequestPermissionFunc: allowTools(func(p acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
			t.Errorf("asked %+v", p.ToolCall)
			return selected("reject_once")
		})})
	sid := h.newSession().SessionId
	text, _, _ := h.callResult(sid, "mcp__t__sample", `{"prompt":"hello"}`)
	if strings.Contains(text, "aaaa") || !strings.Contains(text, "failed") {
		t.Errorf("the server got %.200s", text)
	}
	if sent := srv.Flooded(); sent >= 16<<20 {
		t.Errorf("the whole answer (%d bytes) was read", sent)
	}
}

func TestRoots(t *testing.T) {
	h := newHarness(t, acp.Options{}, &fakeClient{})
	cwd, extra := t.TempDir(), t.TempDir()
	resp, err := h.conn.NewSession(h.ctx(), acpsdk.NewSessionRequest{Cwd: cwd, AdditionalDirectories: []string{extra}, McpServers: []acpsdk.McpServer{stdioServer("s")}})
	if err != nil {
		t.Fatal(err)
	}
	text, _, _ := h.callResult(resp.SessionId, "mcp__s__roots", `{}`)
	var got struct {
		Roots []struct{ URI, Name string }
	}
	if err := json.Unmarshal([]byte(text), &got); err != nil || len(got.Roots) != 2 || got.Roots[0].URI != "file://"+cwd || got.Roots[1].URI != "file://"+extra {
		t.Errorf("roots %s", text)
	}
	if _, err := h.conn.NewSession(h.ctx(), acpsdk.NewSessionRequest{Cwd: cwd, AdditionalDirectories: []string{"rel"}, McpServers: []acpsdk.McpServer{}}); reqCode(err) != -32602 {
		t.Errorf("a relative additional directory: %v", err)
	}
}

// TestElicitationBadSchema: a requestedSchema acpgate cannot check answers
// against (here one that refers to a local file, which is never read) is
// refused before the user is asked.
func TestElicitationBadSchema(t *testing.T) {
	fc := &fakeClient{RequestPermissionFunc: allowTools(nil)}
	fc.ElicitFunc = func(context.Context, acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
		t.Error("the client was asked")
		return acpsdk.NewUnstableCreateElicitationResponseDecline(), nil
	}
	h := newHarness(t, acp.Options{}, fc)
	h.initialize(true, true)
	sid := h.newSession(stdioServer("s")).SessionId
	text, status, _ := h.callResult(sid, "mcp__s__elicit", `{"schema":{"type":"object","properties":{"x":{"$ref":"file:///etc/passwd"}}}}`)
	if status != acpsdk.ToolCallStatusFailed || !strings.Contains(text, "not a valid JSON Schema") {
		t.Errorf("result %q (%s)", text, status)
	}
}
