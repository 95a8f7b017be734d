package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Requests a server sends to the client (elicitation, sampling, roots) are
// answered by the handlers in Options. The types here are the package's
// own: what a handler needs of each request, decoded from exactly what the
// server sent (schemas stay raw JSON).
//
// Attribution. A request is attributed to the tools/call of its server it
// was sent for: over streamable HTTP, a request that arrives on the
// response stream of a call belongs to that call; a request whose _meta
// names a task (io.modelcontextprotocol/related-task) belongs to the call
// that runs that task; otherwise (stdio, SSE, the standalone GET stream,
// which carry no link to a request in MCP 2025-11-25) it belongs to the
// server's one running call, if exactly one is running. An attributed request's handler context carries the values of
// the context given to CallTool and ends when the call ends (cancelled,
// timed out or answered) or the connection does; an unattributed one ends
// with the connection or after the server's call timeout. A request the
// server sends as a task (clienttasks.go) keeps the call's Origin and
// context values but not its end: its context ends when the server cancels
// the task, the task's TTL passes or the connection closes.

// Origin says where a server request comes from.
type Origin struct {
	// Server is the server's name.
	Server string
	// Tool is the tool whose running call the request belongs to; "" when
	// the request could not be attributed to a call.
	Tool string
}

// Elicitor answers elicitation/create. Implementations must be safe for
// concurrent use.
type Elicitor interface {
	// Elicit asks the user and returns the answer. ctx ends with the
	// request (see the attribution rules above): Elicit must then return
	// promptly (ElicitCancel is the natural answer). An error becomes a
	// JSON-RPC error to the server (see RequestError).
	Elicit(ctx context.Context, req ElicitRequest) (ElicitResult, error)
	// ElicitationComplete reports a notifications/elicitation/complete:
	// the out-of-band interaction of a URL-mode elicitation has ended. It
	// runs on the transport's reader goroutine: it must return promptly
	// and must not call back into the Manager.
	ElicitationComplete(server, elicitationID string)
}

// ElicitMode is how an elicitation asks.
type ElicitMode string

// The elicitation modes.
const (
	ElicitForm ElicitMode = "form" // a form described by a JSON Schema
	ElicitURL  ElicitMode = "url"  // a URL the user opens (out of band)
)

// ElicitRequest is one elicitation/create.
type ElicitRequest struct {
	Origin
	Mode    ElicitMode
	Message string
	// Schema is the form's requestedSchema exactly as sent (form mode).
	Schema json.RawMessage
	// URL and ElicitationID are set in URL mode.
	URL           string
	ElicitationID string
}

// ElicitAction is the user's answer to an elicitation.
type ElicitAction string

// The elicitation answers.
const (
	ElicitAccept  ElicitAction = "accept"
	ElicitDecline ElicitAction = "decline"
	ElicitCancel  ElicitAction = "cancel"
)

// ElicitResult is the answer to an elicitation. Content (form mode,
// accept only) is the submitted form.
type ElicitResult struct {
	Action  ElicitAction   `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// Sampler answers sampling/createMessage. Implementations must be safe for
// concurrent use.
type Sampler interface {
	// CreateMessage has a model answer req. ctx ends with the request (see
	// the attribution rules above). An error becomes a JSON-RPC error to
	// the server (see RequestError).
	CreateMessage(ctx context.Context, req SamplingRequest) (SamplingResult, error)
}

// SamplingRequest is one sampling/createMessage.
type SamplingRequest struct {
	Origin
	Messages         []SamplingMessage
	SystemPrompt     string
	MaxTokens        int
	Temperature      *float64
	StopSequences    []string
	ModelPreferences *ModelPreferences
	// IncludeContext is what the server asked to include ("none",
	// "thisServer", "allServers"; "" when absent).
	IncludeContext string
	// Tools and ToolChoice ("auto", "required", "none"; "" when absent)
	// are sampling with tools (SEP-1577).
	Tools      []SamplingTool
	ToolChoice string
	// Metadata is the request's metadata, raw.
	Metadata json.RawMessage
}

// ModelPreferences are a server's wishes about the model.
type ModelPreferences struct {
	Hints                []string // model name hints, in order of preference
	CostPriority         *float64
	SpeedPriority        *float64
	IntelligencePriority *float64
}

// SamplingMessage is one message of a sampling conversation.
type SamplingMessage struct {
	Role    string // "user" or "assistant"
	Content []SamplingContent
}

// The content types of sampling messages.
const (
	SamplingText       = "text"
	SamplingImage      = "image"
	SamplingAudio      = "audio"
	SamplingToolUse    = "tool_use"
	SamplingToolResult = "tool_result"
)

// SamplingContent is one content block of a sampling message; which fields
// are set depends on Type.
type SamplingContent struct {
	Type string `json:"type"`
	// Text of a text block.
	Text string `json:"text,omitempty"`
	// Data (base64) and MIMEType of an image or audio block.
	Data     string `json:"data,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
	// ID, Name and Input of a tool_use block (Input raw JSON).
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// ToolUseID, Content, StructuredContent and IsError of a tool_result
	// block.
	ToolUseID         string            `json:"toolUseId,omitempty"`
	Content           []SamplingContent `json:"content,omitempty"`
	StructuredContent json.RawMessage   `json:"structuredContent,omitempty"`
	IsError           bool              `json:"isError,omitempty"`
}

// SamplingTool is a tool a server offers the model in a sampling request.
type SamplingTool struct {
	Name        string
	Description string
	// InputSchema is the tool's input schema exactly as sent.
	InputSchema json.RawMessage
}

// SamplingResult is a model's answer to a sampling request.
type SamplingResult struct {
	// Model names the model that answered.
	Model string
	// StopReason is MCP's: "endTurn", "maxTokens", "stopSequence",
	// "toolUse", or another string.
	StopReason string
	// Role is "assistant" when empty.
	Role    string
	Content []SamplingContent
}

// RootsLister answers roots/list. Implementations must be safe for
// concurrent use.
type RootsLister interface {
	// Roots returns the roots (directories) the server may work in.
	Roots(ctx context.Context, o Origin) ([]Root, error)
}

// Root is one root: a file:// URI and an optional name.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// RequestError is an error a handler returns to answer the server with a
// JSON-RPC error of a code of its choosing (any other error is answered
// with -32603 and its text, so it must say nothing secret). It is also the
// JSON-RPC error a 2026-07-28 task failed with (see ErrTaskFailed), and
// an error answer carried by a Tunnel.
type RequestError struct {
	Code    int
	Message string
	// Data is the error's data member as sent, if any.
	Data json.RawMessage
}

// Error implements error.
func (e *RequestError) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// CodeUserRejected is the JSON-RPC code of a request the user rejected
// (MCP's example for a rejected sampling request uses -1).
const CodeUserRejected = -1

// ErrBadRequest is wrapped by the errors about a malformed server request
// (answered with -32602).
var ErrBadRequest = errors.New("malformed request from the MCP server")

// wireSamplingParams is sampling/createMessage's params on the wire.
type wireSamplingParams struct {
	Messages         []SamplingMessage `json:"messages"`
	ModelPreferences *struct {
		Hints []struct {
			Name string `json:"name"`
		} `json:"hints"`
		CostPriority         *float64 `json:"costPriority"`
		SpeedPriority        *float64 `json:"speedPriority"`
		IntelligencePriority *float64 `json:"intelligencePriority"`
	} `json:"modelPreferences"`
	SystemPrompt   string          `json:"systemPrompt"`
	IncludeContext string          `json:"includeContext"`
	Temperature    *float64        `json:"temperature"`
	MaxTokens      int             `json:"maxTokens"`
	StopSequences  []string        `json:"stopSequences"`
	Metadata       json.RawMessage `json:"metadata"`
	Tools          []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	} `json:"tools"`
	ToolChoice *struct {
		Mode string `json:"mode"`
	} `json:"toolChoice"`
}

// decodeSampling decodes sampling/createMessage params.
func decodeSampling(params json.RawMessage, o Origin) (SamplingRequest, error) {
	var w wireSamplingParams
	if err := json.Unmarshal(params, &w); err != nil {
		return SamplingRequest{}, fmt.Errorf("%w: sampling/createMessage: %w", ErrBadRequest, err)
	}
	if len(w.Messages) == 0 {
		return SamplingRequest{}, fmt.Errorf("%w: sampling/createMessage has no messages", ErrBadRequest)
	}
	r := SamplingRequest{
		Origin: o, Messages: w.Messages, SystemPrompt: w.SystemPrompt, MaxTokens: w.MaxTokens,
		Temperature: w.Temperature, StopSequences: w.StopSequences, IncludeContext: w.IncludeContext,
		Metadata: w.Metadata,
	}
	if p := w.ModelPreferences; p != nil {
		r.ModelPreferences = &ModelPreferences{CostPriority: p.CostPriority, SpeedPriority: p.SpeedPriority, IntelligencePriority: p.IntelligencePriority}
		for _, h := range p.Hints {
			r.ModelPreferences.Hints = append(r.ModelPreferences.Hints, h.Name)
		}
	}
	for _, t := range w.Tools {
		r.Tools = append(r.Tools, SamplingTool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	if w.ToolChoice != nil {
		r.ToolChoice = w.ToolChoice.Mode
	}
	return r, nil
}

// UnmarshalJSON implements json.Unmarshaler: content may be one block or
// an array of them.
func (m *SamplingMessage) UnmarshalJSON(b []byte) error {
	var w struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	m.Role, m.Content = w.Role, nil
	if len(w.Content) > 0 && w.Content[0] == '[' {
		return json.Unmarshal(w.Content, &m.Content)
	}
	var one SamplingContent
	if err := json.Unmarshal(w.Content, &one); err != nil {
		return err
	}
	m.Content = []SamplingContent{one}
	return nil
}

// MarshalJSON implements json.Marshaler: a text block always carries its
// text, even empty.
func (c SamplingContent) MarshalJSON() ([]byte, error) {
	type plain SamplingContent
	if c.Type != SamplingText {
		return json.Marshal(plain(c))
	}
	return json.Marshal(struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{c.Type, c.Text})
}

// MarshalJSON implements json.Marshaler: the result as MCP's
// CreateMessageResult, its content one block when there is one and an
// array otherwise.
func (r SamplingResult) MarshalJSON() ([]byte, error) {
	role := r.Role
	if role == "" {
		role = "assistant"
	}
	var content any = r.Content
	switch len(r.Content) {
	case 0:
		content = SamplingContent{Type: SamplingText}
	case 1:
		content = r.Content[0]
	}
	return json.Marshal(struct {
		Role       string `json:"role"`
		Content    any    `json:"content"`
		Model      string `json:"model"`
		StopReason string `json:"stopReason,omitempty"`
	}{role, content, r.Model, r.StopReason})
}

// decodeElicit decodes elicitation/create params.
func decodeElicit(params json.RawMessage, o Origin) (ElicitRequest, error) {
	var w struct {
		Mode            string          `json:"mode"`
		Message         string          `json:"message"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
		URL             string          `json:"url"`
		ElicitationID   string          `json:"elicitationId"`
	}
	if err := json.Unmarshal(params, &w); err != nil {
		return ElicitRequest{}, fmt.Errorf("%w: elicitation/create: %w", ErrBadRequest, err)
	}
	r := ElicitRequest{Origin: o, Mode: ElicitMode(w.Mode), Message: w.Message, Schema: w.RequestedSchema, URL: w.URL, ElicitationID: w.ElicitationID}
	switch r.Mode {
	case "", ElicitForm:
		r.Mode = ElicitForm
		var obj map[string]json.RawMessage
		if json.Unmarshal(w.RequestedSchema, &obj) != nil || obj == nil {
			return r, fmt.Errorf("%w: elicitation/create: form mode needs a requestedSchema object", ErrBadRequest)
		}
	case ElicitURL:
		if w.URL == "" || w.ElicitationID == "" {
			return r, fmt.Errorf("%w: elicitation/create: url mode needs url and elicitationId", ErrBadRequest)
		}
	default:
		return r, fmt.Errorf("%w: elicitation/create: unknown mode %q", ErrBadRequest, w.Mode)
	}
	return r, nil
}
