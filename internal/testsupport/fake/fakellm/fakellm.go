// Package fakellm is a scripted, in-process OpenAI-compatible Chat Completions
// server for tests.
//
// A test starts a [Server] with a script of [Turn] values; every POST to
// /v1/chat/completions consumes the next turn and answers it either as a
// streamed sequence of chat.completion.chunk events (when the request has
// "stream": true) or as one chat.completion object. Every request is recorded
// and can be inspected with [Server.Requests].
//
// The server listens on 127.0.0.1 only. Point a client at [Server.URL], which
// ends in /v1 (for openai-go: option.WithBaseURL(srv.URL)).
//
// The wire format follows what the official openai-go v3 SDK decodes: every
// chunk of a stream carries the same id, created and model; the first chunk
// carries delta.role "assistant"; a final chunk with an empty delta carries
// finish_reason (unless [Turn.InlineFinish] is set); with
// stream_options.include_usage a last chunk has "choices": [] and "usage";
// the stream ends with "data: [DONE]".
package fakellm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/acpgate/acpgate/internal/testsupport/fake/scripted"
)

// DefaultModel is the model name used in responses when a request names no
// model, and the only model listed by GET /v1/models unless
// [Server.SetModels] says otherwise.
const DefaultModel = "fake-model"

// pieceSize is the approximate size in bytes of each streamed text piece.
const pieceSize = 5

// Turn is one scripted model response, consumed in order, one per request to
// /v1/chat/completions.
type Turn struct {
	// Text is the assistant content. When streaming it is sent as several
	// delta.content chunks of about 5 bytes each, split on rune boundaries.
	Text string
	// Reasoning is sent first, as delta "reasoning_content" chunks, when
	// streaming; non-streaming, it is message.reasoning_content. Neither is a
	// standard OpenAI field: the openai-go SDK exposes it only through
	// JSON.ExtraFields["reasoning_content"].
	Reasoning string
	// ToolCalls are the assistant tool calls. When streaming, the first chunk
	// of each call carries index, id, type "function", function.name and an
	// empty function.arguments; later chunks carry only index and a
	// function.arguments fragment. Several calls are interleaved (all
	// headers, then fragments round-robin) unless SequentialToolCalls is set.
	ToolCalls []ToolCall
	// SequentialToolCalls streams each tool call completely before the next
	// one, as the OpenAI API itself does, instead of interleaving them.
	SequentialToolCalls bool
	// Refusal is message.refusal (non-streaming) or streamed as delta.refusal
	// chunks.
	Refusal string
	// FinishReason defaults to "tool_calls" if ToolCalls is non-empty, else
	// "stop". It may be anything, e.g. "length" or "content_filter".
	FinishReason string
	// InlineFinish, when streaming, puts finish_reason on the last chunk that
	// carries content (as some OpenAI-compatible servers do) instead of on a
	// separate final chunk with an empty delta (as the OpenAI API does).
	InlineFinish bool
	// Usage is reported in "usage" (non-streaming) or, when streaming with
	// stream_options.include_usage true, in a last chunk with empty choices.
	// Nil means {PromptTokens: 10, CompletionTokens: 5}, or, once
	// [Server.SetWindow] set a window, the request's [Request.Tokens] and 5.
	Usage *Usage
	// Status, if non-zero, makes the server answer with this HTTP status and
	// an OpenAI-style error body
	// {"error":{"message":...,"type":...,"param":null,"code":...}}
	// instead of a completion. For statuses the openai-go SDK retries (408,
	// 409, 429, >= 500) the response carries "retry-after-ms: 10" and
	// "retry-after: 0" so that SDK retries happen at once; note that each
	// retry consumes another turn.
	Status int
	// ErrorMessage is the error message for Status; default: the status text.
	ErrorMessage string
	// ErrorType overrides the error type derived from Status
	// ("invalid_request_error", "rate_limit_exceeded" or "server_error").
	ErrorType string
	// ErrorCode overrides the error code derived from Status (for example
	// "invalid_api_key" for 401, "model_not_found" for 404,
	// "rate_limit_exceeded" for 429, null otherwise).
	ErrorCode string
	// Header holds extra response headers, set after the default ones (so it
	// can override them), e.g. "x-should-retry: false".
	Header http.Header
	// Started, if non-nil, is closed by the server when a request takes this
	// turn, before Hold is waited for. Tests use it to know that a request
	// has reached the server. Each turn needs its own channel.
	Started chan struct{}
	// Hold, if non-nil, makes the server wait until it is closed, the
	// request's context ends, or the server is closed, before answering. If
	// the wait ends other than by closing Hold, the connection is dropped
	// without a response.
	Hold <-chan struct{}
	// HoldMidStream, if non-nil and the request is streaming, makes the
	// server send the response headers and the first chunk, then wait as for
	// Hold before sending the rest; if the wait ends other than by closing
	// HoldMidStream, the connection is dropped mid-stream (the client sees an
	// unexpected EOF, not a clean end). Used to test cancellation mid-stream.
	HoldMidStream <-chan struct{}
	// Flood, if set and the request is streaming, replaces the turn's
	// content with a generated answer of any size (see [Flood]).
	Flood *Flood
}

// ToolCall is one assistant tool (function) call.
type ToolCall struct {
	// ID is the tool call id; if empty in a Turn, the server uses
	// "call_<request number>_<index>".
	ID string
	// Name is the function name.
	Name string
	// Arguments is the JSON text of the arguments. When streaming it is split
	// into several fragments across chunks.
	Arguments string
}

// Usage is the token usage reported for a turn. total_tokens is reported as
// the sum of both.
type Usage struct {
	// PromptTokens is reported as prompt_tokens.
	PromptTokens int
	// CompletionTokens is reported as completion_tokens.
	CompletionTokens int
	// CachedTokens, when positive, is reported as
	// prompt_tokens_details.cached_tokens: how many of the prompt tokens
	// a prompt cache served (OpenAI counts them in prompt_tokens too).
	CachedTokens int
}

// Request is a received chat completion request, decoded.
type Request struct {
	// Model is the requested model.
	Model string
	// Stream reports whether "stream" was true.
	Stream bool
	// IncludeUsage reports whether stream_options.include_usage was true.
	IncludeUsage bool
	// Messages are the decoded messages.
	Messages []Message
	// Tools are the tools offered.
	Tools []Tool
	// ToolChoice is the raw "tool_choice" value, if any.
	ToolChoice json.RawMessage
	// PromptCacheKey is "prompt_cache_key", if sent.
	PromptCacheKey string
	// Header holds the request headers.
	Header http.Header
	// Raw is the whole request body.
	Raw json.RawMessage
	// DecodeError is non-empty if the body could not be decoded as a chat
	// completion request; the server then answered 400 without consuming a
	// turn.
	DecodeError string
	// Tokens is the request's size as the server counts it (see [Tokens]).
	Tokens int
	// Refused says the server answered that the request is longer than its
	// window ([Server.SetWindow]), without consuming a turn.
	Refused bool
}

// Message is one decoded request message.
type Message struct {
	// Role is the message role ("system", "developer", "user", "assistant" or
	// "tool").
	Role string
	// Name is the optional participant name.
	Name string
	// Content is the text content; if content was an array of parts, the
	// concatenated text of its "text" parts.
	Content string
	// Parts holds the raw parts when content was an array (e.g. image_url
	// parts); nil when content was a string or null.
	Parts []json.RawMessage
	// ToolCalls are an assistant message's tool calls.
	ToolCalls []ToolCall
	// ToolCallID is a tool message's tool_call_id.
	ToolCallID string
	// ReasoningContent is the non-standard "reasoning_content" field, if sent.
	ReasoningContent string
}

// Tool is one function tool offered in a request.
type Tool struct {
	// Name is the function name.
	Name string
	// Description is the function description.
	Description string
	// Parameters is the raw JSON schema of the parameters.
	Parameters json.RawMessage
}

// Server is a running fake Chat Completions server. Its methods are safe for
// concurrent use.
type Server struct {
	// URL is the base URL, ending in /v1, e.g. http://127.0.0.1:PORT/v1.
	URL string

	http *scripted.Server[Turn] // the listener, the handlers, the script

	mu       sync.Mutex
	requests []Request
	models   modelsState
	win      windowState
	flooded  int64 // bytes of Flood content sent
}

// Start starts a server on 127.0.0.1 on a free port with the given script.
// It panics if it cannot listen. Call [Server.Close] when done.
func Start(script ...Turn) *Server {
	s := &Server{}
	s.http = scripted.Start("fakellm", s.serveHTTP, script)
	s.URL = s.http.URL + "/v1"
	return s
}

// Close shuts the server down: it unblocks every Hold, closes the listener and
// all connections, and waits for the handlers to return. It may be called more
// than once.
func (s *Server) Close() { s.http.Close() }

// Push appends turns to the script.
func (s *Server) Push(turns ...Turn) { s.http.Push(turns...) }

// Requests returns a copy of every chat completion request received, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Remaining returns how many turns have not been consumed yet.
func (s *Server) Remaining() int { return s.http.Remaining() }

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/v1/chat/completions" && r.Method == http.MethodPost:
		s.chatCompletions(w, r)
	case r.URL.Path == "/v1/models" && r.Method == http.MethodGet:
		s.listModels(w, r)
	default:
		writeError(w, http.StatusNotFound, fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path),
			"invalid_request_error", "")
	}
}

// wireRequest is the subset of a chat completion request that is decoded.
type wireRequest struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages []struct {
		Role             string          `json:"role"`
		Name             string          `json:"name"`
		Content          json.RawMessage `json:"content"`
		ToolCalls        []wireToolCall  `json:"tool_calls"`
		ToolCallID       string          `json:"tool_call_id"`
		ReasoningContent string          `json:"reasoning_content"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	ToolChoice     json.RawMessage `json:"tool_choice"`
	PromptCacheKey string          `json:"prompt_cache_key"`
}

type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func decodeRequest(body []byte, h http.Header) (Request, error) {
	req := Request{Header: h, Raw: json.RawMessage(body)}
	var wr wireRequest
	if err := json.Unmarshal(body, &wr); err != nil {
		return req, err
	}
	req.Model = wr.Model
	req.Stream = wr.Stream
	req.IncludeUsage = wr.StreamOptions != nil && wr.StreamOptions.IncludeUsage
	req.ToolChoice = wr.ToolChoice
	req.PromptCacheKey = wr.PromptCacheKey
	for i, m := range wr.Messages {
		msg := Message{Role: m.Role, Name: m.Name, ToolCallID: m.ToolCallID, ReasoningContent: m.ReasoningContent}
		content := bytes.TrimSpace(m.Content)
		switch {
		case len(content) == 0 || bytes.Equal(content, []byte("null")):
		case content[0] == '"':
			if err := json.Unmarshal(content, &msg.Content); err != nil {
				return req, fmt.Errorf("messages[%d].content: %w", i, err)
			}
		case content[0] == '[':
			if err := json.Unmarshal(content, &msg.Parts); err != nil {
				return req, fmt.Errorf("messages[%d].content: %w", i, err)
			}
			for _, p := range msg.Parts {
				var part struct {
					Type string `json:"type"`
					Text string `json:"text"`
				}
				if err := json.Unmarshal(p, &part); err == nil && part.Type == "text" {
					msg.Content += part.Text
				}
			}
		default:
			return req, fmt.Errorf("messages[%d].content: neither a string, an array nor null", i)
		}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		req.Messages = append(req.Messages, msg)
	}
	for _, t := range wr.Tools {
		req.Tools = append(req.Tools, Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	return req, nil
}

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	req, body, decErr, ok := scripted.ReadRequest(r, decodeRequest)
	if !ok {
		return
	}
	if decErr != nil {
		req.DecodeError = decErr.Error()
	}
	req.Tokens = Tokens(body)

	n, window, respond := s.record(&req)
	var turn Turn
	have := false
	switch {
	case decErr != nil:
		writeError(w, http.StatusBadRequest, "fakellm: cannot decode request: "+decErr.Error(), "invalid_request_error", "")
		return
	case req.Refused:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", window, req.Tokens),
			"invalid_request_error", "context_length_exceeded")
		return
	case respond != nil:
		turn, have = respond(req)
	}
	if !have {
		turn, have = s.http.Next()
	}
	if have && turn.Usage == nil && window > 0 {
		turn.Usage = &Usage{PromptTokens: req.Tokens, CompletionTokens: 5}
	}
	if !have {
		// x-should-retry: false keeps the openai-go SDK from retrying the 500.
		w.Header().Set("x-should-retry", "false")
		writeError(w, http.StatusInternalServerError,
			fmt.Sprintf("fakellm: script exhausted (%d requests received)", n), "server_error", "")
		return
	}

	s.http.Begin(w, r, turn.Started, turn.Hold, turn.Header)
	if turn.Status != 0 {
		s.answerError(w, turn)
		return
	}

	model := req.Model
	if model == "" {
		model = DefaultModel
	}
	c := completion{
		id:      "chatcmpl-fake-" + strconv.Itoa(n),
		created: time.Now().Unix(),
		model:   model,
		turn:    turn,
		reqNum:  n,
	}
	if req.Stream && turn.Flood != nil {
		s.flood(w, c)
		return
	}
	if req.Stream {
		s.stream(w, r, c, req.IncludeUsage)
		return
	}
	scripted.WriteJSON(w, http.StatusOK, c.object())
}

func (s *Server) answerError(w http.ResponseWriter, t Turn) {
	msg, typ, code := t.ErrorMessage, t.ErrorType, t.ErrorCode
	if msg == "" {
		msg = http.StatusText(t.Status)
	}
	if typ == "" {
		switch {
		case t.Status == http.StatusTooManyRequests:
			typ = "rate_limit_exceeded"
		case t.Status >= 500:
			typ = "server_error"
		default:
			typ = "invalid_request_error"
		}
	}
	if code == "" {
		switch t.Status {
		case http.StatusUnauthorized:
			code = "invalid_api_key"
		case http.StatusNotFound:
			code = "model_not_found"
		case http.StatusTooManyRequests:
			code = "rate_limit_exceeded"
		}
	}
	if t.Status == http.StatusRequestTimeout || t.Status == http.StatusConflict ||
		t.Status == http.StatusTooManyRequests || t.Status >= 500 {
		h := w.Header()
		if h.Get("Retry-After-Ms") == "" {
			h.Set("Retry-After-Ms", "10")
		}
		if h.Get("Retry-After") == "" {
			h.Set("Retry-After", "0")
		}
	}
	writeError(w, t.Status, msg, typ, code)
}

// writeError writes an OpenAI-style error body. An empty code is sent as null.
func writeError(w http.ResponseWriter, status int, message, typ, code string) {
	var c any
	if code != "" {
		c = code
	}
	scripted.WriteJSON(w, status, map[string]any{
		"error": map[string]any{"message": message, "type": typ, "param": nil, "code": c},
	})
}

// completion renders one turn as a response.
type completion struct {
	id      string
	created int64
	model   string
	turn    Turn
	reqNum  int
}

func (c completion) finishReason() string {
	if c.turn.FinishReason != "" {
		return c.turn.FinishReason
	}
	if len(c.turn.ToolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

func (c completion) usage() map[string]any {
	u := Usage{PromptTokens: 10, CompletionTokens: 5}
	if c.turn.Usage != nil {
		u = *c.turn.Usage
	}
	out := map[string]any{
		"prompt_tokens":     u.PromptTokens,
		"completion_tokens": u.CompletionTokens,
		"total_tokens":      u.PromptTokens + u.CompletionTokens,
	}
	if u.CachedTokens > 0 {
		out["prompt_tokens_details"] = map[string]int{"cached_tokens": u.CachedTokens}
	}
	return out
}

func (c completion) toolCallID(i int) string {
	if id := c.turn.ToolCalls[i].ID; id != "" {
		return id
	}
	return fmt.Sprintf("call_%d_%d", c.reqNum, i)
}

// object is the non-streaming chat.completion object.
func (c completion) object() map[string]any {
	t := c.turn
	msg := map[string]any{"role": "assistant", "content": t.Text, "refusal": nil}
	if t.Text == "" && (len(t.ToolCalls) > 0 || t.Refusal != "") {
		msg["content"] = nil
	}
	if t.Refusal != "" {
		msg["refusal"] = t.Refusal
	}
	if t.Reasoning != "" {
		msg["reasoning_content"] = t.Reasoning
	}
	if len(t.ToolCalls) > 0 {
		calls := make([]any, len(t.ToolCalls))
		for i, tc := range t.ToolCalls {
			calls[i] = map[string]any{
				"id":       c.toolCallID(i),
				"type":     "function",
				"function": map[string]any{"name": tc.Name, "arguments": tc.Arguments},
			}
		}
		msg["tool_calls"] = calls
	}
	return map[string]any{
		"id":      c.id,
		"object":  "chat.completion",
		"created": c.created,
		"model":   c.model,
		"choices": []any{map[string]any{
			"index":         0,
			"message":       msg,
			"logprobs":      nil,
			"finish_reason": c.finishReason(),
		}},
		"usage": c.usage(),
	}
}

// Streaming wire types.

type chunk struct {
	ID      string         `json:"id"`
	Object  string         `json:"object"`
	Created int64          `json:"created"`
	Model   string         `json:"model"`
	Choices []chunkChoice  `json:"choices"`
	Usage   map[string]any `json:"usage,omitempty"`
}

type chunkChoice struct {
	Index        int     `json:"index"`
	Delta        delta   `json:"delta"`
	Logprobs     any     `json:"logprobs"`
	FinishReason *string `json:"finish_reason"`
}

type delta struct {
	Role             string          `json:"role,omitempty"`
	Content          *string         `json:"content,omitempty"`
	ReasoningContent *string         `json:"reasoning_content,omitempty"`
	Refusal          *string         `json:"refusal,omitempty"`
	ToolCalls        []toolCallDelta `json:"tool_calls,omitempty"`
}

type toolCallDelta struct {
	Index    int           `json:"index"`
	ID       string        `json:"id,omitempty"`
	Type     string        `json:"type,omitempty"`
	Function functionDelta `json:"function"`
}

type functionDelta struct {
	Name      string  `json:"name,omitempty"`
	Arguments *string `json:"arguments,omitempty"`
}

// deltas returns the sequence of deltas for a streamed turn, without role or
// finish_reason.
func (c completion) deltas() []delta {
	t := c.turn
	var ds []delta
	for _, p := range Split(t.Reasoning, pieceSize) {
		ds = append(ds, delta{ReasoningContent: &p})
	}
	for _, p := range Split(t.Text, pieceSize) {
		ds = append(ds, delta{Content: &p})
	}
	for _, p := range Split(t.Refusal, pieceSize) {
		ds = append(ds, delta{Refusal: &p})
	}
	frags := make([][]string, len(t.ToolCalls))
	header := func(i int) delta {
		empty := ""
		return delta{ToolCalls: []toolCallDelta{{
			Index: i, ID: c.toolCallID(i), Type: "function",
			Function: functionDelta{Name: t.ToolCalls[i].Name, Arguments: &empty},
		}}}
	}
	fragment := func(i int, f string) delta {
		return delta{ToolCalls: []toolCallDelta{{Index: i, Function: functionDelta{Arguments: &f}}}}
	}
	longest := 0
	for i, tc := range t.ToolCalls {
		frags[i] = Split(tc.Arguments, pieceSize)
		longest = max(longest, len(frags[i]))
	}
	if t.SequentialToolCalls {
		for i := range t.ToolCalls {
			ds = append(ds, header(i))
			for _, f := range frags[i] {
				ds = append(ds, fragment(i, f))
			}
		}
		return ds
	}
	for i := range t.ToolCalls {
		ds = append(ds, header(i))
	}
	for j := range longest {
		for i := range t.ToolCalls {
			if j < len(frags[i]) {
				ds = append(ds, fragment(i, frags[i][j]))
			}
		}
	}
	return ds
}

// chunks returns the chunk objects of a streamed turn.
func (c completion) chunks(includeUsage bool) []chunk {
	ds := c.deltas()
	finish := c.finishReason()
	if len(ds) == 0 || !c.turn.InlineFinish {
		ds = append(ds, delta{})
	}
	ds[0].Role = "assistant"
	out := make([]chunk, 0, len(ds)+1)
	for i, d := range ds {
		ch := chunk{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.model,
			Choices: []chunkChoice{{Index: 0, Delta: d}}}
		if i == len(ds)-1 {
			ch.Choices[0].FinishReason = &finish
		}
		out = append(out, ch)
	}
	if includeUsage {
		out = append(out, chunk{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.model,
			Choices: []chunkChoice{}, Usage: c.usage()})
	}
	return out
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, c completion, includeUsage bool) {
	rc := scripted.StartEvents(w)
	send := func(data []byte) bool {
		var buf bytes.Buffer
		buf.WriteString("data: ")
		buf.Write(data)
		buf.WriteString("\n\n")
		if _, err := w.Write(buf.Bytes()); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	for i, ch := range c.chunks(includeUsage) {
		b, err := json.Marshal(ch)
		if err != nil {
			return
		}
		if !send(b) {
			return
		}
		if i == 0 && c.turn.HoldMidStream != nil && !s.http.Wait(r, c.turn.HoldMidStream) {
			// Abort so that the client sees a broken stream, not a clean end.
			panic(http.ErrAbortHandler)
		}
	}
	send([]byte("[DONE]"))
}

// Split cuts s into pieces of at most size bytes, on rune boundaries; a piece
// holds at least one rune, so it is longer than size only for a single rune
// longer than size. Split of "" is nil. The server uses it with size 5 to
// split streamed text and tool call arguments; tests may use it to predict
// the chunks.
func Split(s string, size int) []string { return scripted.Split(s, size) }
