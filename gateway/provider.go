package gateway

import (
	"context"
	"encoding/json"
	"errors"
)

// StopReason says why a turn (or one model call) ended.
type StopReason string

// The stop reasons.
const (
	StopEndTurn         StopReason = "end_turn"          // the model finished
	StopToolUse         StopReason = "tool_use"          // the model called tools (model calls only)
	StopMaxTokens       StopReason = "max_tokens"        // the model hit its token limit
	StopMaxTurnRequests StopReason = "max_turn_requests" // the turn's model-call limit was hit
	StopRefusal         StopReason = "refusal"           // the model refused
	StopCancelled       StopReason = "cancelled"         // the turn's context was cancelled
)

// Usage counts tokens. The input of a model call is InputTokens plus
// CacheReadTokens plus CacheWriteTokens: each input token is counted in
// exactly one of them, by how it was priced.
type Usage struct {
	// InputTokens are the input tokens neither read from nor written to
	// the provider's prompt cache.
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
	// CacheReadTokens are the input tokens read from the prompt cache;
	// CacheWriteTokens those written to it (Anthropic's
	// cache_read_input_tokens and cache_creation_input_tokens).
	CacheReadTokens  int `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int `json:"cacheWriteTokens,omitempty"`
}

// Input returns the input tokens of the call, however priced: InputTokens
// plus CacheReadTokens plus CacheWriteTokens.
func (u Usage) Input() int { return u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens }

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens,
		CacheReadTokens: u.CacheReadTokens + v.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
	}
}

// ToolSpec is a tool as offered to a model.
type ToolSpec struct {
	Name        string
	Description string
	Parameters  json.RawMessage // JSON Schema of the arguments
	// Deferred marks a tool behind tool search, given only to a provider
	// that searches deferred tools itself (DeferredToolser): the model
	// sees its definition once its search finds it.
	Deferred bool
}

// ModelRequest is one call to a model. The zero value of each sampling
// setting means the provider's default.
type ModelRequest struct {
	System   string
	Messages []Message
	Tools    []ToolSpec
	// ToolChoice is ToolChoiceAuto (or ""), ToolChoiceRequired or
	// ToolChoiceNone.
	ToolChoice ToolChoice
	// MaxTokens bounds the answer's tokens (0: the provider's default).
	MaxTokens int
	// Temperature, when set, is the sampling temperature.
	Temperature *float64
	// Stop ends the answer at the first of these sequences.
	Stop []string
	// CacheKey names the conversation the request belongs to (the
	// session): a provider with a prompt cache routes the requests of one
	// key to the same cache (OpenAI's prompt_cache_key). "" for none.
	CacheKey string
}

// ToolChoice says whether the model must, may or must not call tools.
type ToolChoice string

// The tool choices.
const (
	ToolChoiceAuto     ToolChoice = "auto"
	ToolChoiceRequired ToolChoice = "required"
	ToolChoiceNone     ToolChoice = "none"
)

// ModelResponse is a model's complete answer to one ModelRequest.
type ModelResponse struct {
	Message Message // RoleAssistant: text, thinking, tool calls
	Stop    StopReason
	Usage   Usage
	// Model names the model that answered, as the provider reported it
	// ("" if it did not).
	Model string
}

// Delta is a piece of a streamed answer.
type Delta struct {
	Text     string
	Thinking string
	// Call is a piece of a tool call's arguments (nil: none).
	Call *CallDelta
}

// Provider is a model. Implementations are safe for concurrent use.
type Provider interface {
	// Complete sends req to the model and returns its answer, passing text,
	// thinking and the pieces of tool calls' arguments to onDelta as they
	// stream in (onDelta is called from the calling goroutine). It honours
	// ctx: once ctx is done (onDelta may cancel it) it reads no more of the
	// answer and returns, with its error, the answer received so far.
	// Errors wrap ErrProvider.
	Complete(ctx context.Context, req ModelRequest, onDelta func(Delta)) (ModelResponse, error)
}

// ErrProvider is wrapped by errors a Provider returns.
var ErrProvider = errors.New("model provider error")

// ErrContextLength is wrapped, with ErrProvider, by a Provider's error when
// the endpoint refused a request as longer than the model's context window
// (a Provider decides it on the error's type or code; Anthropic's API gives
// the case none, so gateway/anthropic alone reads the error's message).
var ErrContextLength = errors.New("the request is longer than the model's context window")

// Retries is the provider options' rule for a retry count: 0 means def,
// a negative count (the providers' NoRetries) none, anything else itself.
func Retries(configured, def int) int {
	switch {
	case configured == 0:
		return def
	case configured < 0:
		return 0
	}
	return configured
}
