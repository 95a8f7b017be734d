// Package openaicompat is a gateway.Provider for any OpenAI-compatible Chat
// Completions endpoint (OpenAI, Ollama, vLLM, llama.cpp's server, LM
// Studio, OpenRouter, ...), built on the official openai-go SDK.
package openaicompat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/acpgate/acpgate/gateway"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/respjson"
	"github.com/openai/openai-go/v3/shared"
)

// DefaultBaseURL is OpenAI's API (gateway.OpenAIBaseURL).
const DefaultBaseURL = gateway.OpenAIBaseURL

// DefaultMaxRetries is Config.MaxRetries' default; NoRetries turns retries
// off. As in every option struct of acpgate, zero means the default and
// "off" is a named negative value.
const (
	DefaultMaxRetries = 3
	NoRetries         = -1
)

// Config configures a Provider.
type Config struct {
	BaseURL string            // default DefaultBaseURL
	APIKey  string            // may be empty for local servers
	Model   string            // required
	Headers map[string]string // sent with every request
	// MaxRetries bounds the retries of a request answered with 408, 409,
	// 429 or 5xx, or failing to connect, with exponential backoff honouring
	// Retry-After: 0 means DefaultMaxRetries, NoRetries (or any negative
	// value) none.
	MaxRetries int
	// NoStream asks for whole responses instead of a stream, for servers
	// that cannot stream.
	NoStream bool
	// HTTPClient replaces the default HTTP client.
	HTTPClient *http.Client
	// CacheKey says whether requests carry prompt_cache_key, the session
	// they belong to (gateway.ModelRequest.CacheKey), so that the endpoint
	// routes a session's requests to the same prompt cache. CacheKeyAuto
	// (the zero value) sends it to OpenAI's API (host api.openai.com)
	// only: a server that rejects fields it does not know (some do) must
	// not get it unasked.
	CacheKey CacheKeyMode
	// NoImages says the model takes no images (model.vision false);
	// Audio says it takes audio (model.audio), sent as input_audio
	// parts. Without them every image, or every audio clip, becomes a
	// note.
	NoImages bool
	Audio    bool
}

// CacheKeyMode is Config.CacheKey.
type CacheKeyMode int

// The CacheKey modes.
const (
	CacheKeyAuto   CacheKeyMode = iota // to api.openai.com only
	CacheKeyAlways                     // to every endpoint
	CacheKeyNever                      // to none
)

// Provider talks to one model of an OpenAI-compatible endpoint. Safe for
// concurrent use.
type Provider struct {
	cfg    Config
	client openai.Client
}

// New returns a Provider for cfg.
func New(cfg Config) (*Provider, error) {
	if cfg.Model == "" {
		return nil, errors.New("openaicompat: no model configured")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	retries := gateway.Retries(cfg.MaxRetries, DefaultMaxRetries)
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(retries),
		option.WithMiddleware(gateway.BoundEvents),
	}
	for k, v := range cfg.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	if cfg.CacheKey == CacheKeyAuto {
		cfg.CacheKey = CacheKeyNever
		if u, err := url.Parse(cfg.BaseURL); err == nil && strings.EqualFold(u.Hostname(), "api.openai.com") {
			cfg.CacheKey = CacheKeyAlways
		}
	}
	return &Provider{cfg: cfg, client: openai.NewClient(opts...)}, nil
}

// Complete implements gateway.Provider.
func (p *Provider) Complete(ctx context.Context, req gateway.ModelRequest, onDelta func(gateway.Delta)) (gateway.ModelResponse, error) {
	params, err := p.params(req)
	if err != nil {
		return gateway.ModelResponse{}, fmt.Errorf("%w: %w", gateway.ErrProvider, err)
	}
	var acc accumulator
	if p.cfg.NoStream {
		c, err := p.client.Chat.Completions.New(ctx, params)
		if err != nil {
			return gateway.ModelResponse{}, p.explain(err)
		}
		acc.addCompletion(c, onDelta)
	} else {
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		stream := p.client.Chat.Completions.NewStreaming(ctx, params)
		for ctx.Err() == nil && stream.Next() {
			acc.addChunk(stream.Current(), onDelta)
		}
		err := stream.Err()
		_ = stream.Close()
		if cerr := context.Cause(ctx); cerr != nil {
			// Stopped (by onDelta, or cancelled): what came so far.
			return acc.response(), fmt.Errorf("%w: %w", gateway.ErrProvider, cerr)
		}
		if err != nil {
			return gateway.ModelResponse{}, p.explain(err)
		}
		if err := acc.complete(); err != nil {
			return gateway.ModelResponse{}, fmt.Errorf("%w: %s: %w", gateway.ErrProvider, p.cfg.BaseURL, err)
		}
	}
	return acc.response(), nil
}

// explain turns an SDK error into one that says what to do.
func (p *Provider) explain(err error) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		switch code := apiErr.StatusCode; {
		case contextLength(apiErr):
			return fmt.Errorf("%w: %w (%s answered %d: %s)", gateway.ErrProvider, gateway.ErrContextLength, p.cfg.BaseURL, code, msg)
		case code == http.StatusUnauthorized:
			return fmt.Errorf("%w: %s rejected the API key (401 Unauthorized: %s); check the API key (OPENAI_API_KEY)", gateway.ErrProvider, p.cfg.BaseURL, msg)
		case code == http.StatusForbidden:
			return fmt.Errorf("%w: %s refused access (403 Forbidden: %s); check the API key's permissions", gateway.ErrProvider, p.cfg.BaseURL, msg)
		default:
			return gateway.ExplainStatus(p.cfg.BaseURL, p.cfg.Model, code, msg)
		}
	}
	return gateway.ExplainFailure(p.cfg.BaseURL, err)
}

// contextLengthCode is the error code (or type) with which OpenAI's API,
// and the servers that follow it, refuse a request longer than the
// model's context window.
const contextLengthCode = "context_length_exceeded"

// contextLength reports whether the endpoint refused a request as longer
// than the model's context window, by the error's code or type.
func contextLength(e *openai.Error) bool {
	return e.Code == contextLengthCode || e.Type == contextLengthCode
}

// params converts a gateway request to the SDK's.
func (p *Provider) params(req gateway.ModelRequest) (openai.ChatCompletionNewParams, error) {
	params := openai.ChatCompletionNewParams{Model: shared.ChatModel(p.cfg.Model)}
	if req.MaxTokens > 0 {
		// max_tokens rather than max_completion_tokens: the one every
		// OpenAI-compatible server knows.
		params.MaxTokens = openai.Int(int64(req.MaxTokens))
	}
	if req.Temperature != nil {
		params.Temperature = openai.Float(*req.Temperature)
	}
	if len(req.Stop) > 0 {
		params.Stop = openai.ChatCompletionNewParamsStopUnion{OfStringArray: req.Stop}
	}
	if req.CacheKey != "" && p.cfg.CacheKey == CacheKeyAlways {
		params.PromptCacheKey = openai.String(req.CacheKey)
	}
	if req.ToolChoice != "" && len(req.Tools) > 0 {
		params.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String(string(req.ToolChoice))}
	}
	if req.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	}
	params.Messages = append(params.Messages, messages(req.Messages)...)
	for _, t := range req.Tools {
		var schema map[string]any
		if err := json.Unmarshal(t.Parameters, &schema); err != nil {
			return params, fmt.Errorf("tool %s: input schema is not a JSON object: %w", t.Name, err)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        t.Name,
			Description: openai.String(t.Description),
			Parameters:  shared.FunctionParameters(schema),
		}))
	}
	return params, nil
}

// message converts one history message.
func message(m gateway.Message) (openai.ChatCompletionMessageParamUnion, bool) {
	switch m.Role {
	case gateway.RoleUser:
		return userMessage(m.Content), true
	case gateway.RoleAssistant:
		a := openai.ChatCompletionAssistantMessageParam{}
		if text := m.Text(); text != "" {
			a.Content.OfString = param.NewOpt(text)
		}
		for _, c := range m.ToolCalls {
			args := string(c.Arguments)
			if args == "" {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID:       c.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: args},
				},
			})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, true
	}
	return openai.ChatCompletionMessageParamUnion{}, false
}

// userMessage converts the user's input: text as text, images as image
// parts, resources as text that says what they are.
func userMessage(content []gateway.Content) openai.ChatCompletionMessageParamUnion {
	var parts []openai.ChatCompletionContentPartUnionParam
	onlyText := true
	var text strings.Builder
	for _, c := range content {
		var s string
		switch c.Type {
		case gateway.ContentText:
			s = c.Text
		case gateway.ContentImage, gateway.ContentAudio:
			if part, ok := mediaPart(c); ok {
				onlyText = false
				parts = append(parts, part)
				continue
			}
			s = gateway.PlainText([]gateway.Content{c})
		default:
			s = gateway.PlainText([]gateway.Content{c})
		}
		parts = append(parts, openai.TextContentPart(s))
		if text.Len() > 0 {
			text.WriteString("\n")
		}
		text.WriteString(s)
	}
	if onlyText {
		return openai.UserMessage(text.String())
	}
	return openai.UserMessage(parts)
}

// accumulator assembles a streamed (or whole) response.
type accumulator struct {
	text, thinking, refusal strings.Builder
	calls                   []*toolCall
	byIndex                 map[int64]*toolCall
	finish                  string
	usage                   gateway.Usage
	model                   string
}

type toolCall struct {
	id, name string
	pos      int // in accumulator.calls
	args     strings.Builder
}

// callID is the id of the call: the endpoint's, or one by its position.
func (t *toolCall) callID() string {
	if t.id == "" {
		return fmt.Sprintf("call_%d", t.pos)
	}
	return t.id
}

func (a *accumulator) addChunk(ch openai.ChatCompletionChunk, onDelta func(gateway.Delta)) {
	if ch.Model != "" {
		a.model = ch.Model
	}
	if ch.JSON.Usage.Valid() {
		a.usage = usage(ch.Usage)
	}
	for _, c := range ch.Choices {
		if c.Index != 0 {
			continue
		}
		d := c.Delta
		if r := extraString(d.JSON.ExtraFields); r != "" {
			a.thinking.WriteString(r)
			onDelta(gateway.Delta{Thinking: r})
		}
		if d.Content != "" {
			a.text.WriteString(d.Content)
			onDelta(gateway.Delta{Text: d.Content})
		}
		if d.Refusal != "" {
			a.refusal.WriteString(d.Refusal)
			onDelta(gateway.Delta{Text: d.Refusal})
		}
		for _, tc := range d.ToolCalls {
			if a.byIndex == nil {
				a.byIndex = map[int64]*toolCall{}
			}
			t, ok := a.byIndex[tc.Index]
			if !ok {
				t = &toolCall{pos: len(a.calls)}
				a.byIndex[tc.Index] = t
				a.calls = append(a.calls, t)
			}
			if tc.ID != "" {
				t.id = tc.ID
			}
			t.name += tc.Function.Name
			t.args.WriteString(tc.Function.Arguments)
			onDelta(gateway.Delta{Call: &gateway.CallDelta{Index: t.pos, ID: t.callID(), Name: t.name, Arguments: tc.Function.Arguments}})
		}
		if c.FinishReason != "" {
			a.finish = c.FinishReason
		}
	}
}

func (a *accumulator) addCompletion(c *openai.ChatCompletion, onDelta func(gateway.Delta)) {
	a.usage = usage(c.Usage)
	a.model = c.Model
	if len(c.Choices) == 0 {
		return
	}
	ch := c.Choices[0]
	if r := extraString(ch.Message.JSON.ExtraFields); r != "" {
		a.thinking.WriteString(r)
		onDelta(gateway.Delta{Thinking: r})
	}
	if ch.Message.Content != "" {
		a.text.WriteString(ch.Message.Content)
		onDelta(gateway.Delta{Text: ch.Message.Content})
	}
	a.refusal.WriteString(ch.Message.Refusal)
	for _, tc := range ch.Message.ToolCalls {
		t := &toolCall{id: tc.ID, name: tc.Function.Name, pos: len(a.calls)}
		t.args.WriteString(tc.Function.Arguments)
		a.calls = append(a.calls, t)
		onDelta(gateway.Delta{Call: &gateway.CallDelta{Index: t.pos, ID: t.callID(), Name: t.name, Arguments: tc.Function.Arguments}})
	}
	a.finish = ch.FinishReason
}

// usage converts the SDK's token counts: prompt_tokens counts the cached
// ones too, gateway.Usage.InputTokens does not.
func usage(u openai.CompletionUsage) gateway.Usage {
	cached := int(min(u.PromptTokensDetails.CachedTokens, u.PromptTokens))
	return gateway.Usage{InputTokens: int(u.PromptTokens) - cached, OutputTokens: int(u.CompletionTokens), CacheReadTokens: cached}
}

// extraString returns the reasoning text that some servers (vLLM,
// DeepSeek, Ollama, OpenRouter) put in a non-standard field.
func extraString(fields map[string]respjson.Field) string {
	for _, name := range []string{"reasoning_content", "reasoning"} {
		f, ok := fields[name]
		if !ok { // extra fields are never Valid(): they have no Go type
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// complete reports a stream that ended early: with no finish reason and a
// tool call whose arguments are cut off.
func (a *accumulator) complete() error {
	if a.finish != "" {
		return nil
	}
	for _, c := range a.calls {
		if args := c.args.String(); args != "" && !json.Valid([]byte(args)) {
			return fmt.Errorf("the response stream ended in the middle of the arguments of a call to %q", c.name)
		}
	}
	return nil
}

func (a *accumulator) response() gateway.ModelResponse {
	msg := gateway.Message{Role: gateway.RoleAssistant, Thinking: a.thinking.String()}
	if t := a.text.String(); t != "" {
		msg.Content = []gateway.Content{{Type: gateway.ContentText, Text: t}}
	}
	for _, c := range a.calls {
		args := c.args.String()
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		msg.ToolCalls = append(msg.ToolCalls, gateway.ToolCall{ID: c.callID(), Name: c.name, Arguments: json.RawMessage(args)})
	}
	stop := gateway.StopEndTurn
	switch {
	case a.refusal.Len() > 0 || a.finish == "content_filter":
		stop = gateway.StopRefusal
		if len(msg.Content) == 0 && a.refusal.Len() > 0 {
			msg.Content = []gateway.Content{{Type: gateway.ContentText, Text: a.refusal.String()}}
		}
	case a.finish == "length":
		stop = gateway.StopMaxTokens
	case len(msg.ToolCalls) > 0:
		stop = gateway.StopToolUse
	}
	return gateway.ModelResponse{Message: msg, Stop: stop, Usage: a.usage, Model: a.model}
}
