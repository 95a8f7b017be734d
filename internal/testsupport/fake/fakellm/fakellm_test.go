package fakellm_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

// post sends a chat completion request body and returns the response.
func post(t *testing.T, ctx context.Context, url string, body any) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/chat/completions", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer sk-test")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func decodeBody(t *testing.T, res *http.Response) map[string]any {
	t.Helper()
	defer res.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// readSSE returns the data payloads of an event stream, in order.
func readSSE(t *testing.T, res *http.Response) []string {
	t.Helper()
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q", ct)
	}
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(raw), "data: [DONE]\n\n") {
		t.Fatalf("stream does not end with [DONE]: %q", raw)
	}
	var out []string
	for _, ev := range strings.Split(strings.TrimSuffix(string(raw), "\n\n"), "\n\n") {
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || strings.Contains(data, "\n") {
			t.Fatalf("bad event %q", ev)
		}
		out = append(out, data)
	}
	return out
}

type chunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role             *string `json:"role"`
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			Refusal          *string `json:"refusal"`
			ToolCalls        []struct {
				Index    *int    `json:"index"`
				ID       *string `json:"id"`
				Type     *string `json:"type"`
				Function struct {
					Name      *string `json:"name"`
					Arguments *string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
}

// streamChunks posts a streaming request and decodes its chunks.
func streamChunks(t *testing.T, srv *fakellm.Server, body map[string]any) []chunk {
	t.Helper()
	body["stream"] = true
	res := post(t, context.Background(), srv.URL, body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	data := readSSE(t, res)
	var out []chunk
	for _, d := range data[:len(data)-1] {
		// Each chunk must also be a JSON object with "choices" present.
		var probe map[string]json.RawMessage
		if err := json.Unmarshal([]byte(d), &probe); err != nil {
			t.Fatalf("chunk %q: %v", d, err)
		}
		if _, ok := probe["choices"]; !ok {
			t.Fatalf("chunk without choices: %s", d)
		}
		if fr, ok := probe["finish_reason"]; ok {
			t.Fatalf("finish_reason at top level: %s", fr)
		}
		var c chunk
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	for i, c := range out {
		if c.ID != out[0].ID || c.Created != out[0].Created || c.Object != "chat.completion.chunk" || c.ID == "" {
			t.Fatalf("chunk %d: inconsistent id/created/object: %+v", i, c)
		}
	}
	return out
}

func userMsg(text string) map[string]any { return map[string]any{"role": "user", "content": text} }

func TestNonStreamingText(t *testing.T) {
	srv := fakellm.Start(fakellm.Turn{Text: "Hello, world!", Reasoning: "thinking"})
	defer srv.Close()
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") || !strings.HasSuffix(srv.URL, "/v1") {
		t.Fatalf("URL = %q", srv.URL)
	}

	res := post(t, context.Background(), srv.URL, map[string]any{
		"model": "gpt-test",
		"messages": []any{
			map[string]any{"role": "system", "content": "be brief"},
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": "look at "},
				map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,AAAA"}},
				map[string]any{"type": "text", "text": "this"},
			}},
			map[string]any{"role": "assistant", "content": nil, "reasoning_content": "hmm", "tool_calls": []any{
				map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "read", "arguments": `{"p":1}`}},
			}},
			map[string]any{"role": "tool", "tool_call_id": "call_1", "content": "file text"},
		},
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{
			"name": "read", "description": "Read a file", "parameters": map[string]any{"type": "object"},
		}}},
		"tool_choice": "auto",
	})
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, content type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	var got struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		Model   string `json:"model"`
		Choices []struct {
			Index        int    `json:"index"`
			FinishReason string `json:"finish_reason"`
			Message      struct {
				Role             string          `json:"role"`
				Content          *string         `json:"content"`
				Refusal          *string         `json:"refusal"`
				ReasoningContent string          `json:"reasoning_content"`
				ToolCalls        json.RawMessage `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
			TotalTokens      int `json:"total_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got.Object != "chat.completion" || got.ID == "" || got.Created == 0 || got.Model != "gpt-test" || len(got.Choices) != 1 {
		t.Fatalf("bad completion: %+v", got)
	}
	c := got.Choices[0]
	if c.FinishReason != "stop" || c.Message.Role != "assistant" || c.Message.Content == nil ||
		*c.Message.Content != "Hello, world!" || c.Message.Refusal != nil || c.Message.ReasoningContent != "thinking" ||
		c.Message.ToolCalls != nil {
		t.Fatalf("bad choice: %+v", c)
	}
	if got.Usage.PromptTokens != 10 || got.Usage.CompletionTokens != 5 || got.Usage.TotalTokens != 15 {
		t.Fatalf("usage = %+v", got.Usage)
	}

	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Model != "gpt-test" || r.Stream || r.Header.Get("Authorization") != "Bearer sk-test" || string(r.ToolChoice) != `"auto"` {
		t.Fatalf("bad request: %+v", r)
	}
	if len(r.Messages) != 4 {
		t.Fatalf("messages: %+v", r.Messages)
	}
	if m := r.Messages[0]; m.Role != "system" || m.Content != "be brief" || m.Parts != nil {
		t.Fatalf("system message: %+v", m)
	}
	if m := r.Messages[1]; m.Role != "user" || m.Content != "look at this" || len(m.Parts) != 3 ||
		!strings.Contains(string(m.Parts[1]), "image_url") {
		t.Fatalf("user message: %+v", m)
	}
	wantCalls := []fakellm.ToolCall{{ID: "call_1", Name: "read", Arguments: `{"p":1}`}}
	if m := r.Messages[2]; m.Role != "assistant" || m.Content != "" || m.ReasoningContent != "hmm" || !reflect.DeepEqual(m.ToolCalls, wantCalls) {
		t.Fatalf("assistant message: %+v", m)
	}
	if m := r.Messages[3]; m.Role != "tool" || m.ToolCallID != "call_1" || m.Content != "file text" {
		t.Fatalf("tool message: %+v", m)
	}
	if len(r.Tools) != 1 || r.Tools[0].Name != "read" || r.Tools[0].Description != "Read a file" ||
		string(r.Tools[0].Parameters) != `{"type":"object"}` {
		t.Fatalf("tools: %+v", r.Tools)
	}
	var raw map[string]any
	if err := json.Unmarshal(r.Raw, &raw); err != nil || raw["model"] != "gpt-test" {
		t.Fatalf("raw: %s (%v)", r.Raw, err)
	}
	if srv.Remaining() != 0 {
		t.Fatalf("remaining %d", srv.Remaining())
	}
}

func TestNonStreamingToolCallsAndRefusal(t *testing.T) {
	srv := fakellm.Start(
		fakellm.Turn{ToolCalls: []fakellm.ToolCall{
			{ID: "call_a", Name: "read", Arguments: `{"path":"a.txt"}`},
			{Name: "list", Arguments: `{}`},
		}, Usage: &fakellm.Usage{PromptTokens: 100, CompletionTokens: 7}},
		fakellm.Turn{Refusal: "I can't help with that."},
		fakellm.Turn{Text: "cut", FinishReason: "length"},
	)
	defer srv.Close()

	m := decodeBody(t, post(t, context.Background(), srv.URL, map[string]any{"model": "m", "messages": []any{userMsg("hi")}}))
	choice := m["choices"].([]any)[0].(map[string]any)
	msg := choice["message"].(map[string]any)
	if choice["finish_reason"] != "tool_calls" || msg["content"] != nil {
		t.Fatalf("choice: %v", choice)
	}
	if _, ok := msg["content"]; !ok {
		t.Fatal("content must be present (null)")
	}
	calls := msg["tool_calls"].([]any)
	want := []any{
		map[string]any{"id": "call_a", "type": "function", "function": map[string]any{"name": "read", "arguments": `{"path":"a.txt"}`}},
		map[string]any{"id": "call_1_1", "type": "function", "function": map[string]any{"name": "list", "arguments": `{}`}},
	}
	if !reflect.DeepEqual(calls, want) {
		t.Fatalf("tool calls: %v", calls)
	}
	if u := m["usage"].(map[string]any); u["prompt_tokens"] != 100.0 || u["completion_tokens"] != 7.0 || u["total_tokens"] != 107.0 {
		t.Fatalf("usage: %v", u)
	}

	m = decodeBody(t, post(t, context.Background(), srv.URL, map[string]any{"messages": []any{userMsg("bad")}}))
	choice = m["choices"].([]any)[0].(map[string]any)
	msg = choice["message"].(map[string]any)
	if msg["refusal"] != "I can't help with that." || msg["content"] != nil || choice["finish_reason"] != "stop" || m["model"] != fakellm.DefaultModel {
		t.Fatalf("refusal: %v", m)
	}

	m = decodeBody(t, post(t, context.Background(), srv.URL, map[string]any{"messages": []any{userMsg("long")}}))
	choice = m["choices"].([]any)[0].(map[string]any)
	if choice["finish_reason"] != "length" || choice["message"].(map[string]any)["content"] != "cut" {
		t.Fatalf("length: %v", m)
	}
}

func TestStreamingTextWithReasoningAndUsage(t *testing.T) {
	text := "Héllo wörld, this is ünïcode ✓ text"
	srv := fakellm.Start(fakellm.Turn{Text: text, Reasoning: "Let me think."})
	defer srv.Close()

	chunks := streamChunks(t, srv, map[string]any{
		"model": "gpt-stream", "messages": []any{userMsg("hi")},
		"stream_options": map[string]any{"include_usage": true},
	})
	if n := len(chunks); n < 10 {
		t.Fatalf("only %d chunks", n)
	}
	var content, reasoning strings.Builder
	sawContent := false
	for i, c := range chunks[:len(chunks)-1] {
		if c.Model != "gpt-stream" || c.Usage != nil || len(c.Choices) != 1 || c.Choices[0].Index != 0 {
			t.Fatalf("chunk %d: %+v", i, c)
		}
		d := c.Choices[0].Delta
		if (i == 0) != (d.Role != nil) || (d.Role != nil && *d.Role != "assistant") {
			t.Fatalf("chunk %d: role %v", i, d.Role)
		}
		if d.ReasoningContent != nil {
			if sawContent {
				t.Fatal("reasoning after content")
			}
			reasoning.WriteString(*d.ReasoningContent)
		}
		if d.Content != nil {
			sawContent = true
			if len(*d.Content) > 5 && len([]rune(*d.Content)) > 1 {
				t.Fatalf("piece %q too long", *d.Content)
			}
			content.WriteString(*d.Content)
		}
		last := i == len(chunks)-2
		if last != (c.Choices[0].FinishReason != nil) {
			t.Fatalf("chunk %d: finish_reason %v", i, c.Choices[0].FinishReason)
		}
		if last && (*c.Choices[0].FinishReason != "stop" || d.Content != nil || d.Role != nil) {
			t.Fatalf("final chunk: %+v", c)
		}
	}
	if content.String() != text || reasoning.String() != "Let me think." {
		t.Fatalf("content %q reasoning %q", content.String(), reasoning.String())
	}
	u := chunks[len(chunks)-1]
	if u.Choices == nil || len(u.Choices) != 0 || u.Usage == nil || u.Usage.PromptTokens != 10 || u.Usage.CompletionTokens != 5 || u.Usage.TotalTokens != 15 {
		t.Fatalf("usage chunk: %+v", u)
	}
	if r := srv.Requests()[0]; !r.Stream || !r.IncludeUsage {
		t.Fatalf("request: %+v", r)
	}
}

func TestStreamingWithoutUsageAndInlineFinish(t *testing.T) {
	srv := fakellm.Start(
		fakellm.Turn{Text: "abcdefghij", InlineFinish: true, FinishReason: "length"},
		fakellm.Turn{},
		fakellm.Turn{Refusal: "no way, sorry"},
	)
	defer srv.Close()

	chunks := streamChunks(t, srv, map[string]any{"messages": []any{userMsg("hi")}})
	if len(chunks) != 2 {
		t.Fatalf("%d chunks", len(chunks))
	}
	if d := chunks[0].Choices[0].Delta; d.Role == nil || *d.Content != "abcde" || chunks[0].Choices[0].FinishReason != nil {
		t.Fatalf("first: %+v", chunks[0])
	}
	if c := chunks[1].Choices[0]; *c.Delta.Content != "fghij" || *c.FinishReason != "length" || chunks[1].Usage != nil {
		t.Fatalf("last: %+v", chunks[1])
	}
	if chunks[0].Model != fakellm.DefaultModel {
		t.Fatalf("model %q", chunks[0].Model)
	}

	// An empty turn is one chunk with the role and finish_reason.
	chunks = streamChunks(t, srv, map[string]any{"messages": []any{userMsg("hi")}})
	if len(chunks) != 1 || *chunks[0].Choices[0].Delta.Role != "assistant" || *chunks[0].Choices[0].FinishReason != "stop" {
		t.Fatalf("empty turn: %+v", chunks)
	}

	chunks = streamChunks(t, srv, map[string]any{"messages": []any{userMsg("hi")}})
	var refusal string
	for _, c := range chunks {
		if r := c.Choices[0].Delta.Refusal; r != nil {
			refusal += *r
		}
		if c.Choices[0].Delta.Content != nil {
			t.Fatal("unexpected content")
		}
	}
	if refusal != "no way, sorry" {
		t.Fatalf("refusal %q", refusal)
	}
}

type assembled struct{ id, typ, name, args string }

// toolCallEvents returns, in order, "h<i>" for a header chunk and "f<i>" for
// a fragment chunk, and the calls assembled by index.
func toolCallEvents(t *testing.T, chunks []chunk) ([]string, map[int]*assembled) {
	t.Helper()
	var events []string
	calls := map[int]*assembled{}
	for _, c := range chunks {
		if len(c.Choices) == 0 {
			continue
		}
		for _, tc := range c.Choices[0].Delta.ToolCalls {
			if tc.Index == nil {
				t.Fatal("tool call delta without index")
			}
			i := *tc.Index
			a := calls[i]
			if a == nil {
				a = &assembled{}
				calls[i] = a
			}
			if tc.ID != nil {
				if tc.Type == nil || *tc.Type != "function" || tc.Function.Name == nil || a.id != "" {
					t.Fatalf("bad header for %d", i)
				}
				a.id, a.typ, a.name = *tc.ID, *tc.Type, *tc.Function.Name
				events = append(events, fmt.Sprintf("h%d", i))
			} else {
				if tc.Type != nil || tc.Function.Name != nil || tc.Function.Arguments == nil || a.id == "" {
					t.Fatalf("bad fragment for %d", i)
				}
				events = append(events, fmt.Sprintf("f%d", i))
			}
			if tc.Function.Arguments != nil {
				a.args += *tc.Function.Arguments
			}
		}
	}
	return events, calls
}

func TestStreamingToolCalls(t *testing.T) {
	calls := []fakellm.ToolCall{
		{ID: "call_r", Name: "read_file", Arguments: `{"path":"/tmp/a.txt"}`},
		{ID: "call_w", Name: "write_file", Arguments: `{"path":"b","text":"hi"}`},
	}
	srv := fakellm.Start(
		fakellm.Turn{Text: "Let me", ToolCalls: calls},
		fakellm.Turn{ToolCalls: calls, SequentialToolCalls: true},
	)
	defer srv.Close()

	chunks := streamChunks(t, srv, map[string]any{"messages": []any{userMsg("go")}, "stream_options": map[string]any{"include_usage": true}})
	events, got := toolCallEvents(t, chunks)
	want := []string{"h0", "h1", "f0", "f1", "f0", "f1", "f0", "f1", "f0", "f1", "f0", "f1"}
	if !reflect.DeepEqual(events[:len(want)], want) {
		t.Fatalf("events %v", events)
	}
	for i, c := range calls {
		a := got[i]
		if a == nil || a.id != c.ID || a.typ != "function" || a.name != c.Name || a.args != c.Arguments {
			t.Fatalf("call %d: %+v", i, a)
		}
	}
	fin := chunks[len(chunks)-2].Choices[0]
	if fin.FinishReason == nil || *fin.FinishReason != "tool_calls" {
		t.Fatalf("finish: %+v", fin)
	}
	if chunks[0].Choices[0].Delta.Content == nil || *chunks[0].Choices[0].Delta.Content != "Let m" {
		t.Fatal("content should come before tool calls")
	}

	chunks = streamChunks(t, srv, map[string]any{"messages": []any{userMsg("go")}})
	events, got = toolCallEvents(t, chunks)
	if strings.Join(events, " ") != "h0 f0 f0 f0 f0 f0 h1 f1 f1 f1 f1 f1" {
		t.Fatalf("sequential events %v", events)
	}
	if got[1].args != calls[1].Arguments {
		t.Fatalf("sequential call 1: %+v", got[1])
	}
}

func TestErrorStatuses(t *testing.T) {
	cases := []struct {
		turn           fakellm.Turn
		typ, code, msg string
		retryAfter     bool
	}{
		{fakellm.Turn{Status: 401, ErrorMessage: "Incorrect API key provided"}, "invalid_request_error", "invalid_api_key", "Incorrect API key provided", false},
		{fakellm.Turn{Status: 429, ErrorMessage: "Rate limit reached"}, "rate_limit_exceeded", "rate_limit_exceeded", "Rate limit reached", true},
		{fakellm.Turn{Status: 500, ErrorMessage: "internal error"}, "server_error", "", "internal error", true},
		{fakellm.Turn{Status: 404, ErrorMessage: "The model `x` does not exist"}, "invalid_request_error", "model_not_found", "The model `x` does not exist", false},
		{fakellm.Turn{Status: 400, ErrorType: "custom_type", ErrorCode: "custom_code"}, "custom_type", "custom_code", "Bad Request", false},
	}
	srv := fakellm.Start()
	defer srv.Close()
	for _, tc := range cases {
		for _, stream := range []bool{false, true} {
			srv.Push(tc.turn)
			res := post(t, context.Background(), srv.URL, map[string]any{"messages": []any{userMsg("x")}, "stream": stream})
			if res.StatusCode != tc.turn.Status || res.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("%d: status %d, content type %q", tc.turn.Status, res.StatusCode, res.Header.Get("Content-Type"))
			}
			if got := res.Header.Get("Retry-After-Ms") == "10" && res.Header.Get("Retry-After") == "0"; got != tc.retryAfter {
				t.Fatalf("%d: retry headers %v", tc.turn.Status, res.Header)
			}
			var body struct {
				Error struct {
					Message string  `json:"message"`
					Type    string  `json:"type"`
					Param   *string `json:"param"`
					Code    *string `json:"code"`
				} `json:"error"`
			}
			if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			e := body.Error
			code := ""
			if e.Code != nil {
				code = *e.Code
			}
			if e.Message != tc.msg || e.Type != tc.typ || code != tc.code || e.Param != nil {
				t.Fatalf("%d: error %+v", tc.turn.Status, e)
			}
		}
	}
	if srv.Remaining() != 0 || len(srv.Requests()) != 2*len(cases) {
		t.Fatalf("remaining %d, requests %d", srv.Remaining(), len(srv.Requests()))
	}
}

func TestTurnHeader(t *testing.T) {
	srv := fakellm.Start(fakellm.Turn{Status: 503, Header: http.Header{"X-Should-Retry": {"false"}, "Retry-After-Ms": {"5"}}})
	defer srv.Close()
	res := post(t, context.Background(), srv.URL, map[string]any{"messages": []any{}})
	res.Body.Close()
	if res.StatusCode != 503 || res.Header.Get("x-should-retry") != "false" || res.Header.Get("retry-after-ms") != "5" {
		t.Fatalf("status %d headers %v", res.StatusCode, res.Header)
	}
}

func TestScriptExhaustedAndPush(t *testing.T) {
	srv := fakellm.Start(fakellm.Turn{Text: "one"})
	defer srv.Close()
	if srv.Remaining() != 1 {
		t.Fatal("remaining")
	}
	decodeBody(t, post(t, context.Background(), srv.URL, map[string]any{"messages": []any{userMsg("1")}}))
	res := post(t, context.Background(), srv.URL, map[string]any{"messages": []any{userMsg("2")}, "stream": true})
	if res.StatusCode != 500 || res.Header.Get("x-should-retry") != "false" {
		t.Fatalf("status %d", res.StatusCode)
	}
	m := decodeBody(t, res)
	if msg := m["error"].(map[string]any)["message"]; msg != "fakellm: script exhausted (2 requests received)" {
		t.Fatalf("message %q", msg)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[1].Messages[0].Content != "2" {
		t.Fatalf("requests %+v", reqs)
	}

	srv.Push(fakellm.Turn{Text: "two"}, fakellm.Turn{Text: "three"})
	if srv.Remaining() != 2 {
		t.Fatal("remaining after push")
	}
	m = decodeBody(t, post(t, context.Background(), srv.URL, map[string]any{"messages": []any{userMsg("3")}}))
	if c := m["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"]; c != "two" {
		t.Fatalf("content %v", c)
	}
	if srv.Remaining() != 1 {
		t.Fatal("remaining after use")
	}
}

func TestBadRequestBody(t *testing.T) {
	srv := fakellm.Start(fakellm.Turn{Text: "unused"})
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/chat/completions", strings.NewReader(`{"messages": [`))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 400 || srv.Remaining() != 1 {
		t.Fatalf("status %d remaining %d", res.StatusCode, srv.Remaining())
	}
	if r := srv.Requests(); len(r) != 1 || r[0].DecodeError == "" || string(r[0].Raw) != `{"messages": [` {
		t.Fatalf("requests %+v", r)
	}
}

func TestModelsAndNotFound(t *testing.T) {
	srv := fakellm.Start()
	defer srv.Close()
	res, err := http.Get(srv.URL + "/models")
	if err != nil {
		t.Fatal(err)
	}
	m := decodeBody(t, res)
	data := m["data"].([]any)
	if m["object"] != "list" || len(data) != 1 || data[0].(map[string]any)["id"] != "fake-model" || data[0].(map[string]any)["object"] != "model" {
		t.Fatalf("models: %v", m)
	}
	for _, path := range []string{"/embeddings", "/responses", "/../chat"} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 404 {
			t.Fatalf("%s: status %d", path, res.StatusCode)
		}
	}
	res, err = http.Get(srv.URL + "/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 404 || len(srv.Requests()) != 0 {
		t.Fatalf("GET chat/completions: status %d", res.StatusCode)
	}
}

func TestHoldAndCancel(t *testing.T) {
	hold := make(chan struct{})
	started := make(chan struct{})
	srv := fakellm.Start(fakellm.Turn{Text: "late", Hold: hold, Started: started}, fakellm.Turn{Text: "next"})
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/chat/completions", strings.NewReader(`{"messages":[]}`))
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
		}
		errc <- err
	}()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("request never arrived")
	}
	select {
	case err := <-errc:
		t.Fatalf("answered while held: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancel did not end the request")
	}
	close(hold) // harmless after the request ended

	m := decodeBody(t, post(t, context.Background(), srv.URL, map[string]any{"messages": []any{}}))
	if c := m["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"]; c != "next" {
		t.Fatalf("content %v", c)
	}
}

func TestHoldReleased(t *testing.T) {
	hold := make(chan struct{})
	srv := fakellm.Start(fakellm.Turn{Text: "ok", Hold: hold})
	defer srv.Close()
	time.AfterFunc(20*time.Millisecond, func() { close(hold) })
	chunks := streamChunks(t, srv, map[string]any{"messages": []any{}})
	if *chunks[0].Choices[0].Delta.Content != "ok" {
		t.Fatalf("chunks %+v", chunks)
	}
}

func TestHoldMidStream(t *testing.T) {
	hold := make(chan struct{})
	srv := fakellm.Start(fakellm.Turn{Text: "first second", HoldMidStream: hold})
	defer srv.Close()
	defer close(hold)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res := post(t, ctx, srv.URL, map[string]any{"messages": []any{}, "stream": true})
	defer res.Body.Close()
	br := bufio.NewReader(res.Body)
	line, err := br.ReadString('\n')
	if err != nil || !strings.Contains(line, `"content":"first"`) {
		t.Fatalf("first line %q (%v)", line, err)
	}
	cancel()
	if _, err := io.ReadAll(br); err == nil {
		t.Fatal("expected an error reading a cancelled stream")
	}
}

func TestCloseUnblocksHold(t *testing.T) {
	started := make(chan struct{})
	srv := fakellm.Start(fakellm.Turn{Hold: make(chan struct{}), Started: started})
	errc := make(chan error, 1)
	go func() {
		res, err := http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(`{"messages":[]}`))
		if err == nil {
			res.Body.Close()
		}
		errc <- err
	}()
	<-started
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close blocked on a held request")
	}
	if err := <-errc; err == nil {
		t.Fatal("held request got an answer after Close")
	}
	srv.Close() // idempotent
}

func TestConcurrentRequests(t *testing.T) {
	const n = 20
	srv := fakellm.Start()
	defer srv.Close()
	for i := range n {
		srv.Push(fakellm.Turn{Text: fmt.Sprintf("answer %d", i)})
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]bool{}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"messages":[{"role":"user","content":"q%d"}],"stream":%v}`, i, i%2 == 0)
			res, err := http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				t.Error(err)
				return
			}
			raw, _ := io.ReadAll(res.Body)
			res.Body.Close()
			text := string(raw)
			if i%2 == 0 {
				var b strings.Builder
				for _, ev := range strings.Split(text, "\n\n") {
					var c chunk
					if json.Unmarshal([]byte(strings.TrimPrefix(ev, "data: ")), &c) == nil && len(c.Choices) > 0 && c.Choices[0].Delta.Content != nil {
						b.WriteString(*c.Choices[0].Delta.Content)
					}
				}
				text = b.String()
			} else {
				var m struct {
					Choices []struct {
						Message struct{ Content string } `json:"message"`
					} `json:"choices"`
				}
				_ = json.Unmarshal(raw, &m)
				text = m.Choices[0].Message.Content
			}
			mu.Lock()
			seen[text] = true
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(seen) != n || srv.Remaining() != 0 || len(srv.Requests()) != n {
		t.Fatalf("seen %d distinct answers, remaining %d, requests %d", len(seen), srv.Remaining(), len(srv.Requests()))
	}
}

func TestSplit(t *testing.T) {
	cases := map[string][]string{
		"":             nil,
		"abc":          {"abc"},
		"abcdefghijk":  {"abcde", "fghij", "k"},
		"ééééé":        {"éé", "éé", "é"},
		"✓✓✓":          {"✓", "✓", "✓"},
		"a✓b":          {"a✓b"},
		"\xff\xfeabcd": {"\xff\xfeabc", "d"},
	}
	for in, want := range cases {
		got := fakellm.Split(in, 5)
		if !reflect.DeepEqual(got, want) || strings.Join(got, "") != in {
			t.Errorf("Split(%q) = %q, want %q", in, got, want)
		}
	}
	if got := fakellm.Split("😀😀", 2); !reflect.DeepEqual(got, []string{"😀", "😀"}) {
		t.Errorf("oversized runes: %q", got)
	}
}

func TestCloseMidStream(t *testing.T) {
	srv := fakellm.Start(fakellm.Turn{Text: "first second", HoldMidStream: make(chan struct{})})
	res := post(t, context.Background(), srv.URL, map[string]any{"messages": []any{}, "stream": true})
	defer res.Body.Close()
	br := bufio.NewReader(res.Body)
	if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, `"content":"first"`) {
		t.Fatalf("first line %q (%v)", line, err)
	}
	srv.Close()
	rest, err := io.ReadAll(br)
	if err == nil || strings.Contains(string(rest), "[DONE]") {
		t.Fatalf("stream ended cleanly after Close: %q", rest)
	}
}
