package acp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/internal/inputs/secrets"
	"github.com/acpgate/acpgate/mcpclient"
)

// This file is providers/list, providers/set and providers/disable (ACP,
// unstable): the client sees and changes where the model of every session
// of the connection is sent (endpoint), and the sessions take the change
// at their next turn (agentConfig.model).

// The one provider acpgate has. The protocols it speaks are the
// providers of the model settings (config.ProviderOpenAI and
// config.ProviderAnthropic), whose names are ACP apiTypes.
const mainProvider = "main"

// endpoint is what the client made of the model endpoint with
// providers/set and providers/disable, over what the configuration says,
// for every session of the connection (acpgate serves one per process). It
// is kept in memory only, as the ACP draft asks. Safe for concurrent use.
type endpoint struct {
	mu       sync.Mutex
	gen      uint64       // counts the changes
	disabled bool         // providers/disable: no model at all
	set      *endpointSet // the last providers/set; nil: none
}

// endpointSet is what providers/set gave. It is never modified.
type endpointSet struct {
	apiType string // config.ProviderOpenAI or config.ProviderAnthropic
	baseURL string
	headers map[string]string
}

// state returns the generation of the endpoint (it changes with every
// set and disable), whether it is disabled, and the last set (nil: none).
func (e *endpoint) state() (gen uint64, disabled bool, set *endpointSet) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.gen, e.disabled, e.set
}

// change records a set (disabled false, set given) or a disable.
func (e *endpoint) change(disabled bool, set *endpointSet) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.gen++
	e.disabled = disabled
	if set != nil {
		e.set = set
	}
}

// apply returns model settings m routed as the client set: its protocol,
// base URL and headers replace the configured ones, and the configured
// API key is not sent to an endpoint the client chose (its headers carry
// what it needs). The model and what is known of it stay.
func (e *endpoint) apply(m config.Model) config.Model {
	if _, _, set := e.state(); set != nil {
		m.Provider, m.BaseURL, m.APIKey, m.Headers = set.apiType, set.baseURL, "", set.headers
	}
	return m
}

// endpointURL is the base URL requests of settings m go to: the
// configured one, else its provider's default.
func endpointURL(m config.Model) string {
	if m.ResolvedProvider() == config.ProviderAnthropic {
		return gateway.AnthropicRootURL(m.BaseURL)
	}
	return cmp.Or(m.BaseURL, gateway.OpenAIBaseURL)
}

// model returns session s's model for a new turn, a prompt command or a
// sampling request: the one built for its configuration and model choice,
// built again first when the client changed the endpoint since. Each turn
// calls it once, so a change reaches every session at its next turn and a
// turn in progress finishes on the model it started with.
func (cf *agentConfig) model(ctx context.Context, s configSession) gateway.Provider {
	gen, _, _ := cf.endpoint.state()
	p, built := s.modelBuilt()
	if built == gen {
		return p
	}
	return s.rebuildModel(built, func(sc sessionConfig, choice string) (gateway.Provider, uint64) {
		return cf.provider(ctx, sc, choice)
	})
}

// canRoute reports whether the agent builds its sessions' models from
// settings (Options.Models or Options.Providers), so that the client can
// route them: the providers methods are served only then.
func (cf *agentConfig) canRoute() bool { return cf.opts.Models != nil || cf.opts.Providers != nil }

// providerInfo is one entry of providers/list (ProviderInfo in the ACP
// schema).
type providerInfo struct {
	ProviderID string           `json:"providerId"`
	Supported  []string         `json:"supported"`
	Required   bool             `json:"required"`
	Current    *providerCurrent `json:"current"` // null: disabled
}

// providerCurrent is ProviderCurrentConfig: where the provider sends
// requests. Header values are never shown: _meta.acpgate.headers names
// the headers sent, each value [REDACTED].
type providerCurrent struct {
	APIType string         `json:"apiType"`
	BaseURL string         `json:"baseUrl"`
	Meta    map[string]any `json:"_meta,omitempty"`
}

// providers is the providers methods (ACP unstable): where the model
// requests of every session go. It holds only what they use; safe for
// concurrent use (agentConfig guards the endpoint).
type providers struct {
	conf   *agentConfig
	opts   *Options
	logger *slog.Logger
}

// list answers providers/list: the one provider, "main", speaking
// openai or anthropic (as model.provider says), with the endpoint of the sessions of the default profile (as
// set by the client, else as configured) or null once disabled. It can be
// disabled, so it is not required.
func (pv *providers) list() (any, error) {
	if !pv.conf.canRoute() {
		return nil, acpsdk.NewMethodNotFound(acpsdk.AgentMethodProvidersList)
	}
	info := providerInfo{ProviderID: mainProvider, Supported: []string{config.ProviderOpenAI, config.ProviderAnthropic}}
	if _, disabled, _ := pv.conf.endpoint.state(); !disabled {
		// A profile the configuration no longer has falls back to the
		// defaults, as the settings of no profile.
		sc, _ := pv.conf.sessionConfigFor(pv.opts.Profile)
		m := pv.conf.settings(sc)
		info.Current = &providerCurrent{APIType: m.ResolvedProvider(), BaseURL: endpointURL(m)}
		if len(m.Headers) > 0 {
			redacted := map[string]string{}
			for name := range m.Headers {
				redacted[name] = secrets.Redacted
			}
			info.Current.Meta = map[string]any{"acpgate": map[string]any{"headers": redacted}}
		}
	}
	return map[string]any{"providers": []providerInfo{info}}, nil
}

// set answers providers/set: the sessions' model requests go to
// baseUrl, in the protocol apiType (openai or anthropic), with headers
// from their next turn on (see endpoint.apply). Once the request is
// accepted, every header value that could be a secret
// (secrets.Plausible) is registered, so it is redacted from the logs and
// from the string values of everything sent to the client.
func (pv *providers) set(params json.RawMessage) (any, error) {
	if !pv.conf.canRoute() {
		return nil, acpsdk.NewMethodNotFound(acpsdk.AgentMethodProvidersSet)
	}
	set, ierr := pv.parseSet(params)
	if ierr != nil {
		return nil, ierr.rpcError()
	}
	// Only accepted values are registered: a refused request leaves
	// nothing behind (secrets.Redactor.Register).
	if r := pv.opts.Secrets; r != nil && r.Redactor != nil {
		r.Redactor.Register(slices.Collect(maps.Values(set.headers))...)
	}
	pv.conf.endpoint.change(false, set)
	pv.logger.Info("the client set the model endpoint", "api_type", set.apiType, "base_url", set.baseURL, "headers", slices.Sorted(maps.Keys(set.headers)))
	return struct{}{}, nil
}

// disable answers providers/disable: sessions have no model from
// their next turn on, until providers/set. Disabling a provider acpgate
// does not have changes nothing, as the ACP draft asks.
func (pv *providers) disable(params json.RawMessage) (any, error) {
	if !pv.conf.canRoute() {
		return nil, acpsdk.NewMethodNotFound(acpsdk.AgentMethodProvidersDisable)
	}
	id, ierr := stringParam(params, "providerId")
	if ierr != nil {
		return nil, ierr.rpcError()
	}
	if id == mainProvider {
		pv.conf.endpoint.change(true, nil)
		pv.logger.Info("the client disabled the model endpoint")
	}
	return struct{}{}, nil
}

// parseSet checks the params of providers/set (SetProviderRequest
// in the ACP schema), naming the member at fault; no error quotes a
// header value.
func (pv *providers) parseSet(params json.RawMessage) (*endpointSet, *inputError) {
	var p struct {
		ProviderID *string         `json:"providerId"`
		APIType    *string         `json:"apiType"`
		BaseURL    *string         `json:"baseUrl"`
		Headers    json.RawMessage `json:"headers"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, badParam("", "params must be an object with providerId, apiType and baseUrl: %v", err)
	}
	headers, ierr := pv.headers(p.Headers)
	if ierr != nil {
		return nil, ierr
	}
	switch {
	case p.ProviderID == nil:
		return nil, badParam("providerId", "missing")
	case *p.ProviderID != mainProvider:
		return nil, badParam("providerId", "unknown provider %q (acpgate has one: %q)", *p.ProviderID, mainProvider)
	case p.APIType == nil:
		return nil, badParam("apiType", "missing")
	case *p.APIType != config.ProviderOpenAI && *p.APIType != config.ProviderAnthropic:
		return nil, badParam("apiType", "unsupported protocol %q: acpgate speaks %q (OpenAI-compatible Chat Completions) and %q (Anthropic's Messages API)", *p.APIType, config.ProviderOpenAI, config.ProviderAnthropic)
	case p.BaseURL == nil:
		return nil, badParam("baseUrl", "missing")
	}
	if ierr := checkBaseURL(*p.BaseURL); ierr != nil {
		return nil, ierr
	}
	return &endpointSet{apiType: *p.APIType, baseURL: *p.BaseURL, headers: headers}, nil
}

// headers decodes the headers of providers/set (absent: none)
// and checks them: HTTP header names,
// values without control characters (secrets.CheckHeaderValue), taken literally (a value the secret
// resolver would read as a reference is refused: only acpgate's own
// configuration resolves references).
func (pv *providers) headers(raw json.RawMessage) (map[string]string, *inputError) {
	headers := map[string]string{}
	if kindOf(raw) == "null" || len(raw) == 0 {
		return headers, nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return nil, badParam("headers", "must be an object of strings, got %s", kindOf(raw))
	}
	for name, v := range fields {
		var s string
		if json.Unmarshal(v, &s) != nil {
			return nil, badParam("headers."+name, "must be a string, got %s", kindOf(v))
		}
		headers[name] = s
	}
	for _, name := range slices.Sorted(maps.Keys(headers)) {
		v := headers[name]
		bad := secrets.CheckHeaderValue(v)
		switch {
		case !validHeaderName(name):
			return nil, badParam("headers", "%q is not an HTTP header name", name)
		case bad != nil:
			return nil, badParam("headers."+name, "%v", bad)
		case !secrets.Literal(v):
			return nil, badParam("headers."+name, `a value a client sets is sent as it is: it must not be a secret:// reference or hold "${"`)
		}
	}
	return headers, nil
}

// checkBaseURL checks the baseUrl of providers/set with the rule of the
// URLs a client gives (mcpclient.CheckURL): http or https with a host,
// plain http to a loopback host only; credentials belong in headers. A
// URL that does not parse or carries a password is not quoted.
func checkBaseURL(raw string) *inputError {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return badParam("baseUrl", "%v", mcpclient.ErrURLSyntax)
	case u.User != nil:
		return badParam("baseUrl", "must not carry credentials (user:password@); send them in headers")
	}
	err = mcpclient.CheckURL(raw, false)
	switch {
	case errors.Is(err, mcpclient.ErrInsecureHTTP):
		return badParam("baseUrl", "URL %q: plain http is only allowed to a loopback host (localhost, 127.0.0.0/8, ::1); use https", raw)
	case err != nil:
		return badParam("baseUrl", "%v", err)
	}
	return nil
}

// validHeaderName reports whether name is an HTTP field name (an RFC 9110
// token).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c < 0x80 && c > ' ' && c != 0x7f && !isSeparator(c):
		default:
			return false
		}
	}
	return true
}

// isSeparator reports whether c is an RFC 9110 delimiter.
func isSeparator(c byte) bool { return strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 }
