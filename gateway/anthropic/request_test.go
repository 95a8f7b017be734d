package anthropic_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/anthropic"
	fake "github.com/acpgate/acpgate/internal/testsupport/fake/fakeanthropic"
)

func toolMsg(id, text string) gateway.Message {
	return gateway.Message{Role: gateway.RoleTool, ToolCallID: id, ToolName: "t", Result: &gateway.Result{Content: []gateway.Content{{Type: gateway.ContentText, Text: text}}}}
}

func callMsg(ids ...string) gateway.Message {
	m := gateway.Message{Role: gateway.RoleAssistant}
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, gateway.ToolCall{ID: id, Name: "t", Arguments: json.RawMessage(`{"n":1}`)})
	}
	return m
}

// TestBreakpoints: the last tool, the system prompt and the newest two
// user-side messages carry cache_control, never more than four; the
// newest moves with the conversation and the one before it is where the
// previous request put its newest.
func TestBreakpoints(t *testing.T) {
	t.Parallel()
	turns := make([]fake.Turn, 4)
	for i := range turns {
		turns[i] = fake.Turn{Blocks: []fake.Block{fake.Text("ok")}}
	}
	srv := fake.Start(turns...)
	defer srv.Close()
	p := srv.Provider(t, anthropic.Config{})
	tools := []gateway.ToolSpec{{Name: "a", Parameters: json.RawMessage(`{"type":"object"}`)}, {Name: "b", Parameters: json.RawMessage(`{"type":"object"}`)}, {Name: "t", Parameters: json.RawMessage(`{"type":"object"}`)}}
	conv := []gateway.Message{user("first")}
	mustComplete(t, p, gateway.ModelRequest{System: "sys", Tools: tools, Messages: conv})
	conv = append(conv, callMsg("c1", "c2"), toolMsg("c1", "one"), toolMsg("c2", "two"))
	mustComplete(t, p, gateway.ModelRequest{System: "sys", Tools: tools, Messages: conv})
	conv = append(conv, gateway.Message{Role: gateway.RoleAssistant, Content: []gateway.Content{{Type: gateway.ContentText, Text: "done"}}}, user("again"))
	mustComplete(t, p, gateway.ModelRequest{System: "sys", Tools: tools, Messages: conv})
	mustComplete(t, p, gateway.ModelRequest{Messages: []gateway.Message{user("bare")}})

	reqs := srv.Requests()
	for i, want := range [][]string{
		{"tools[2]", "system[0]", "messages[0].content[0]"},
		{"tools[2]", "system[0]", "messages[0].content[0]", "messages[2].content[1]"},
		{"tools[2]", "system[0]", "messages[2].content[1]", "messages[4].content[0]"},
		{"messages[0].content[0]"},
	} {
		got := reqs[i].Breakpoints()
		if !slices.Equal(got, want) || len(got) > anthropic.MaxBreakpoints {
			t.Errorf("request %d: breakpoints %v, want %v", i, got, want)
		}
	}
	// The results of one answer's calls are one user message, in order.
	res := reqs[1].Messages[2].Blocks()
	if len(res) != 2 || res[0]["tool_use_id"] != "c1" || res[1]["tool_use_id"] != "c2" {
		t.Errorf("tool results %v", res)
	}
	// The block the previous request marked is sent the same.
	if a, b := string(reqs[1].Messages[2].Content[1]), string(reqs[2].Messages[2].Content[1]); a != b {
		t.Errorf("the earlier breakpoint's block changed:\n%s\n%s", a, b)
	}
}

// TestHistoryOfAnotherProvider: a message made by another provider is
// sent from its text and calls (its thinking has no signature: left
// out); a call without a result gets one, a result without its call
// becomes text, and images the API takes are images.
func TestHistoryOfAnotherProvider(t *testing.T) {
	t.Parallel()
	srv := fake.Start(fake.Turn{Blocks: []fake.Block{fake.Text("ok")}})
	defer srv.Close()
	p := srv.Provider(t, anthropic.Config{})
	hist := []gateway.Message{
		{Role: gateway.RoleUser, Content: []gateway.Content{{Type: gateway.ContentText, Text: "look"}, {Type: gateway.ContentImage, MIMEType: "image/png", Data: "aGk="},
			{Type: gateway.ContentImage, MIMEType: "image/bmp", Data: "Qk0="}, {Type: gateway.ContentText}}},
		{Role: gateway.RoleAssistant, Thinking: "unsigned thoughts", Content: []gateway.Content{{Type: gateway.ContentText, Text: "calling"}},
			ToolCalls: []gateway.ToolCall{{ID: "c1", Name: "t", Arguments: json.RawMessage(`{"n":1}`)}, {ID: "c2", Name: "t", Arguments: json.RawMessage(`not json`)}}},
		toolMsg("c1", "one"),
		toolMsg("zz", "orphan"),
		user("next"),
	}
	mustComplete(t, p, gateway.ModelRequest{Messages: hist})
	msgs := srv.Requests()[0].Messages
	if len(msgs) != 3 {
		t.Fatalf("messages %s", mustJSON(t, msgs))
	}
	u := msgs[0].Blocks()
	img, _ := u[1]["source"].(map[string]any)
	if len(u) != 3 || u[1]["type"] != "image" || img["media_type"] != "image/png" || img["data"] != "aGk=" || u[2]["type"] != "text" || !strings.Contains(u[2]["text"].(string), "image/bmp") {
		t.Errorf("user blocks %v", u)
	}
	a := msgs[1].Blocks()
	if len(a) != 3 || a[0]["text"] != "calling" || a[1]["type"] != "tool_use" || a[1]["id"] != "c1" || !reflect.DeepEqual(a[2]["input"], map[string]any{}) {
		t.Errorf("assistant blocks %v", a)
	}
	if strings.Contains(string(mustJSON(t, msgs[1])), "unsigned") {
		t.Error("unsigned thinking was sent")
	}
	r := msgs[2].Blocks()
	if len(r) != 4 || r[0]["tool_use_id"] != "c1" || r[1]["tool_use_id"] != "c2" || r[1]["is_error"] != true ||
		r[2]["type"] != "text" || !strings.Contains(r[2]["text"].(string), "orphan") || r[3]["text"] != "next" {
		t.Errorf("user-side blocks %v", r)
	}
}

// TestThinkingSettings: adaptive, a budget (max_tokens made room for
// it), off; none when a tool call is forced (the API refuses both).
func TestThinkingSettings(t *testing.T) {
	t.Parallel()
	tools := []gateway.ToolSpec{{Name: "t", Parameters: json.RawMessage(`{"type":"object"}`)}}
	for _, tc := range []struct {
		name      string
		cfg       anthropic.Config
		req       gateway.ModelRequest
		thinking  string
		maxTokens int
	}{
		{"adaptive", anthropic.Config{Thinking: anthropic.ThinkingAdaptive}, gateway.ModelRequest{}, `{"type":"adaptive"}`, anthropic.DefaultMaxTokens},
		{"budget", anthropic.Config{ThinkingBudget: 20000}, gateway.ModelRequest{}, `{"budget_tokens":20000,"type":"enabled"}`, 20000 + anthropic.DefaultMaxTokens},
		{"budget over the request's bound", anthropic.Config{ThinkingBudget: 2000}, gateway.ModelRequest{MaxTokens: 1500}, ``, 1500},
		{"off", anthropic.Config{Thinking: anthropic.ThinkingOff}, gateway.ModelRequest{}, `{"type":"disabled"}`, anthropic.DefaultMaxTokens},
		{"forced tool", anthropic.Config{Thinking: anthropic.ThinkingAdaptive}, gateway.ModelRequest{Tools: tools, ToolChoice: gateway.ToolChoiceRequired}, ``, anthropic.DefaultMaxTokens},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := fake.Start(fake.Turn{Blocks: []fake.Block{fake.Text("ok")}})
			defer srv.Close()
			tc.req.Messages = []gateway.Message{user("x")}
			mustComplete(t, srv.Provider(t, tc.cfg), tc.req)
			r := srv.Requests()[0]
			if string(r.Thinking) != tc.thinking || r.MaxTokens != tc.maxTokens {
				t.Errorf("thinking %s, max_tokens %d", r.Thinking, r.MaxTokens)
			}
			if tc.req.ToolChoice == gateway.ToolChoiceRequired && string(r.ToolChoice) != `{"type":"any"}` {
				t.Errorf("tool_choice %s", r.ToolChoice)
			}
		})
	}
}

func TestListModels(t *testing.T) {
	t.Parallel()
	srv := fake.Start()
	defer srv.Close()
	srv.RequireKey("sk-ant-test")
	srv.SetModels(fake.Model{ID: "claude-a", DisplayName: "Claude A"}, fake.Model{ID: "claude-b", DisplayName: "Claude B"})
	models, err := srv.Provider(t, anthropic.Config{APIKey: "sk-ant-test"}).ListModels(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := []gateway.ModelInfo{{ID: "claude-a", Name: "Claude A"}, {ID: "claude-b", Name: "Claude B"}}; !reflect.DeepEqual(models, want) {
		t.Errorf("models %+v", models)
	}
	if h := srv.ModelsRequests()[0]; h.Get("Anthropic-Version") == "" {
		t.Errorf("headers %v", h)
	}
	if _, err := srv.Provider(t, anthropic.Config{APIKey: "wrong"}).ListModels(t.Context()); err == nil || !strings.Contains(err.Error(), "check the API key") {
		t.Errorf("a wrong key: %v", err)
	}
}
