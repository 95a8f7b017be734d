// Package fakeanthropic is a scripted, in-process Anthropic Messages API
// server for tests, next to internal/testsupport/fake/fakellm's OpenAI-compatible one.
//
// A test starts a [Server] with a script of [Turn] values; every POST to
// /v1/messages consumes the next turn and answers it as a stream of
// server-sent events (when the request has "stream": true) or as one
// message object. Every request is recorded, its body decoded, and can be
// inspected with [Server.Requests]: the cache_control breakpoints it
// carries ([Request.Breakpoints]) and the history blocks it sends back.
// GET /v1/models lists models in Anthropic's shape. A [Responder] may
// answer requests by what they hold, before the script; a scripted answer
// may use the API's tool search ([ServerToolUse], [ToolSearchResult]);
// [Request.CachePrefix] is a request's prompt as the prompt cache sees it.
//
// The server listens on 127.0.0.1 only. Point a client at [Server.URL]
// (the API root, without /v1).
//
// The wire format follows Anthropic's: message_start (with the input
// usage, cache fields included), then per content block
// content_block_start, content_block_delta events (text_delta,
// input_json_delta for tool_use, thinking_delta then one signature_delta
// for thinking) and content_block_stop, a ping after the first block's
// start, then message_delta (stop_reason and the cumulative usage) and
// message_stop. Errors have the body
// {"type":"error","error":{"type":...,"message":...}}.
package fakeanthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/acpgate/acpgate/internal/testsupport/fake/scripted"
)

// DefaultModel is the model named in responses when a request names none,
// and the only model GET /v1/models lists unless [Server.SetModels] says
// otherwise.
const DefaultModel = "claude-fake"

// pieceSize is the approximate size in bytes of each streamed piece of
// text, thinking or tool input.
const pieceSize = 5

// Turn is one scripted response, consumed in order, one per request to
// /v1/messages.
type Turn struct {
	// Blocks are the content blocks of the answer, in order.
	Blocks []Block
	// StopReason defaults to "tool_use" when a block is a tool_use, else
	// "end_turn". It may be anything ("max_tokens", "refusal",
	// "pause_turn", ...).
	StopReason string
	// Usage is reported in message_start (input and cache fields) and
	// message_delta (all fields, cumulative). Nil means 10 input and 5
	// output tokens.
	Usage *Usage
	// Status, if non-zero, answers with this HTTP status and an Anthropic
	// error body instead of a message. For statuses the SDK retries (408,
	// 409, 429, >= 500) the response carries "retry-after: 0" unless Header
	// sets it; each retry consumes another turn.
	Status int
	// ErrorType is the error's type; default from Status
	// (authentication_error, not_found_error, rate_limit_error,
	// overloaded_error for 529, api_error for other 5xx,
	// invalid_request_error otherwise).
	ErrorType string
	// ErrorMessage is the error's message; default the status text.
	ErrorMessage string
	// StreamError, when set, is the type of an error event sent after
	// message_start in place of the content (the status is 200).
	StreamError string
	// Header holds extra response headers, set after the default ones.
	Header http.Header
	// Started, if non-nil, is closed when a request takes this turn,
	// before Hold is waited for.
	Started chan struct{}
	// Hold, if non-nil, makes the server wait until it is closed (or the
	// request ends, or the server closes: then the connection is dropped)
	// before answering.
	Hold <-chan struct{}
}

// Block is one content block of a scripted answer.
type Block struct {
	// Type is "text", "thinking", "redacted_thinking", "tool_use",
	// "server_tool_use", or any other type, sent as Raw.
	Type string
	// Text is a text block's text, streamed in pieces.
	Text string
	// Thinking and Signature make a thinking block: the thinking streamed
	// in pieces, then the signature in one signature_delta.
	Thinking, Signature string
	// Data is a redacted_thinking block's data.
	Data string
	// ID, Name and Input make a tool_use or server_tool_use block: Input
	// is the JSON text of the input, streamed in input_json_delta pieces
	// ("": {}). An empty ID is "toolu_<request>_<index>" ("srvtoolu_…" for
	// server_tool_use).
	ID, Name, Input string
	// Raw, when set, is the block whole, sent as it is in
	// content_block_start (for a block of any other type, or a
	// server_tool_use not to be streamed).
	Raw json.RawMessage
}

// Text returns a text block.
func Text(s string) Block { return Block{Type: "text", Text: s} }

// Thinking returns a thinking block with its signature.
func Thinking(thinking, signature string) Block {
	return Block{Type: "thinking", Thinking: thinking, Signature: signature}
}

// ToolUse returns a tool_use block.
func ToolUse(id, name, input string) Block {
	return Block{Type: "tool_use", ID: id, Name: name, Input: input}
}

// ServerToolUse returns a server_tool_use block: the API running one of
// its own tools (for ToolSearch, its tool search) while it answers; its
// input is streamed like a tool_use block's.
func ServerToolUse(id, name, input string) Block {
	return Block{Type: "server_tool_use", ID: id, Name: name, Input: input}
}

// ToolSearch is the name of the API's BM25 tool search tool.
const ToolSearch = "tool_search_tool_bm25"

// ToolSearchResult returns a tool_search_tool_result block answering the
// server_tool_use block toolUseID: a tool_reference to each of names,
// which loads those deferred tools for the model.
func ToolSearchResult(toolUseID string, names ...string) Block {
	refs := make([]map[string]string, len(names))
	for i, n := range names {
		refs[i] = map[string]string{"type": "tool_reference", "tool_name": n}
	}
	raw, _ := json.Marshal(map[string]any{"type": "tool_search_tool_result", "tool_use_id": toolUseID,
		"content": map[string]any{"type": "tool_search_tool_search_result", "tool_references": refs}})
	return Block{Type: "tool_search_tool_result", Raw: raw}
}

// Usage is the token usage of a turn.
type Usage struct {
	InputTokens              int
	OutputTokens             int
	CacheCreationInputTokens int
	CacheReadInputTokens     int
}

// Request is a received /v1/messages request, decoded.
type Request struct {
	// Model, MaxTokens and Stream are the request's fields.
	Model     string
	MaxTokens int
	Stream    bool
	// System holds the system blocks (a string system is one text block).
	System []json.RawMessage
	// Messages are the messages, their content as blocks (a string content
	// is one text block).
	Messages []Message
	// Tools are the tool definitions, raw.
	Tools []json.RawMessage
	// ToolChoice, Thinking and CacheControl are the raw fields, if sent.
	ToolChoice, Thinking, CacheControl json.RawMessage
	// StopSequences is stop_sequences.
	StopSequences []string
	// Header holds the request headers.
	Header http.Header
	// Raw is the whole body.
	Raw json.RawMessage
	// DecodeError is non-empty when the body did not decode; the server
	// answered 400 without consuming a turn.
	DecodeError string
}

// Message is one message of a request.
type Message struct {
	Role    string
	Content []json.RawMessage
}

// Blocks returns the message's blocks decoded as maps, for assertions.
func (m Message) Blocks() []map[string]any {
	out := make([]map[string]any, len(m.Content))
	for i, b := range m.Content {
		_ = json.Unmarshal(b, &out[i])
	}
	return out
}

// Text is the concatenated text of the message's text blocks.
func (m Message) Text() string {
	var s strings.Builder
	for _, b := range m.Blocks() {
		if b["type"] == "text" {
			t, _ := b["text"].(string)
			s.WriteString(t)
		}
	}
	return s.String()
}

// Breakpoints lists where the request carries cache_control, in request
// order: "tools[i]", "system[i]", "messages[i].content[j]", and
// "request" for a top-level one.
func (r Request) Breakpoints() []string {
	var out []string
	has := func(raw json.RawMessage) bool {
		var b struct {
			CacheControl json.RawMessage `json:"cache_control"`
		}
		return json.Unmarshal(raw, &b) == nil && len(b.CacheControl) > 0 && string(b.CacheControl) != "null"
	}
	for i, t := range r.Tools {
		if has(t) {
			out = append(out, fmt.Sprintf("tools[%d]", i))
		}
	}
	for i, s := range r.System {
		if has(s) {
			out = append(out, fmt.Sprintf("system[%d]", i))
		}
	}
	for i, m := range r.Messages {
		for j, c := range m.Content {
			if has(c) {
				out = append(out, fmt.Sprintf("messages[%d].content[%d]", i, j))
			}
		}
	}
	if len(r.CacheControl) > 0 && string(r.CacheControl) != "null" {
		out = append(out, "request")
	}
	return out
}

// Server is a running fake Messages API. Its methods are safe for
// concurrent use.
type Server struct {
	// URL is the API root, as http://127.0.0.1:PORT (no /v1).
	URL string

	http *scripted.Server[Turn] // the listener, the handlers, the script

	mu       sync.Mutex
	requests []Request
	respond  Responder
	key      string // non-empty: the API key every request must carry
	models   modelsState
}

// Start starts a server on 127.0.0.1 on a free port with the given script.
// It panics if it cannot listen. Call [Server.Close] when done.
func Start(script ...Turn) *Server {
	s := &Server{}
	s.http = scripted.Start("fakeanthropic", s.serveHTTP, script)
	s.URL = s.http.URL
	return s
}

// Close shuts the server down: it releases every Hold, closes the listener
// and the connections and waits for the handlers. It may be called more
// than once.
func (s *Server) Close() { s.http.Close() }

// Responder answers a request by what it holds: ok false leaves it to
// the script.
type Responder func(Request) (turn Turn, ok bool)

// SetResponder makes r answer each /v1/messages request first (nil: the
// script alone). r is called outside the server's lock, once per request,
// possibly concurrently for concurrent requests.
func (s *Server) SetResponder(r Responder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.respond = r
}

// Push appends turns to the script.
func (s *Server) Push(turns ...Turn) { s.http.Push(turns...) }

// RequireKey makes every request need the API key key, in x-api-key or as
// "Authorization: Bearer key"; others get a 401 authentication_error
// without consuming a turn. "" accepts any request.
func (s *Server) RequireKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}

// Requests returns a copy of every /v1/messages request received, in
// order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Remaining returns how many turns have not been consumed.
func (s *Server) Remaining() int { return s.http.Remaining() }

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	key := s.key
	s.mu.Unlock()
	if key != "" && r.Header.Get("X-Api-Key") != key && r.Header.Get("Authorization") != "Bearer "+key {
		writeError(w, http.StatusUnauthorized, "authentication_error", "invalid x-api-key")
		return
	}
	switch {
	case r.URL.Path == "/v1/messages" && r.Method == http.MethodPost:
		s.messages(w, r)
	case r.URL.Path == "/v1/models" && r.Method == http.MethodGet:
		s.listModels(w, r)
	default:
		writeError(w, http.StatusNotFound, "not_found_error", fmt.Sprintf("Not found: %s %s", r.Method, r.URL.Path))
	}
}

// wireRequest is the part of a request that is decoded.
type wireRequest struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	Stream    bool            `json:"stream"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools         []json.RawMessage `json:"tools"`
	ToolChoice    json.RawMessage   `json:"tool_choice"`
	Thinking      json.RawMessage   `json:"thinking"`
	CacheControl  json.RawMessage   `json:"cache_control"`
	StopSequences []string          `json:"stop_sequences"`
}

// blocks decodes a content or system value: a string is one text block.
func blocks(raw json.RawMessage) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return nil, nil
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		b, _ := json.Marshal(map[string]string{"type": "text", "text": s})
		return []json.RawMessage{b}, nil
	}
	var out []json.RawMessage
	err := json.Unmarshal(raw, &out)
	return out, err
}

func decodeRequest(body []byte, h http.Header) (Request, error) {
	req := Request{Header: h, Raw: json.RawMessage(body)}
	var wr wireRequest
	if err := json.Unmarshal(body, &wr); err != nil {
		return req, err
	}
	req.Model, req.MaxTokens, req.Stream = wr.Model, wr.MaxTokens, wr.Stream
	req.Tools, req.ToolChoice, req.Thinking, req.CacheControl, req.StopSequences = wr.Tools, wr.ToolChoice, wr.Thinking, wr.CacheControl, wr.StopSequences
	var err error
	if req.System, err = blocks(wr.System); err != nil {
		return req, fmt.Errorf("system: %w", err)
	}
	for i, m := range wr.Messages {
		content, err := blocks(m.Content)
		if err != nil {
			return req, fmt.Errorf("messages[%d].content: %w", i, err)
		}
		req.Messages = append(req.Messages, Message{Role: m.Role, Content: content})
	}
	if req.MaxTokens <= 0 {
		return req, fmt.Errorf("max_tokens: required")
	}
	return req, nil
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	req, _, decErr, ok := scripted.ReadRequest(r, decodeRequest)
	if !ok {
		return
	}
	if decErr != nil {
		req.DecodeError = decErr.Error()
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	n, respond := len(s.requests), s.respond
	s.mu.Unlock()
	if decErr != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "fakeanthropic: cannot decode request: "+decErr.Error())
		return
	}
	var turn Turn
	have := false
	if respond != nil {
		turn, have = respond(req)
	}
	if !have {
		turn, have = s.http.Next()
	}
	if !have {
		w.Header().Set("x-should-retry", "false")
		writeError(w, http.StatusInternalServerError, "api_error", fmt.Sprintf("fakeanthropic: script exhausted (%d requests received)", n))
		return
	}
	s.http.Begin(w, r, turn.Started, turn.Hold, turn.Header)
	if turn.Status != 0 {
		answerError(w, turn)
		return
	}
	m := message{id: "msg_fake_" + strconv.Itoa(n), model: req.Model, turn: turn, reqNum: n}
	if m.model == "" {
		m.model = DefaultModel
	}
	if req.Stream {
		m.stream(w)
		return
	}
	scripted.WriteJSON(w, http.StatusOK, m.object())
}

// errorType is the default error type of an HTTP status.
func errorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	case status == http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status == 529:
		return "overloaded_error"
	case status >= 500:
		return "api_error"
	}
	return "invalid_request_error"
}

func answerError(w http.ResponseWriter, t Turn) {
	typ, msg := t.ErrorType, t.ErrorMessage
	if typ == "" {
		typ = errorType(t.Status)
	}
	if msg == "" {
		msg = http.StatusText(t.Status)
		if t.Status == 529 {
			msg = "Overloaded"
		}
	}
	if s := t.Status; s == http.StatusRequestTimeout || s == http.StatusConflict || s == http.StatusTooManyRequests || s >= 500 {
		if w.Header().Get("Retry-After") == "" && w.Header().Get("Retry-After-Ms") == "" {
			w.Header().Set("Retry-After", "0")
		}
	}
	writeError(w, t.Status, typ, msg)
}

// errorBody is Anthropic's error object.
func errorBody(typ, message string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": message}, "request_id": "req_fake"}
}

func writeError(w http.ResponseWriter, status int, typ, message string) {
	scripted.WriteJSON(w, status, errorBody(typ, message))
}

// Split cuts s into pieces of at most size bytes on rune boundaries (a
// piece holds at least one rune). Split of "" is nil.
func Split(s string, size int) []string { return scripted.Split(s, size) }
