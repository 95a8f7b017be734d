// Package anthropic is a gateway.Provider for Anthropic's Messages API,
// built on the official anthropic-sdk-go (v2).
//
// It streams text, tool use (several calls per answer), extended thinking
// (shown as thinking deltas) and server tool blocks; keeps every content
// block of an answer, thinking blocks and their signatures included, in
// the history exactly as returned (gateway.Message.Native), which the API
// requires when thinking and tools are used together; continues a paused
// turn (stop reason pause_turn) by itself; and marks the request's prompt
// cache breakpoints: the tools, the system prompt, and the newest two
// messages the user side sent (see request.go). Usage reports the cache's
// reads and writes. It searches deferred tools itself
// (gateway.DeferredToolser): tools marked deferred are sent with
// defer_loading, with the API's BM25 tool search tool.
//
// Retries (429, 5xx, 529 overloaded, connection failures) are the SDK's:
// bounded, with exponential backoff, honouring retry-after and
// x-should-retry. Errors say what to check; a prompt longer than the
// model's context window wraps gateway.ErrContextLength.
package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/acpgate/acpgate/gateway"
)

// DefaultBaseURL is Anthropic's API (gateway.AnthropicBaseURL).
const DefaultBaseURL = gateway.AnthropicBaseURL

// Format is the gateway.Native.Provider of this provider's messages.
const Format = "anthropic"

// DefaultMaxTokens is Config.MaxTokens' default: the answer's bound when a
// request sets none (the Messages API requires one).
const DefaultMaxTokens = 16384

// DefaultMaxRetries is Config.MaxRetries' default; NoRetries turns retries
// off. As in every option struct of acpgate, zero means the default and
// "off" is a named negative value.
const (
	DefaultMaxRetries = 3
	NoRetries         = -1
)

// maxPauses bounds the continuations of one answer the API paused
// (pause_turn).
const maxPauses = 8

// The Thinking settings: the model's default (nothing is sent), adaptive
// thinking, or none.
const (
	ThinkingDefault  = ""
	ThinkingAdaptive = "adaptive"
	ThinkingOff      = "off"
)

// MinThinkingBudget is the smallest ThinkingBudget the API accepts.
const MinThinkingBudget = 1024

// Config configures a Provider.
type Config struct {
	// BaseURL is the API root (default DefaultBaseURL); a trailing /v1 is
	// dropped, so the OpenAI-compatible habit of ending it so still works.
	BaseURL string
	// APIKey is the key; "" sends none (the headers may carry one). The
	// environment is never read.
	APIKey  string
	Model   string            // required
	Headers map[string]string // sent with every request
	// MaxTokens bounds an answer when a request sets no bound (0:
	// DefaultMaxTokens).
	MaxTokens int
	// Thinking is ThinkingDefault, ThinkingAdaptive or ThinkingOff;
	// ThinkingBudget, when set (at least MinThinkingBudget), asks for
	// extended thinking with this budget of tokens instead.
	Thinking       string
	ThinkingBudget int
	// MaxRetries bounds the retries of a request answered with 408, 409,
	// 429 or 5xx (529 included), or failing to connect, with exponential
	// backoff honouring retry-after: 0 means DefaultMaxRetries, NoRetries
	// (or any negative value) none.
	MaxRetries int
	// HTTPClient replaces the default HTTP client.
	HTTPClient *http.Client
	// NoImages says the model takes no images (model.vision false): every
	// image becomes a note.
	NoImages bool
}

// Provider talks to one model of the Messages API. Safe for concurrent
// use.
type Provider struct {
	cfg    Config
	client anthropic.Client
}

var _ gateway.Provider = (*Provider)(nil)

// New returns a Provider for cfg.
func New(cfg Config) (*Provider, error) {
	switch {
	case cfg.Model == "":
		return nil, errors.New("anthropic: no model configured")
	case cfg.Thinking != ThinkingDefault && cfg.Thinking != ThinkingAdaptive && cfg.Thinking != ThinkingOff:
		return nil, fmt.Errorf("anthropic: thinking must be %q or %q, not %q", ThinkingAdaptive, ThinkingOff, cfg.Thinking)
	case cfg.ThinkingBudget != 0 && cfg.ThinkingBudget < MinThinkingBudget:
		return nil, fmt.Errorf("anthropic: a thinking budget is at least %d tokens, not %d", MinThinkingBudget, cfg.ThinkingBudget)
	}
	cfg.BaseURL = gateway.AnthropicRootURL(cfg.BaseURL)
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	retries := gateway.Retries(cfg.MaxRetries, DefaultMaxRetries)
	// WithoutEnvironmentDefaults: the SDK reads no ANTHROPIC_* variable
	// and no profile; the key is the configured one or none, so an
	// endpoint a client chose never gets the environment's key.
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(cfg.BaseURL),
		option.WithMaxRetries(retries),
		option.WithMiddleware(gateway.BoundEvents),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	for k, v := range cfg.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return &Provider{cfg: cfg, client: anthropic.NewClient(opts...)}, nil
}

// Complete implements gateway.Provider. An answer the API paused
// (pause_turn) is sent back as it is for the model to go on, up to
// maxPauses times; the blocks of every part make one message.
func (p *Provider) Complete(ctx context.Context, req gateway.ModelRequest, onDelta func(gateway.Delta)) (gateway.ModelResponse, error) {
	params, err := p.params(req)
	if err != nil {
		return gateway.ModelResponse{}, fmt.Errorf("%w: %w", gateway.ErrProvider, err)
	}
	sent := params.Messages
	var ans answer
	base := 0 // the blocks of the parts before: each part numbers its own from 0
	shifted := func(d gateway.Delta) {
		if d.Call != nil {
			d.Call.Index += base
		}
		onDelta(d)
	}
	for pauses := 0; ; pauses++ {
		part, err := p.stream(ctx, params, shifted)
		if part != nil {
			base += len(part.blocks)
		}
		if cerr := context.Cause(ctx); cerr != nil {
			// Stopped (by onDelta, or cancelled): what came so far.
			if part != nil {
				ans.add(part)
			}
			resp, rerr := ans.response()
			return resp, errors.Join(fmt.Errorf("%w: %w", gateway.ErrProvider, cerr), rerr)
		}
		if err != nil {
			return gateway.ModelResponse{}, err
		}
		ans.add(part)
		if part.stop != anthropic.StopReasonPauseTurn || pauses == maxPauses {
			break
		}
		cont, err := ans.assistant()
		if err != nil {
			return gateway.ModelResponse{}, fmt.Errorf("%w: %w", gateway.ErrProvider, err)
		}
		params.Messages = append(sent[:len(sent):len(sent)], cont)
	}
	return ans.response()
}

// stream makes one streamed call and gathers its answer. Once ctx is done
// it reads no more and returns the part received so far.
func (p *Provider) stream(ctx context.Context, params anthropic.MessageNewParams, onDelta func(gateway.Delta)) (*part, error) {
	s := p.client.Messages.NewStreaming(ctx, params)
	defer s.Close()
	pt := &part{}
	for ctx.Err() == nil && s.Next() {
		if err := pt.event(s.Current(), onDelta); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", gateway.ErrProvider, p.cfg.BaseURL, err)
		}
	}
	if ctx.Err() != nil {
		return pt, ctx.Err()
	}
	if err := s.Err(); err != nil {
		return nil, p.explain(err)
	}
	if pt.stop == "" {
		return nil, fmt.Errorf("%w: %s: the response stream ended before the answer did", gateway.ErrProvider, p.cfg.BaseURL)
	}
	return pt, nil
}

// explain turns an SDK error into one that says what to check. It decides
// on the HTTP status and the error's type; the one exception is a prompt
// too long for the context window, which the API reports as a 400
// invalid_request_error with no code of its own: that one is told by its
// message (promptTooLong).
func (p *Provider) explain(err error) error {
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if msg == "" {
			msg = http.StatusText(apiErr.StatusCode)
		}
		switch code, typ := apiErr.StatusCode, apiErr.Type(); {
		case code == http.StatusUnauthorized || typ == "authentication_error":
			return fmt.Errorf("%w: %s rejected the API key (401 Unauthorized: %s); check the API key (ANTHROPIC_API_KEY or model.apiKey)", gateway.ErrProvider, p.cfg.BaseURL, msg)
		case code == http.StatusForbidden || typ == "permission_error":
			return fmt.Errorf("%w: %s refused access (%d: %s); check the API key's permissions and the model", gateway.ErrProvider, p.cfg.BaseURL, code, msg)
		case typ == "not_found_error":
			return gateway.ExplainStatus(p.cfg.BaseURL, p.cfg.Model, http.StatusNotFound, msg)
		case code == http.StatusRequestEntityTooLarge || promptTooLong(apiErr):
			return fmt.Errorf("%w: %w (%s answered %d: %s)", gateway.ErrProvider, gateway.ErrContextLength, p.cfg.BaseURL, code, msg)
		case code >= 200 && code < 300: // an error event in the stream: not retried
			return fmt.Errorf("%w: %s: the answer broke off (%s: %s); try again", gateway.ErrProvider, p.cfg.BaseURL, typ, msg)
		case typ == "billing_error":
			return fmt.Errorf("%w: %s refused the request for billing (%d: %s); check the account's credit", gateway.ErrProvider, p.cfg.BaseURL, code, msg)
		case typ == "rate_limit_error":
			return gateway.ExplainStatus(p.cfg.BaseURL, p.cfg.Model, http.StatusTooManyRequests, msg)
		case code == 529 || typ == "overloaded_error":
			return fmt.Errorf("%w: %s is overloaded (529: %s), still after retries; try again later", gateway.ErrProvider, p.cfg.BaseURL, msg)
		default:
			return gateway.ExplainStatus(p.cfg.BaseURL, p.cfg.Model, code, msg)
		}
	}
	return gateway.ExplainFailure(p.cfg.BaseURL, err)
}

// promptTooLong reports whether the API refused the request because the
// prompt does not fit the model's context window: a 400
// invalid_request_error whose message says "prompt is too long" (the API
// gives that case no error code; this is the one place that reads an
// error's text).
func promptTooLong(e *anthropic.Error) bool {
	return e.StatusCode == http.StatusBadRequest && e.Type() == "invalid_request_error" &&
		strings.HasPrefix(strings.ToLower(e.Message), "prompt is too long")
}
