package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/openaicompat"
	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

// events records a turn's events.
type events struct {
	mu  sync.Mutex
	all []gateway.Event
}

func (e *events) sink(ev gateway.Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
}

func (e *events) kinds(k gateway.EventKind) []gateway.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []gateway.Event
	for _, ev := range e.all {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

func (e *events) text(k gateway.EventKind) string {
	var s string
	for _, ev := range e.kinds(k) {
		s += ev.Text
	}
	return s
}

// tools is a ToolAccess over a fixed set of tools, with no policy and no
// approver.
func tools(ts ...gateway.Tool) gateway.ToolAccess {
	return gateway.ToolAccess{Tools: gateway.NewToolset(nil, ts)}
}

func userInput(s string) []gateway.Content {
	return []gateway.Content{{Type: gateway.ContentText, Text: s}}
}

// slowTool blocks until its context ends or release is closed.
func slowTool(name string, started chan<- string, release <-chan struct{}) gateway.Tool {
	tl := namedTool(name)
	tl.Execute = func(ctx context.Context, args json.RawMessage, _ func(gateway.Progress)) (gateway.Result, error) {
		started <- name
		select {
		case <-release:
			return gateway.TextResult(name + " done " + string(args)), nil
		case <-ctx.Done():
			return gateway.Result{}, ctx.Err()
		}
	}
	return tl
}

func TestRunOneToolCall(t *testing.T) {
	srv := fakellm.Start(
		fakellm.Turn{Reasoning: "I should echo.", Text: "Let me check.", ToolCalls: []fakellm.ToolCall{{ID: "call_1", Name: "echo", Arguments: `{"text":"hi"}`}}},
		fakellm.Turn{Text: "The tool said hi."},
	)
	defer srv.Close()
	echo := namedTool("echo")
	echo.Title, echo.Kind = "srv: echo", gateway.KindRead
	echo.Execute = func(_ context.Context, args json.RawMessage, progress func(gateway.Progress)) (gateway.Result, error) {
		progress(gateway.Progress{Progress: 1, Message: "working"})
		return gateway.Result{Content: []gateway.Content{{Type: gateway.ContentText, Text: "hi"}}, ForModel: "FRAMED(hi)"}, nil
	}
	r := gateway.NewRunner(gateway.RunnerOptions{System: "be brief"})
	var ev events
	res, err := r.Run(context.Background(), gateway.RunOptions{Model: srv.Provider(t, openaicompat.Config{}), Input: userInput("say hi"),
		ToolAccess: tools(echo), Sink: ev.sink})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != gateway.StopEndTurn || len(res.Messages) != 4 {
		t.Fatalf("stop %s, %d messages", res.Stop, len(res.Messages))
	}
	if got := ev.text(gateway.EventText); got != "Let me check.The tool said hi." {
		t.Errorf("text %q", got)
	}
	if got := ev.text(gateway.EventThinking); got != "I should echo." {
		t.Errorf("thinking %q", got)
	}
	started := ev.kinds(gateway.EventToolCallStarted)
	if len(started) != 1 || started[0].Call.ID != "call_1" || started[0].Call.Title != "srv: echo" || started[0].Call.Kind != gateway.KindRead || string(started[0].Call.RawInput) != `{"text":"hi"}` {
		t.Errorf("started %+v", started)
	}
	if p := ev.kinds(gateway.EventToolCallProgress); len(p) != 1 || p[0].Progress.Message != "working" {
		t.Errorf("progress %+v", p)
	}
	if f := ev.kinds(gateway.EventToolCallFinished); len(f) != 1 || f[0].Failed || f[0].Result.Content[0].Text != "hi" {
		t.Errorf("finished %+v", f)
	}
	if u := ev.kinds(gateway.EventUsage); len(u) != 2 || res.Usage.InputTokens != 20 {
		t.Errorf("usage events %d, total %+v", len(u), res.Usage)
	}
	// What the model was sent: the tools, then the framed result.
	reqs := srv.Requests()
	if len(reqs[0].Tools) != 1 || reqs[0].Tools[0].Name != "echo" || reqs[0].Messages[0].Role != "system" {
		t.Errorf("first request: %+v", reqs[0])
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != "tool" || last.ToolCallID != "call_1" || last.Content != "FRAMED(hi)" {
		t.Errorf("tool message sent: %+v", last)
	}
	if asst := reqs[1].Messages[len(reqs[1].Messages)-2]; len(asst.ToolCalls) != 1 || asst.ToolCalls[0].Arguments != `{"text":"hi"}` {
		t.Errorf("assistant message sent back: %+v", asst)
	}
}

// TestRunSystemPrompt: a turn's own system prompt wins over the Runner's
// and is the first message of every model call of the turn.
func TestRunSystemPrompt(t *testing.T) {
	srv := fakellm.Start(fakellm.Turn{ToolCalls: []fakellm.ToolCall{{ID: "a", Name: "missing", Arguments: `{}`}}}, fakellm.Turn{Text: "ok"})
	defer srv.Close()
	r := gateway.NewRunner(gateway.RunnerOptions{System: "the runner's"})
	if _, err := r.Run(context.Background(), gateway.RunOptions{Model: srv.Provider(t, openaicompat.Config{}), Input: userInput("hi"), System: "the turn's"}); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, req := range reqs {
		if m := req.Messages[0]; m.Role != "system" || m.Content != "the turn's" {
			t.Errorf("request %d starts with %+v", i, m)
		}
	}
}

func TestRunParallelToolCallsInOrder(t *testing.T) {
	srv := fakellm.Start(
		fakellm.Turn{ToolCalls: []fakellm.ToolCall{
			{ID: "a", Name: "slow_a", Arguments: `{"n":1}`},
			{ID: "b", Name: "slow_b", Arguments: `{"n":2}`},
			{ID: "c", Name: "missing", Arguments: `{}`},
		}},
		fakellm.Turn{Text: "ok"},
	)
	defer srv.Close()
	started := make(chan string, 2)
	release := make(chan struct{})
	acc := tools(slowTool("slow_a", started, release), slowTool("slow_b", started, release))
	r := gateway.NewRunner(gateway.RunnerOptions{})
	done := make(chan gateway.TurnResult)
	model := srv.Provider(t, openaicompat.Config{})
	go func() {
		res, err := r.Run(context.Background(), gateway.RunOptions{Model: model, Input: userInput("go"), ToolAccess: acc})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	// Both tools are running at once before either may finish.
	<-started
	<-started
	close(release)
	res := <-done
	var got []string
	for _, m := range res.Messages[2:5] {
		got = append(got, m.ToolCallID+"="+m.Result.ModelText())
	}
	want := []string{`a=slow_a done {"n":1}`, `b=slow_b done {"n":2}`, `c=There is no tool named "missing".`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("results %v, want %v", got, want)
	}
	if !res.Messages[4].Result.IsError {
		t.Error("unknown tool not failed")
	}
}

func TestRunFailingToolApprovalAndPolicy(t *testing.T) {
	srv := fakellm.Start(
		fakellm.Turn{ToolCalls: []fakellm.ToolCall{{ID: "1", Name: "boom"}, {ID: "2", Name: "guarded"}, {ID: "3", Name: "forbidden"}}},
		fakellm.Turn{Text: "noted"},
	)
	defer srv.Close()
	boom := namedTool("boom")
	boom.Execute = func(context.Context, json.RawMessage, func(gateway.Progress)) (gateway.Result, error) {
		return gateway.Result{}, errors.New("disk on fire")
	}
	guarded := namedTool("guarded")
	guarded.AskApproval = true
	acc := tools(boom, guarded, namedTool("forbidden"))
	var asked []string
	acc.Policy = func(tl gateway.Tool) bool { return tl.Name != "forbidden" }
	acc.Approver = func(_ context.Context, c gateway.CallInfo, tl gateway.Tool) (gateway.Decision, error) {
		asked = append(asked, c.Name)
		if tl.AskApproval {
			return gateway.Reject, nil
		}
		return gateway.Allow, nil
	}
	r := gateway.NewRunner(gateway.RunnerOptions{})
	var ev events
	res, err := r.Run(context.Background(), gateway.RunOptions{Model: srv.Provider(t, openaicompat.Config{}), Input: userInput("go"), ToolAccess: acc, Sink: ev.sink})
	if err != nil || res.Stop != gateway.StopEndTurn {
		t.Fatalf("%v %s", err, res.Stop)
	}
	if strings.Join(asked, ",") != "boom,guarded" {
		t.Errorf("asked for %v", asked)
	}
	msgs := res.Messages[2:5]
	for i, want := range []string{"disk on fire", "rejected", "not allowed by policy"} {
		if !msgs[i].Result.IsError || !strings.Contains(msgs[i].Result.ModelText(), want) {
			t.Errorf("call %d: %+v, want failure mentioning %q", i, msgs[i].Result, want)
		}
	}
	var offered []string
	for _, tl := range srv.Requests()[0].Tools {
		offered = append(offered, tl.Name)
	}
	if !slices.Contains(offered, "boom") || !slices.Contains(offered, "guarded") {
		t.Fatalf("offered %v, want boom and guarded among them", offered)
	}
	if slices.Contains(offered, "forbidden") {
		t.Error("a denied tool was offered to the model")
	}
	if n := len(ev.kinds(gateway.EventToolCallRunning)); n != 1 {
		t.Errorf("%d calls ran, want 1", n)
	}
}

func TestRunCancelDuringTool(t *testing.T) {
	srv := fakellm.Start(fakellm.Turn{ToolCalls: []fakellm.ToolCall{{ID: "1", Name: "slow"}}})
	defer srv.Close()
	started := make(chan string, 1)
	acc := tools(slowTool("slow", started, nil))
	r := gateway.NewRunner(gateway.RunnerOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan gateway.TurnResult)
	model := srv.Provider(t, openaicompat.Config{})
	go func() {
		res, _ := r.Run(ctx, gateway.RunOptions{Model: model, Input: userInput("go"), ToolAccess: acc})
		done <- res
	}()
	<-started
	cancel()
	res := <-done
	if res.Stop != gateway.StopCancelled {
		t.Errorf("stop %s", res.Stop)
	}
	if last := res.Messages[len(res.Messages)-1]; last.Role != gateway.RoleTool || !last.Result.IsError {
		t.Errorf("the cancelled call must still get a result: %+v", last)
	}
	if srv.Remaining() != 0 || len(srv.Requests()) != 1 {
		t.Errorf("model called again after cancel: %d requests", len(srv.Requests()))
	}
}

func TestRunCancelDuringModel(t *testing.T) {
	hold, started := make(chan struct{}), make(chan struct{})
	srv := fakellm.Start(fakellm.Turn{Text: "never", Started: started, HoldMidStream: hold})
	defer srv.Close()
	defer close(hold)
	r := gateway.NewRunner(gateway.RunnerOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	res, err := r.Run(ctx, gateway.RunOptions{Model: srv.Provider(t, openaicompat.Config{}), Input: userInput("go")})
	if err != nil || res.Stop != gateway.StopCancelled {
		t.Errorf("%v %s", err, res.Stop)
	}
}

func TestRunTurnLimitAndStops(t *testing.T) {
	loop := fakellm.Turn{ToolCalls: []fakellm.ToolCall{{ID: "x", Name: "echo", Arguments: `{}`}}}
	srv := fakellm.Start(loop, loop, loop)
	defer srv.Close()
	r := gateway.NewRunner(gateway.RunnerOptions{MaxModelCalls: 3})
	res, err := r.Run(context.Background(), gateway.RunOptions{Model: srv.Provider(t, openaicompat.Config{}), Input: userInput("loop"), ToolAccess: tools(namedTool("echo"))})
	if err != nil || res.Stop != gateway.StopMaxTurnRequests || len(srv.Requests()) != 3 {
		t.Errorf("%v %s after %d requests", err, res.Stop, len(srv.Requests()))
	}
	for _, tc := range []struct {
		turn fakellm.Turn
		want gateway.StopReason
	}{
		{fakellm.Turn{Text: "cut", FinishReason: "length"}, gateway.StopMaxTokens},
		{fakellm.Turn{Refusal: "I can't help with that."}, gateway.StopRefusal},
		{fakellm.Turn{Text: "x", FinishReason: "content_filter"}, gateway.StopRefusal},
	} {
		srv := fakellm.Start(tc.turn)
		var ev events
		r := gateway.NewRunner(gateway.RunnerOptions{})
		res, err := r.Run(context.Background(), gateway.RunOptions{Model: srv.Provider(t, openaicompat.Config{}), Input: userInput("q"), Sink: ev.sink})
		srv.Close()
		if err != nil || res.Stop != tc.want {
			t.Errorf("%+v: %v %s", tc.turn, err, res.Stop)
		}
		if tc.turn.Refusal != "" && ev.text(gateway.EventText) != tc.turn.Refusal {
			t.Errorf("refusal not shown: %q", ev.text(gateway.EventText))
		}
	}
}

func TestProviderErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		turns []fakellm.Turn
		want  string // "" = success
	}{
		{"401", []fakellm.Turn{{Status: 401, ErrorMessage: "Incorrect API key provided"}}, "check the API key"},
		{"404", []fakellm.Turn{{Status: 404, ErrorMessage: "The model `fake-model` does not exist"}}, `model "fake-model" not found`},
		{"429 then ok", []fakellm.Turn{{Status: 429}, {Status: 429}, {Text: "fine"}}, ""},
		{"500 then ok", []fakellm.Turn{{Status: 500}, {Text: "fine"}}, ""},
		{"429 exhausted", []fakellm.Turn{{Status: 429}, {Status: 429}, {Status: 429}, {Status: 429}}, "rate limiting"},
		{"500 exhausted", []fakellm.Turn{{Status: 500}, {Status: 502}, {Status: 503}, {Status: 500}}, "still after retries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakellm.Start(tc.turns...)
			defer srv.Close()
			r := gateway.NewRunner(gateway.RunnerOptions{})
			res, err := r.Run(context.Background(), gateway.RunOptions{Model: srv.Provider(t, openaicompat.Config{}), Input: userInput("q")})
			if tc.want == "" {
				if err != nil || res.Messages[1].Text() != "fine" {
					t.Fatalf("%v %+v", err, res)
				}
				return
			}
			if !errors.Is(err, gateway.ErrProvider) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to say %q", err, tc.want)
			}
			if srv.Remaining() != 0 {
				t.Errorf("%d scripted turns left: retries not bounded as expected", srv.Remaining())
			}
		})
	}
	// Nothing listening.
	p, _ := openaicompat.New(openaicompat.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", MaxRetries: openaicompat.NoRetries})
	_, err := gateway.NewRunner(gateway.RunnerOptions{}).Run(context.Background(), gateway.RunOptions{Model: p, Input: userInput("q")})
	if err == nil || !strings.Contains(err.Error(), "cannot reach the model provider at http://127.0.0.1:1/v1") {
		t.Errorf("unreachable: %v", err)
	}
}

func TestNoModelConfigured(t *testing.T) {
	r := gateway.NewRunner(gateway.RunnerOptions{})
	var ev events
	res, err := r.Run(context.Background(), gateway.RunOptions{Input: userInput("hello"), Sink: ev.sink})
	if err != nil || res.Stop != gateway.StopEndTurn {
		t.Fatal(err, res.Stop)
	}
	if got := ev.text(gateway.EventText); got != gateway.DefaultNoModelMessage {
		t.Errorf("message %q", got)
	}
	var own events
	r = gateway.NewRunner(gateway.RunnerOptions{NoModelMessage: "Set one up."})
	if _, err := r.Run(context.Background(), gateway.RunOptions{Input: userInput("hello"), Sink: own.sink}); err != nil || own.text(gateway.EventText) != "Set one up." {
		t.Errorf("the caller's message: %q, %v", own.text(gateway.EventText), err)
	}
}

func TestExecuteDirect(t *testing.T) {
	echo := namedTool("echo")
	echo.AskApproval = true
	acc := tools(echo, namedTool("denied"))
	approvals := 0
	acc.Policy = func(tl gateway.Tool) bool { return tl.Name != "denied" }
	acc.Approver = func(context.Context, gateway.CallInfo, gateway.Tool) (gateway.Decision, error) {
		approvals++
		return gateway.Allow, nil
	}
	r := gateway.NewRunner(gateway.RunnerOptions{})
	var ev events
	res, err := r.Execute(context.Background(), "s", acc, "echo", json.RawMessage(`{}`), ev.sink)
	if err != nil || res.IsError || res.Content[0].Text != "echo" || approvals != 1 {
		t.Fatalf("%+v %v approvals=%d", res, err, approvals)
	}
	var kinds []gateway.EventKind
	for _, e := range ev.all {
		kinds = append(kinds, e.Kind)
	}
	if len(kinds) != 3 || kinds[0] != gateway.EventToolCallStarted || kinds[2] != gateway.EventToolCallFinished {
		t.Errorf("events %v", kinds)
	}
	if _, err := r.Execute(context.Background(), "s", acc, "denied", nil, nil); !errors.Is(err, gateway.ErrToolDenied) {
		t.Errorf("denied: %v", err)
	}
	if _, err := r.Execute(context.Background(), "other-session", tools(namedTool("other")), "echo", nil, nil); !errors.Is(err, gateway.ErrUnknownTool) {
		t.Errorf("a tool that is not in the access given: %v", err)
	}
}

// steppingView is a ToolView that gives its sets one after another, the
// last one from then on: a session whose tools change.
type steppingView struct {
	mu    sync.Mutex
	sets  []*gateway.Toolset
	calls int
}

func (v *steppingView) Current() *gateway.Toolset {
	v.mu.Lock()
	defer v.mu.Unlock()
	ts := v.sets[min(v.calls, len(v.sets)-1)]
	v.calls++
	return ts
}

// TestRunUsesTheAccessGiven pins Run's contract: the model is offered
// exactly the tools of the access passed that its policy allows, read once
// per model call (a change of the view reaches the next model call); a
// call is looked up in the set that model call was offered and decided by
// the access's approver, never by anything the Runner holds.
func TestRunUsesTheAccessGiven(t *testing.T) {
	srv := fakellm.Start(
		fakellm.Turn{ToolCalls: []fakellm.ToolCall{{ID: "1", Name: "first"}, {ID: "2", Name: "second"}, {ID: "3", Name: "hidden"}}},
		fakellm.Turn{ToolCalls: []fakellm.ToolCall{{ID: "4", Name: "first"}, {ID: "5", Name: "second"}}},
		fakellm.Turn{Text: "done"},
	)
	defer srv.Close()
	view := &steppingView{sets: []*gateway.Toolset{
		gateway.NewToolset(nil, []gateway.Tool{namedTool("first"), namedTool("hidden")}),
		gateway.NewToolset(nil, []gateway.Tool{namedTool("second"), namedTool("hidden")}),
	}}
	var approved []string
	acc := gateway.ToolAccess{
		Tools:  view,
		Policy: func(tl gateway.Tool) bool { return tl.Name != "hidden" },
		Approver: func(_ context.Context, c gateway.CallInfo, _ gateway.Tool) (gateway.Decision, error) {
			approved = append(approved, c.ID+"="+c.Name)
			return gateway.Allow, nil
		},
	}
	r := gateway.NewRunner(gateway.RunnerOptions{})
	res, err := r.Run(context.Background(), gateway.RunOptions{Key: "s", Model: srv.Provider(t, openaicompat.Config{}), Input: userInput("go"), ToolAccess: acc})
	if err != nil || res.Stop != gateway.StopEndTurn {
		t.Fatalf("%v %s", err, res.Stop)
	}
	var offered []string
	for _, req := range srv.Requests() {
		var names []string
		for _, tl := range req.Tools {
			names = append(names, tl.Name)
		}
		offered = append(offered, strings.Join(names, ","))
	}
	if got := strings.Join(offered, " | "); got != "first | second | second" {
		t.Errorf("offered per model call: %q", got)
	}
	if got := strings.Join(approved, ","); got != "1=first,5=second" {
		t.Errorf("approver asked for %s, want only the calls of tools offered and allowed", got)
	}
	var results []string
	for _, m := range res.Messages {
		if m.Role == gateway.RoleTool {
			results = append(results, m.ToolCallID+":"+m.Result.ModelText())
		}
	}
	want := []string{"1:first", `2:There is no tool named "second".`, `3:The tool "hidden" is not allowed by policy.`,
		`4:There is no tool named "first".`, "5:second"}
	if strings.Join(results, "|") != strings.Join(want, "|") {
		t.Errorf("results %q, want %q", results, want)
	}
}

// TestToolSeesItsCall: a tool's Execute context names its call.
func TestToolSeesItsCall(t *testing.T) {
	tl := namedTool("who")
	tl.Execute = func(ctx context.Context, _ json.RawMessage, _ func(gateway.Progress)) (gateway.Result, error) {
		c, ok := gateway.CallFrom(ctx)
		if !ok {
			return gateway.ErrorResult("no call"), nil
		}
		return gateway.TextResult(c.ID + " " + c.Name), nil
	}
	r := gateway.NewRunner(gateway.RunnerOptions{})
	res, err := r.Execute(context.Background(), "k", tools(tl), "who", json.RawMessage(`{}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := gateway.PlainText(res.Content); !strings.HasPrefix(got, "call_") || !strings.HasSuffix(got, " who") {
		t.Errorf("the tool saw %q", got)
	}
}
