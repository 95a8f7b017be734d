package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/anthropic"
	fake "github.com/acpgate/acpgate/internal/testsupport/fake/fakeanthropic"
)

func user(s string) gateway.Message {
	return gateway.Message{Role: gateway.RoleUser, Content: []gateway.Content{{Type: gateway.ContentText, Text: s}}}
}

// complete runs one request against p, gathering the deltas.
func complete(t *testing.T, p gateway.Provider, req gateway.ModelRequest) (gateway.ModelResponse, []gateway.Delta, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var deltas []gateway.Delta
	resp, err := p.Complete(ctx, req, func(d gateway.Delta) { deltas = append(deltas, d) })
	return resp, deltas, err
}

// mustComplete is complete for a request that must succeed.
func mustComplete(t *testing.T, p gateway.Provider, req gateway.ModelRequest) (gateway.ModelResponse, []gateway.Delta) {
	t.Helper()
	resp, deltas, err := complete(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	return resp, deltas
}

// decoded is v as generic JSON, for comparisons that ignore formatting.
func decoded(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return v
}

func TestStreamingText(t *testing.T) {
	t.Parallel()
	srv := fake.Start(fake.Turn{Blocks: []fake.Block{fake.Text("Hello there, ünïcode friend.")},
		Usage: &fake.Usage{InputTokens: 7, OutputTokens: 9, CacheReadInputTokens: 1000, CacheCreationInputTokens: 200}})
	defer srv.Close()
	srv.RequireKey("sk-ant-test")
	p := srv.Provider(t, anthropic.Config{APIKey: "sk-ant-test", Headers: map[string]string{"X-Title": "acpgate-test"}})
	resp, deltas := mustComplete(t, p, gateway.ModelRequest{System: "Be brief.", Messages: []gateway.Message{user("hi")}})
	var streamed strings.Builder
	for _, d := range deltas {
		streamed.WriteString(d.Text)
	}
	if len(deltas) < 2 || streamed.String() != "Hello there, ünïcode friend." {
		t.Errorf("deltas %+v", deltas)
	}
	if resp.Message.Text() != "Hello there, ünïcode friend." || resp.Stop != gateway.StopEndTurn || resp.Model != fake.DefaultModel || resp.Message.Native != nil {
		t.Errorf("response %+v", resp)
	}
	if want := (gateway.Usage{InputTokens: 7, OutputTokens: 9, CacheReadTokens: 1000, CacheWriteTokens: 200}); resp.Usage != want {
		t.Errorf("usage %+v, want %+v", resp.Usage, want)
	}
	req := srv.Requests()[0]
	if req.Header.Get("X-Title") != "acpgate-test" || req.Header.Get("Anthropic-Version") == "" || !req.Stream {
		t.Errorf("headers %v, stream %v", req.Header, req.Stream)
	}
	if req.MaxTokens != anthropic.DefaultMaxTokens || len(req.System) != 1 || !strings.Contains(string(req.System[0]), `"text":"Be brief."`) {
		t.Errorf("max_tokens %d, system %s", req.MaxTokens, req.System)
	}
	if len(req.Thinking) != 0 || len(req.ToolChoice) != 0 {
		t.Errorf("thinking %s, tool_choice %s sent unasked", req.Thinking, req.ToolChoice)
	}
}

func TestTwoToolCallsInOneAnswer(t *testing.T) {
	t.Parallel()
	srv := fake.Start(fake.Turn{Blocks: []fake.Block{
		fake.Text("Let me look."),
		fake.ToolUse("toolu_1", "read_file", `{"path":"/a/b","deep":{"x":[1,2,3]}}`),
		fake.ToolUse("toolu_2", "list", ``),
	}})
	defer srv.Close()
	p := srv.Provider(t, anthropic.Config{})
	tools := []gateway.ToolSpec{{Name: "read_file", Description: "Reads.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		{Name: "list", Parameters: json.RawMessage(`{"type":"object"}`)}}
	resp, _ := mustComplete(t, p, gateway.ModelRequest{Messages: []gateway.Message{user("look")}, Tools: tools})
	calls := resp.Message.ToolCalls
	if resp.Stop != gateway.StopToolUse || len(calls) != 2 || resp.Message.Text() != "Let me look." {
		t.Fatalf("response %+v", resp)
	}
	if calls[0].ID != "toolu_1" || calls[0].Name != "read_file" || string(calls[0].Arguments) != `{"path":"/a/b","deep":{"x":[1,2,3]}}` {
		t.Errorf("first call %+v (%s)", calls[0], calls[0].Arguments)
	}
	if calls[1].ID != "toolu_2" || string(calls[1].Arguments) != `{}` {
		t.Errorf("second call %+v (%s)", calls[1], calls[1].Arguments)
	}
	if resp.Message.Native != nil {
		t.Errorf("a text and tool calls need no native content: %s", resp.Message.Native.Content)
	}
	// The schema is sent as it is, not flattened.
	req := srv.Requests()[0]
	if got := decoded(t, req.Tools[0]).(map[string]any)["input_schema"]; !reflect.DeepEqual(got, decoded(t, tools[0].Parameters)) {
		t.Errorf("input_schema %v", got)
	}
}

// TestThinkingRoundTrip: thinking (with its signature) and redacted
// thinking are shown as thoughts and kept; the next request sends the
// blocks back exactly, also after the history went through JSON (a
// stored session), and the same bytes every time.
func TestThinkingRoundTrip(t *testing.T) {
	t.Parallel()
	srv := fake.Start(
		fake.Turn{Blocks: []fake.Block{
			fake.Thinking("I should read the file <first>.", "sig-ABC=="),
			{Type: "redacted_thinking", Data: "ENCRYPTED=="},
			fake.ToolUse("toolu_9", "read_file", `{"path":"x"}`),
		}},
		fake.Turn{Blocks: []fake.Block{fake.Text("It says hi.")}},
		fake.Turn{Blocks: []fake.Block{fake.Text("Still here.")}},
	)
	defer srv.Close()
	p := srv.Provider(t, anthropic.Config{Thinking: anthropic.ThinkingAdaptive})
	hist := []gateway.Message{user("read x")}
	resp, deltas := mustComplete(t, p, gateway.ModelRequest{Messages: hist})
	var thought strings.Builder
	for _, d := range deltas {
		thought.WriteString(d.Thinking)
	}
	if thought.String() != "I should read the file <first>." || resp.Message.Thinking != thought.String() {
		t.Errorf("thinking %q, message %q", thought.String(), resp.Message.Thinking)
	}
	if resp.Message.Native == nil || resp.Message.Native.Provider != anthropic.Format {
		t.Fatalf("no native content: %+v", resp.Message)
	}
	returned := []any{
		map[string]any{"type": "thinking", "thinking": "I should read the file <first>.", "signature": "sig-ABC=="},
		map[string]any{"type": "redacted_thinking", "data": "ENCRYPTED=="},
		map[string]any{"type": "tool_use", "id": "toolu_9", "name": "read_file", "input": map[string]any{"path": "x"}},
	}
	if got := decoded(t, resp.Message.Native.Content); !reflect.DeepEqual(got, returned) {
		t.Fatalf("native content %s", resp.Message.Native.Content)
	}
	hist = append(hist, resp.Message, gateway.Message{Role: gateway.RoleTool, ToolCallID: "toolu_9", ToolName: "read_file", Result: &gateway.Result{Content: []gateway.Content{{Type: gateway.ContentText, Text: "hi"}}}})
	mustComplete(t, p, gateway.ModelRequest{Messages: hist})

	// Stored and loaded again.
	stored, err := json.Marshal(gateway.History(hist))
	if err != nil {
		t.Fatal(err)
	}
	var loaded gateway.History
	if err := json.Unmarshal(stored, &loaded); err != nil {
		t.Fatal(err)
	}
	if again, _ := json.Marshal(loaded); string(again) != string(stored) {
		t.Errorf("the history does not round-trip:\n%s\n%s", stored, again)
	}
	loaded = append(loaded, gateway.Message{Role: gateway.RoleAssistant, Content: []gateway.Content{{Type: gateway.ContentText, Text: "It says hi."}}}, user("more?"))
	mustComplete(t, p, gateway.ModelRequest{Messages: loaded})

	reqs := srv.Requests()
	a1, a2 := reqs[1].Messages[1], reqs[2].Messages[1]
	if a1.Role != "assistant" || !reflect.DeepEqual(decoded(t, mustJSON(t, a1.Content)), returned) {
		t.Errorf("assistant message sent back: %s", mustJSON(t, a1.Content))
	}
	if string(mustJSON(t, a1.Content)) != string(mustJSON(t, a2.Content)) {
		t.Errorf("the blocks changed between requests:\n%s\n%s", mustJSON(t, a1.Content), mustJSON(t, a2.Content))
	}
	if res := reqs[1].Messages[2].Blocks()[0]; res["type"] != "tool_result" || res["tool_use_id"] != "toolu_9" {
		t.Errorf("tool result %v", res)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPauseTurnContinued: a paused answer is sent back as it is and the
// model goes on; the message holds the blocks of both parts and the usage
// is summed.
func TestPauseTurnContinued(t *testing.T) {
	t.Parallel()
	search := json.RawMessage(`{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"go"}}`)
	srv := fake.Start(
		fake.Turn{Blocks: []fake.Block{fake.Text("Searching."), {Type: "server_tool_use", Raw: search}}, StopReason: "pause_turn",
			Usage: &fake.Usage{InputTokens: 10, OutputTokens: 3}},
		fake.Turn{Blocks: []fake.Block{fake.Text(" Found it.")}, Usage: &fake.Usage{InputTokens: 12, OutputTokens: 4}},
	)
	defer srv.Close()
	p := srv.Provider(t, anthropic.Config{})
	resp, _ := mustComplete(t, p, gateway.ModelRequest{Messages: []gateway.Message{user("search go")}})
	if resp.Stop != gateway.StopEndTurn || resp.Message.Text() != "Searching. Found it." {
		t.Errorf("response %+v", resp)
	}
	if resp.Usage != (gateway.Usage{InputTokens: 22, OutputTokens: 7}) {
		t.Errorf("usage %+v", resp.Usage)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || len(reqs[1].Messages) != 2 || reqs[1].Messages[1].Role != "assistant" {
		t.Fatalf("continuation %s", mustJSON(t, reqs[len(reqs)-1].Messages))
	}
	want := []any{map[string]any{"type": "text", "text": "Searching."}, decoded(t, search)}
	if got := decoded(t, mustJSON(t, reqs[1].Messages[1].Content)); !reflect.DeepEqual(got, want) {
		t.Errorf("paused content sent back %v", got)
	}
	if resp.Message.Native == nil || len(decoded(t, resp.Message.Native.Content).([]any)) != 3 {
		t.Errorf("native content of the whole answer: %+v", resp.Message.Native)
	}
}

func TestStopReasons(t *testing.T) {
	t.Parallel()
	for stop, want := range map[string]gateway.StopReason{
		"end_turn": gateway.StopEndTurn, "stop_sequence": gateway.StopEndTurn, "max_tokens": gateway.StopMaxTokens,
		"refusal": gateway.StopRefusal, "model_context_window_exceeded": gateway.StopMaxTokens,
	} {
		srv := fake.Start(fake.Turn{Blocks: []fake.Block{fake.Text("partial")}, StopReason: stop})
		resp, _ := mustComplete(t, srv.Provider(t, anthropic.Config{}), gateway.ModelRequest{Messages: []gateway.Message{user("x")}, Stop: []string{"END"}})
		if resp.Stop != want || resp.Message.Text() != "partial" {
			t.Errorf("%s: %+v", stop, resp)
		}
		if got := srv.Requests()[0].StopSequences; len(got) != 1 || got[0] != "END" {
			t.Errorf("stop_sequences %v", got)
		}
		srv.Close()
	}
}

// TestRetries: 529 and 429 are retried (retry-after honoured); what still
// fails after the retries says so.
func TestRetries(t *testing.T) {
	t.Parallel()
	ok := fake.Turn{Blocks: []fake.Block{fake.Text("fine")}}
	t.Run("529 then success", func(t *testing.T) {
		t.Parallel()
		srv := fake.Start(fake.Turn{Status: 529}, ok)
		defer srv.Close()
		resp, _ := mustComplete(t, srv.Provider(t, anthropic.Config{}), gateway.ModelRequest{Messages: []gateway.Message{user("x")}})
		if resp.Message.Text() != "fine" || len(srv.Requests()) != 2 {
			t.Errorf("%+v after %d requests", resp, len(srv.Requests()))
		}
	})
	t.Run("429 with retry-after", func(t *testing.T) {
		t.Parallel()
		srv := fake.Start(fake.Turn{Status: 429, Header: http.Header{"Retry-After-Ms": {"300"}}}, ok)
		defer srv.Close()
		start := time.Now()
		resp, _ := mustComplete(t, srv.Provider(t, anthropic.Config{}), gateway.ModelRequest{Messages: []gateway.Message{user("x")}})
		if resp.Message.Text() != "fine" || time.Since(start) < 300*time.Millisecond {
			t.Errorf("%+v after %v", resp, time.Since(start))
		}
	})
	t.Run("overloaded after the retries", func(t *testing.T) {
		t.Parallel()
		srv := fake.Start(fake.Turn{Status: 529}, fake.Turn{Status: 529}, fake.Turn{Status: 529})
		defer srv.Close()
		_, _, err := complete(t, srv.Provider(t, anthropic.Config{MaxRetries: 2}), gateway.ModelRequest{Messages: []gateway.Message{user("x")}})
		if !errors.Is(err, gateway.ErrProvider) || !strings.Contains(err.Error(), "overloaded") || !strings.Contains(err.Error(), "after retries") || len(srv.Requests()) != 3 {
			t.Errorf("%v after %d requests", err, len(srv.Requests()))
		}
	})
	t.Run("no retries", func(t *testing.T) {
		t.Parallel()
		srv := fake.Start(fake.Turn{Status: 500}, ok)
		defer srv.Close()
		_, _, err := complete(t, srv.Provider(t, anthropic.Config{MaxRetries: anthropic.NoRetries}), gateway.ModelRequest{Messages: []gateway.Message{user("x")}})
		if err == nil || len(srv.Requests()) != 1 {
			t.Errorf("%v after %d requests", err, len(srv.Requests()))
		}
	})
}

// TestErrors: each failure says what to check; a prompt too long for the
// window is ErrContextLength, other bad requests are not.
func TestErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		turn     fake.Turn
		want     string
		tooLong  bool
		nRequest int
	}{
		{"401", fake.Turn{Status: 401}, "check the API key (ANTHROPIC_API_KEY", false, 1},
		{"404", fake.Turn{Status: 404, ErrorMessage: "model: claude-fake"}, `model "claude-fake" not found`, false, 1},
		{"prompt too long", fake.Turn{Status: 400, ErrorMessage: "prompt is too long: 250000 tokens > 200000 maximum"}, "context window", true, 1},
		{"413", fake.Turn{Status: 413}, "context window", true, 1},
		{"other 400", fake.Turn{Status: 400, ErrorMessage: "messages: bad"}, "answered 400: messages: bad", false, 1},
		{"billing", fake.Turn{Status: 400, ErrorType: "billing_error", ErrorMessage: "no credit"}, "check the account's credit", false, 1},
		{"stream error", fake.Turn{StreamError: "overloaded_error"}, "broke off (overloaded_error", false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := fake.Start(tc.turn)
			defer srv.Close()
			_, _, err := complete(t, srv.Provider(t, anthropic.Config{APIKey: "sk-ant-secret"}), gateway.ModelRequest{Messages: []gateway.Message{user("x")}})
			if !errors.Is(err, gateway.ErrProvider) || !strings.Contains(err.Error(), tc.want) || errors.Is(err, gateway.ErrContextLength) != tc.tooLong {
				t.Errorf("error %v", err)
			}
			if err != nil && strings.Contains(err.Error(), "sk-ant-secret") {
				t.Errorf("the key is in the error: %v", err)
			}
			if n := len(srv.Requests()); n != tc.nRequest {
				t.Errorf("%d requests", n)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + ln.Addr().String()
		ln.Close()
		p, err := anthropic.New(anthropic.Config{BaseURL: url, Model: "m", MaxRetries: anthropic.NoRetries})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := complete(t, p, gateway.ModelRequest{Messages: []gateway.Message{user("x")}}); !errors.Is(err, gateway.ErrProvider) || !strings.Contains(err.Error(), "cannot reach") {
			t.Errorf("error %v", err)
		}
	})
}

func TestNewChecksItsConfig(t *testing.T) {
	t.Parallel()
	for _, cfg := range []anthropic.Config{{}, {Model: "m", Thinking: "lots"}, {Model: "m", ThinkingBudget: 100}} {
		if _, err := anthropic.New(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	for in, want := range map[string]string{"": gateway.AnthropicBaseURL, "https://api.anthropic.com/v1/": "https://api.anthropic.com", "http://127.0.0.1:9/x/": "http://127.0.0.1:9/x"} {
		if got := gateway.AnthropicRootURL(in); got != want {
			t.Errorf("AnthropicRootURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEnvironmentNotRead: the SDK's credential chain is off: an empty key
// sends none, whatever ANTHROPIC_API_KEY says.
func TestEnvironmentNotRead(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	srv := fake.Start(fake.Turn{Blocks: []fake.Block{fake.Text("ok")}})
	defer srv.Close()
	mustComplete(t, srv.Provider(t, anthropic.Config{Headers: map[string]string{"X-Gateway-Token": "t"}}), gateway.ModelRequest{Messages: []gateway.Message{user("x")}})
	h := srv.Requests()[0].Header
	if h.Get("X-Api-Key") != "" || h.Get("Authorization") != "" || h.Get("X-Gateway-Token") != "t" {
		t.Errorf("headers %v", h)
	}
}
