package mcpclient_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgate/acpgate/mcpclient"
)

// handlers is an Elicitor, Sampler and RootsLister made of function
// fields; it records the requests it gets.
type handlers struct {
	ElicitFunc   func(context.Context, mcpclient.ElicitRequest) (mcpclient.ElicitResult, error)
	SampleFunc   func(context.Context, mcpclient.SamplingRequest) (mcpclient.SamplingResult, error)
	RootsFunc    func(context.Context, mcpclient.Origin) ([]mcpclient.Root, error)
	mu           sync.Mutex
	elicits      []mcpclient.ElicitRequest
	samples      []mcpclient.SamplingRequest
	completed    []string // server/id
	completeWake chan struct{}
}

func (h *handlers) Elicit(ctx context.Context, r mcpclient.ElicitRequest) (mcpclient.ElicitResult, error) {
	h.mu.Lock()
	h.elicits = append(h.elicits, r)
	h.mu.Unlock()
	return h.ElicitFunc(ctx, r)
}

func (h *handlers) ElicitationComplete(server, id string) {
	h.mu.Lock()
	h.completed = append(h.completed, server+"/"+id)
	h.mu.Unlock()
	if h.completeWake != nil {
		select {
		case h.completeWake <- struct{}{}:
		default:
		}
	}
}

func (h *handlers) CreateMessage(ctx context.Context, r mcpclient.SamplingRequest) (mcpclient.SamplingResult, error) {
	h.mu.Lock()
	h.samples = append(h.samples, r)
	h.mu.Unlock()
	return h.SampleFunc(ctx, r)
}

func (h *handlers) Roots(ctx context.Context, o mcpclient.Origin) ([]mcpclient.Root, error) {
	return h.RootsFunc(ctx, o)
}

// ctxKey carries a value from CallTool's context to the handlers'.
type ctxKey struct{}

// capabilitiesOf returns the client capabilities the server recorded.
func capabilitiesOf(t *testing.T, lines []string) map[string]any {
	t.Helper()
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, "capabilities "); ok {
			var caps map[string]any
			if err := json.Unmarshal([]byte(rest), &caps); err != nil {
				t.Fatalf("bad capabilities line %q: %v", l, err)
			}
			return caps
		}
	}
	t.Fatalf("no capabilities recorded: %q", lines)
	return nil
}

func TestCapabilitiesFollowHandlers(t *testing.T) {
	t.Parallel()
	h := &handlers{}
	cases := []struct {
		name string
		set  func(*mcpclient.Options, *mcpclient.ServerSpec)
		want string
	}{
		{"none", func(*mcpclient.Options, *mcpclient.ServerSpec) {}, `{"extensions":{"io.modelcontextprotocol/skills":{}}}`},
		{"all", func(o *mcpclient.Options, _ *mcpclient.ServerSpec) { o.Elicitor, o.Sampler, o.Roots = h, h, h },
			`{"elicitation":{"form":{},"url":{}},"extensions":{"io.modelcontextprotocol/skills":{}},"roots":{"listChanged":true},"sampling":{"tools":{}},"tasks":{"cancel":{},"list":{},"requests":{"elicitation":{"create":{}},"sampling":{"createMessage":{}}}}}`},
		{"no sampling for this server", func(o *mcpclient.Options, s *mcpclient.ServerSpec) {
			o.Elicitor, o.Sampler, o.Roots = h, h, h
			s.NoSampling = true
		}, `{"elicitation":{"form":{},"url":{}},"extensions":{"io.modelcontextprotocol/skills":{}},"roots":{"listChanged":true},"tasks":{"cancel":{},"list":{},"requests":{"elicitation":{"create":{}}}}}`},
		{"elicitation only", func(o *mcpclient.Options, _ *mcpclient.ServerSpec) { o.Elicitor = h },
			`{"elicitation":{"form":{},"url":{}},"extensions":{"io.modelcontextprotocol/skills":{}},"tasks":{"cancel":{},"list":{},"requests":{"elicitation":{"create":{}}}}}`},
		{"roots only: no tasks", func(o *mcpclient.Options, _ *mcpclient.ServerSpec) { o.Roots = h }, `{"extensions":{"io.modelcontextprotocol/skills":{}},"roots":{"listChanged":true}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec, lines := recordFile(t)
			opts, _ := fastOpts(t)
			spec := stdio("s", "-record", rec)
			tc.set(opts, &spec)
			start(t, opts, spec)
			got, _ := json.Marshal(capabilitiesOf(t, lines()))
			if string(got) != tc.want {
				t.Errorf("capabilities %s, want %s", got, tc.want)
			}
		})
	}
}

func TestElicitationForm(t *testing.T) {
	t.Parallel()
	h := &handlers{ElicitFunc: func(ctx context.Context, r mcpclient.ElicitRequest) (mcpclient.ElicitResult, error) {
		if ctx.Value(ctxKey{}) != "turn-1" {
			t.Errorf("the handler's context lacks the call's values")
		}
		return mcpclient.ElicitResult{Action: mcpclient.ElicitAccept, Content: map[string]any{"ok": true}}, nil
	}}
	opts, _ := fastOpts(t)
	opts.Elicitor = h
	for _, spec := range []mcpclient.ServerSpec{stdio("s"), {Name: "h", Transport: mcpclient.TransportHTTP, URL: netServer(t, "http")}} {
		t.Run(string(spec.Transport), func(t *testing.T) {
			m := start(t, opts, spec)
			schema := `{"type":"object","properties":{"ok":{"type":"boolean","default":false}},"required":["ok"]}`
			ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), ctxKey{}, "turn-1"), 20*time.Second)
			defer cancel()
			res, err := m.CallTool(ctx, spec.Name, "elicit", json.RawMessage(`{"message":"Proceed?","schema":`+schema+`}`))
			if err != nil {
				t.Fatal(err)
			}
			if got := text(t, res); got != `{"action":"accept","content":{"ok":true}}` {
				t.Errorf("the server got %s", got)
			}
			h.mu.Lock()
			r := h.elicits[len(h.elicits)-1]
			h.mu.Unlock()
			if r.Server != spec.Name || r.Tool != "elicit" || r.Mode != mcpclient.ElicitForm || r.Message != "Proceed?" {
				t.Errorf("request %+v", r)
			}
			if !sameJSON(r.Schema, schema) {
				t.Errorf("schema %s, want %s", r.Schema, schema)
			}
		})
	}
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a json.RawMessage, b string) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	bx, _ := json.Marshal(x)
	by, _ := json.Marshal(y)
	return string(bx) == string(by)
}

// TestElicitationEndsWithTheCall: cancelling the call ends the handler's
// context, so an unanswered question never outlives its call.
func TestElicitationEndsWithTheCall(t *testing.T) {
	t.Parallel()
	asked := make(chan struct{})
	ended := make(chan error, 1)
	h := &handlers{ElicitFunc: func(ctx context.Context, _ mcpclient.ElicitRequest) (mcpclient.ElicitResult, error) {
		close(asked)
		<-ctx.Done()
		ended <- ctx.Err()
		return mcpclient.ElicitResult{Action: mcpclient.ElicitCancel}, nil
	}}
	opts, _ := fastOpts(t)
	opts.Elicitor = h
	m := start(t, opts, stdio("s"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := m.CallTool(ctx, "s", "elicit", map[string]any{"schema": map[string]any{"type": "object", "properties": map[string]any{}}})
		done <- err
	}()
	await(t, asked, "elicitation")
	cancel()
	if err := await(t, ended, "end of the handler"); err == nil {
		t.Fatal("the handler's context did not end")
	}
	if err := await(t, done, "end of the call"); err == nil {
		t.Error("the cancelled call succeeded")
	}
}

// TestRequestAttribution: with two calls of a stdio server running, a
// request cannot be told apart and has no tool; with one, it has.
func TestRequestAttribution(t *testing.T) {
	t.Parallel()
	var origins []mcpclient.Origin
	var mu sync.Mutex
	h := &handlers{RootsFunc: func(_ context.Context, o mcpclient.Origin) ([]mcpclient.Root, error) {
		mu.Lock()
		origins = append(origins, o)
		mu.Unlock()
		return []mcpclient.Root{{URI: "file:///tmp"}}, nil
	}}
	opts, _ := fastOpts(t)
	opts.Roots = h
	m := start(t, opts, stdio("s"))
	call(t, m, "s", "roots", nil)
	whileRunning(t, m, "s", "progress", map[string]any{"steps": 1000, "interval_ms": 20}, func() { call(t, m, "s", "roots", nil) })
	mu.Lock()
	defer mu.Unlock()
	want := []mcpclient.Origin{{Server: "s", Tool: "roots"}, {Server: "s"}}
	if len(origins) != 2 || origins[0] != want[0] || origins[1] != want[1] {
		t.Errorf("origins %+v, want %+v", origins, want)
	}
}

// TestRequestAttributionHTTP: over streamable HTTP a request on a call's
// response stream belongs to that call, however many run (the reference
// server sends a tool's requests there).
func TestRequestAttributionHTTP(t *testing.T) {
	t.Parallel()
	needEverything(t)
	h := &handlers{ElicitFunc: func(ctx context.Context, r mcpclient.ElicitRequest) (mcpclient.ElicitResult, error) {
		if ctx.Value(ctxKey{}) != "mine" {
			t.Error("the handler's context lacks the call's values")
		}
		return mcpclient.ElicitResult{Action: mcpclient.ElicitDecline}, nil
	}}
	opts, _ := fastOpts(t)
	opts.Elicitor = h
	m := start(t, opts, mcpclient.ServerSpec{Name: "e", Transport: mcpclient.TransportHTTP, URL: everythingNet(t, "streamableHttp") + "/mcp"})
	mustReady(t, m, "e")
	whileRunning(t, m, "e", "trigger-long-running-operation", map[string]any{"duration": 60, "steps": 600}, func() {
		ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), ctxKey{}, "mine"), 20*time.Second)
		defer cancel()
		res, err := m.CallTool(ctx, "e", "trigger-elicitation-request", nil)
		if err != nil || !strings.Contains(text(t, res), "declined") {
			t.Errorf("trigger-elicitation-request: %v %+v", err, res)
		}
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.elicits) != 1 || h.elicits[0].Origin != (mcpclient.Origin{Server: "e", Tool: "trigger-elicitation-request"}) {
		t.Errorf("requests %+v, want one from trigger-elicitation-request", h.elicits)
	}
}

// whileRunning runs fn while a call of tool (which must report progress)
// runs on server, then cancels that call.
func whileRunning(t *testing.T, m *mcpclient.Manager, server, tool string, args map[string]any, fn func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ended := make(chan struct{})
	running := make(chan struct{})
	var once sync.Once
	go func() {
		defer close(ended)
		_, _ = m.CallTool(ctx, server, tool, args, mcpclient.WithProgress(func(mcpclient.Progress) { once.Do(func() { close(running) }) }))
	}()
	select { // running once its first progress arrives
	case <-running:
	case <-ended:
		t.Fatalf("%s ended without progress", tool)
	}
	fn()
	cancel()
	await(t, ended, "end of the running call")
}

// await receives from ch, failing the test after 30 s.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s", what)
	}
	var zero T
	return zero
}

func TestElicitationURLAndComplete(t *testing.T) {
	t.Parallel()
	h := &handlers{completeWake: make(chan struct{}, 1), ElicitFunc: func(_ context.Context, r mcpclient.ElicitRequest) (mcpclient.ElicitResult, error) {
		return mcpclient.ElicitResult{Action: mcpclient.ElicitAccept, Content: map[string]any{"dropped": 1}}, nil
	}}
	opts, _ := fastOpts(t)
	opts.Elicitor = h
	m := start(t, opts, stdio("s"))
	res := call(t, m, "s", "elicit_url", map[string]any{"url": "https://example.com/login", "id": "el-1", "complete": true})
	if got := text(t, res); got != `{"action":"accept"}` {
		t.Errorf("the server got %s (content is for forms only)", got)
	}
	await(t, h.completeWake, "notifications/elicitation/complete")
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.elicits[0]
	if r.Mode != mcpclient.ElicitURL || r.URL != "https://example.com/login" || r.ElicitationID != "el-1" || r.Message != "Please sign in" {
		t.Errorf("request %+v", r)
	}
	if len(h.completed) != 1 || h.completed[0] != "s/el-1" {
		t.Errorf("completions %v, want s/el-1", h.completed)
	}
}

func TestSampling(t *testing.T) {
	t.Parallel()
	h := &handlers{SampleFunc: func(_ context.Context, r mcpclient.SamplingRequest) (mcpclient.SamplingResult, error) {
		if len(r.Tools) > 0 {
			return mcpclient.SamplingResult{Model: "m1", StopReason: "toolUse", Content: []mcpclient.SamplingContent{
				{Type: mcpclient.SamplingText, Text: "let me look"},
				{Type: mcpclient.SamplingToolUse, ID: "tu1", Name: "lookup", Input: json.RawMessage(`{"q":"x"}`)},
			}}, nil
		}
		return mcpclient.SamplingResult{Model: "m1", StopReason: "endTurn", Content: []mcpclient.SamplingContent{{Type: mcpclient.SamplingText, Text: "hi " + r.Messages[0].Content[0].Text}}}, nil
	}}
	opts, _ := fastOpts(t)
	opts.Sampler = h
	m := start(t, opts, stdio("s"))

	res := call(t, m, "s", "sample", map[string]any{"prompt": "there", "system": "be brief", "max_tokens": 42, "model_hint": "claude"})
	if got := text(t, res); got != `{"role":"assistant","content":{"type":"text","text":"hi there"},"model":"m1","stopReason":"endTurn"}` {
		t.Errorf("the server got %s", got)
	}
	res = call(t, m, "s", "sample", map[string]any{"prompt": "q", "with_tools": true})
	if got := text(t, res); !strings.Contains(got, `"type":"tool_use"`) || !strings.Contains(got, `"stopReason":"toolUse"`) {
		t.Errorf("the server got %s", got)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.samples[0]
	if r.Tool != "sample" || r.SystemPrompt != "be brief" || r.MaxTokens != 42 || r.ModelPreferences == nil || r.ModelPreferences.Hints[0] != "claude" ||
		len(r.Messages) != 1 || r.Messages[0].Role != "user" || r.Messages[0].Content[0].Text != "there" {
		t.Errorf("request %+v", r)
	}
	r = h.samples[1]
	if len(r.Tools) != 1 || r.Tools[0].Name != "lookup" || !sameJSON(r.Tools[0].InputSchema, mcpserverLookupSchema) || r.ToolChoice != "auto" {
		t.Errorf("tools %+v, choice %q", r.Tools, r.ToolChoice)
	}
}

// mcpserverLookupSchema is internal/testsupport/fake/mcpserver's LookupToolSchema.
const mcpserverLookupSchema = `{"type":"object","properties":{"q":{"type":"string","description":"what to look up"}},"required":["q"],"additionalProperties":false}`

// TestRequestRefused: a handler's RequestError reaches the server with
// its code and message; without a handler the request is refused.
func TestRequestRefused(t *testing.T) {
	t.Parallel()
	h := &handlers{SampleFunc: func(context.Context, mcpclient.SamplingRequest) (mcpclient.SamplingResult, error) {
		return mcpclient.SamplingResult{}, &mcpclient.RequestError{Code: mcpclient.CodeUserRejected, Message: "the user said no"}
	}}
	opts, _ := fastOpts(t)
	opts.Sampler = h
	m := start(t, opts, stdio("s"))
	res := call(t, m, "s", "sample", map[string]any{"prompt": "q"})
	if got := text(t, res); !res.IsError || !strings.Contains(got, "the user said no") {
		t.Errorf("the server got %s", got)
	}
	res = call(t, m, "s", "roots", nil)
	if !res.IsError {
		t.Errorf("roots/list without a handler answered: %s", text(t, res))
	}
}

func TestRootsAndRootsChanged(t *testing.T) {
	t.Parallel()
	h := &handlers{RootsFunc: func(context.Context, mcpclient.Origin) ([]mcpclient.Root, error) {
		return []mcpclient.Root{{URI: "file:///work/a", Name: "a"}}, nil
	}}
	rec, lines := recordFile(t)
	opts, _ := fastOpts(t)
	opts.Roots = h
	m := start(t, opts, stdio("s", "-record", rec))
	if got := text(t, call(t, m, "s", "roots", nil)); got != `{"roots":[{"uri":"file:///work/a","name":"a"}]}` {
		t.Errorf("the server got %s", got)
	}
	if err := m.RootsChanged(context.Background()); err != nil {
		t.Fatal(err)
	}
	// mcp-go's server handles notifications concurrently with requests:
	// calls after it are a condition to wait on, not a proof.
	deadline := time.Now().Add(20 * time.Second)
	for !hasLine(lines(), "roots changed") {
		if time.Now().After(deadline) {
			t.Fatalf("no roots changed notification: %q", lines())
		}
		call(t, m, "s", "echo", map[string]any{"text": "sync"})
	}
}
