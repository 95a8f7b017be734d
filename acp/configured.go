package acp

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/acpgate/acpgate/bridge"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/hooks"
	"github.com/acpgate/acpgate/gateway/sysprompt"
	"github.com/acpgate/acpgate/internal/base/sandbox"
	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/acpgate/acpgate/mcpclient/oauth"
)

// This file turns the options and the configuration file into a session's
// settings (agentConfig): profile, model provider, server specs, limits, bridge
// options, OAuth settings and secrets.

// agentConfig is what the options and the configuration file make of a session:
// its profile's configuration, its model, its servers' specs (merged,
// prepared, secrets resolved), its bridge options and its workspace tools.
// It reads Options, which never change after Serve starts; the
// configuration in force comes from Options.Config. Safe for concurrent
// use.
type agentConfig struct {
	opts   *Options
	logger *slog.Logger
	peer   *peer // for the workspace tools that work through the editor
	// endpoint is what the client made of the model endpoint
	// (providers.go).
	endpoint *endpoint
}

// sessionConfig is what the configuration file says about one session: its
// configured servers, tool policy, model settings and limits.
type sessionConfig struct {
	profile string
	servers []mcpclient.ServerSpec // configured, per-session (not shared)
	shared  []mcpclient.ServerSpec // configured shared: true
	model   config.Model           // the file's model settings for the profile
	policy  config.ToolPolicy
	trusted map[string]bool
	prefix  map[string]string
	limits  config.Limits
	// workspace is the file's workspaceTools ("" when it says nothing).
	workspace config.WorkspaceTools
	// sampling is the top-level sampling mode; serverSampling the
	// servers' own settings.
	sampling       config.SamplingMode
	serverSampling map[string]config.Server
	// instructions are the file's instructions for the model: the
	// top-level ones, then the profile's (system_prompt.go).
	instructions []sysprompt.Instructions
	// skillPolicy and skillDirs are the file's skill policy and
	// skills.dirs (skills.go).
	skillPolicy config.SkillPolicy
	skillDirs   []string
	// sandboxes are the profile's sandbox policies, each set (the
	// built-in defaults without a configuration).
	sandboxes config.Sandboxes
	// hooks are the file's hooks: the top-level ones, then the
	// profile's (hooks.go).
	hooks hooks.Set
}

// skillLimit is the bound on the Skills section's list.
func (sc *sessionConfig) skillLimit() int {
	if l := sc.limits.MaxSkillsBytes; l != nil {
		return *l
	}
	return defaultMaxSkillsBytes
}

// samplingPolicy is what the configuration says about one server's
// sampling requests.
type samplingPolicy struct {
	mode      config.SamplingMode
	maxTokens int // > 0
	perMinute int // 0: no limit
}

// samplingFor returns the sampling policy of server: its own settings
// over the limits and top-level mode, over the defaults.
func (sc *sessionConfig) samplingFor(server string) samplingPolicy {
	p := samplingPolicy{mode: sc.sampling, maxTokens: defaultSamplingMaxTokens, perMinute: defaultSamplingPerMinute}
	if p.mode == "" {
		p.mode = config.SamplingAsk
	}
	if v := sc.limits.SamplingMaxTokens; v != nil {
		p.maxTokens = *v
	}
	if v := sc.limits.SamplingPerMinute; v != nil {
		p.perMinute = *v
	}
	s := sc.serverSampling[server]
	if s.Sampling != "" {
		p.mode = s.Sampling
	}
	if s.SamplingMaxTokens != nil {
		p.maxTokens = *s.SamplingMaxTokens
	}
	if s.SamplingPerMinute != nil {
		p.perMinute = *s.SamplingPerMinute
	}
	return p
}

// sessionConfigFor resolves profile against the current configuration.
func (cf *agentConfig) sessionConfigFor(profile string) (sessionConfig, error) {
	sc := sessionConfig{profile: profile, trusted: map[string]bool{}, prefix: map[string]string{}, serverSampling: map[string]config.Server{}}
	if none, err := (&config.Config{}).Effective(""); err == nil {
		sc.sandboxes = none.Sandboxes
	}
	cfg := cf.config()
	if cfg == nil {
		if profile != "" {
			return sc, fmt.Errorf("unknown profile %q: no configuration file is loaded", profile)
		}
		return sc, nil
	}
	eff, err := cfg.Effective(profile)
	if err != nil {
		return sc, err
	}
	sc.policy, sc.limits, sc.model, sc.sampling, sc.workspace = eff.Tools, eff.Limits, eff.Model, eff.Sampling, eff.WorkspaceTools
	sc.instructions = configInstructions(eff)
	sc.skillPolicy, sc.skillDirs = eff.Skills, eff.SkillDirs
	sc.sandboxes = eff.Sandboxes
	if sc.hooks, err = configHooks(eff); err != nil {
		return sc, err
	}
	for _, s := range eff.Servers {
		sc.trusted[s.Name] = s.Trusted
		sc.serverSampling[s.Name] = s.Server
		if s.ToolPrefix != "" {
			sc.prefix[s.Name] = s.ToolPrefix
		}
		spec := specFromConfig(s)
		if spec.Transport == mcpclient.TransportStdio {
			spec.Sandbox = eff.ServerSandbox(s.Server)
		}
		if s.Shared {
			sc.shared = append(sc.shared, spec)
			continue
		}
		sc.servers = append(sc.servers, spec)
	}
	return sc, nil
}

// provider returns the model of a session with configuration sc and the
// model chosen in its model picker ("": the configured one): from
// Options.Models for its model settings, else Options.Providers, else
// Options.Provider; none once the client disabled the endpoint. A
// provider that cannot be built is logged and becomes one whose every
// call fails with the reason, so the session's prompts say what is wrong.
// gen is the endpoint's generation it was built for (see agentConfig.model).
func (cf *agentConfig) provider(ctx context.Context, sc sessionConfig, chosen string) (p gateway.Provider, gen uint64) {
	gen, disabled, _ := cf.endpoint.state()
	if disabled {
		return nil, gen
	}
	return cf.build(ctx, sc, chosen), gen
}

// build builds the model provider returns while the endpoint is enabled.
func (cf *agentConfig) build(ctx context.Context, sc sessionConfig, chosen string) gateway.Provider {
	build := cf.opts.Providers
	if cf.opts.Models != nil {
		build = func(ctx context.Context, m config.Model) (gateway.Provider, error) {
			return cf.opts.Models.Provider(ctx, m)
		}
	}
	if build == nil {
		return cf.opts.Provider
	}
	m := cf.settings(sc)
	if chosen != "" {
		m.Model = chosen
	}
	p, err := build(ctx, m)
	if err != nil {
		cf.logger.Error("model provider", "profile", sc.profile, "err", err)
		what := "the model"
		if sc.profile != "" {
			what = fmt.Sprintf("the model of profile %q", sc.profile)
		}
		return failedProvider{err: fmt.Errorf("%w: %s cannot be set up: %w", gateway.ErrProvider, what, err)}
	}
	return p
}

// failedProvider is the model of a session whose provider could not be
// built: every call fails with err.
type failedProvider struct{ err error }

func (f failedProvider) Complete(context.Context, gateway.ModelRequest, func(gateway.Delta)) (gateway.ModelResponse, error) {
	return gateway.ModelResponse{}, f.err
}

// config returns the configuration in force, or nil.
func (cf *agentConfig) config() *config.Config {
	if cf.opts.Config == nil {
		return nil
	}
	return cf.opts.Config()
}

// specFromConfig converts a configured server.
func specFromConfig(s config.NamedServer) mcpclient.ServerSpec {
	spec := mcpclient.ServerSpec{
		Name: s.Name, Transport: mcpclient.Transport(s.Transport),
		Command: s.Command, Args: s.Args, Env: s.Env, Cwd: s.Cwd,
		URL: s.URL, Headers: s.Headers, AllowInsecureHTTP: s.AllowInsecureHTTP,
		ConnectTimeout: time.Duration(s.Timeout) * time.Millisecond,
		CallTimeout:    time.Duration(s.ToolTimeout) * time.Millisecond,
		Disabled:       !s.IsEnabled(),
		NoRestart:      s.RestartOnCrash != nil && !*s.RestartOnCrash,
		OAuth:          oauthSpec(s.OAuth),
	}
	if s.MaxRestarts != nil {
		spec.MaxRestarts = *s.MaxRestarts
		if *s.MaxRestarts == 0 {
			spec.NoRestart = true
		}
	}
	return spec
}

// merge puts the client's servers over the configured ones, by name.
func (cf *agentConfig) merge(configured, client []mcpclient.ServerSpec) []mcpclient.ServerSpec {
	out := make([]mcpclient.ServerSpec, 0, len(configured)+len(client))
	for _, c := range configured {
		if i := slices.IndexFunc(client, func(s mcpclient.ServerSpec) bool { return s.Name == c.Name }); i >= 0 {
			cf.logger.Info("a server passed by the client replaces the configured one", "server", c.Name)
			continue
		}
		out = append(out, c)
	}
	return append(out, client...)
}

// applyLimits sets the configured limits on a session's MCP options and
// the default timeouts of its specs, and withholds sampling from the
// servers whose sampling is denied.
func (sc *sessionConfig) applyLimits(mo *mcpclient.Options, specs []mcpclient.ServerSpec) {
	l := sc.limits
	if l.MaxServers != nil {
		mo.MaxServers = *l.MaxServers
	}
	if l.MaxTools != nil {
		mo.MaxTools = *l.MaxTools
	}
	if l.CallsPerMinute != nil {
		mo.CallsPerMinute = *l.CallsPerMinute
		if *l.CallsPerMinute == 0 {
			mo.CallsPerMinute = mcpclient.Unlimited
		}
	}
	for i := range specs {
		if specs[i].ConnectTimeout == 0 && l.ConnectTimeout != nil {
			specs[i].ConnectTimeout = time.Duration(*l.ConnectTimeout) * time.Millisecond
		}
		if specs[i].CallTimeout == 0 && l.CallTimeout != nil {
			specs[i].CallTimeout = time.Duration(*l.CallTimeout) * time.Millisecond
		}
		specs[i].NoSampling = sc.samplingFor(specs[i].Name).mode == config.SamplingDeny
	}
}

// bridgeBase is the template of a session's bridge options: the agent's
// Bridge options, with the session's logger (for the injection warnings)
// and, when secrets are resolved, their redaction of what servers tell the
// model.
func (cf *agentConfig) bridgeBase(session string) bridge.Options {
	o := cf.opts.Bridge
	logger := o.Logger
	if logger == nil {
		logger = cf.logger
	}
	o.Logger = logger.With("session", session)
	if o.Redact == nil && cf.opts.Secrets != nil && cf.opts.Secrets.Redactor != nil {
		o.Redact = cf.opts.Secrets.Redactor.Redact
	}
	return o
}

// runOptions sets the session's tool search threshold, the model's
// context window and the caps on what the model writes on a turn's
// options.
func (sc *sessionConfig) runOptions(o *gateway.RunOptions) {
	if t := sc.limits.ToolSearchThreshold; t != nil {
		o.SearchThreshold = *t
		if *t == 0 {
			o.SearchThreshold = gateway.NoToolSearch
		}
	}
	o.ContextWindow = sc.model.ContextWindow
	o.Output = sc.outputLimits()
}

// mediaLimits are the session's bounds on the images and audio sent to
// the model (zero fields: the provider's).
func (sc *sessionConfig) mediaLimits() gateway.MediaLimits {
	var m gateway.MediaLimits
	if l := sc.limits.MaxImageBytes; l != nil {
		m.MaxPartBytes = *l
	}
	if l := sc.limits.MaxImages; l != nil {
		m.MaxParts = *l
	}
	return m
}

// outputLimits are the session's caps on what the model writes (zero
// fields: the gateway's defaults).
func (sc *sessionConfig) outputLimits() gateway.OutputLimits {
	var o gateway.OutputLimits
	if l := sc.limits.MaxAnswerBytes; l != nil {
		o.MaxAnswerBytes = *l
	}
	if l := sc.limits.MaxToolArgumentBytes; l != nil {
		o.MaxArgumentBytes = *l
	}
	return o
}

// bridgeOptions are the session's bridge options: trusted servers, tool
// prefixes and the result cap.
func (sc *sessionConfig) bridgeOptions(base bridge.Options) *bridge.Options {
	o := base
	trusted, prefix := sc.trusted, sc.prefix
	o.Trusted = func(server string) bool { return trusted[server] }
	o.Prefix = func(server string) string { return prefix[server] }
	if sc.limits.MaxResultBytes != nil {
		o.MaxResultBytes = *sc.limits.MaxResultBytes
	}
	return &o
}

// prepareFor is the Prepare hook of a session whose servers from the
// client (its request or /mcp add) fromClient names: only acpgate's own
// configuration resolves secret references, so the client's servers are
// started with their env and headers exactly as given (secret://... and
// ${VAR} taken literally), and the others go through prepare. A client's
// server replaces a configured one of the same name (merge), so its name
// says where a spec came from.
//
// A client's server runs under the profile's clientServerSandbox, and
// nothing the client sends (_meta included) changes that.
func (cf *agentConfig) prepareFor(fromClient func(name string) bool, clientSandbox sandbox.Policy) func(context.Context, mcpclient.ServerSpec) (mcpclient.ServerSpec, error) {
	return func(ctx context.Context, spec mcpclient.ServerSpec) (mcpclient.ServerSpec, error) {
		if fromClient(spec.Name) {
			spec.Sandbox = clientSandbox
			return spec, nil
		}
		return cf.prepare(ctx, spec)
	}
}

// prepare resolves the secret references of a configured spec at server
// start.
func (cf *agentConfig) prepare(ctx context.Context, spec mcpclient.ServerSpec) (mcpclient.ServerSpec, error) {
	if cf.opts.Secrets == nil {
		return spec, nil
	}
	env, err := cf.opts.Secrets.ResolveMap(ctx, spec.Env)
	if err != nil {
		return spec, fmt.Errorf("resolving secrets: %w", err)
	}
	headers, err := cf.opts.Secrets.ResolveMap(ctx, spec.Headers)
	if err != nil {
		return spec, fmt.Errorf("resolving secrets: %w", err)
	}
	oa, err := cf.resolveOAuth(ctx, spec.OAuth)
	if err != nil {
		return spec, err
	}
	spec.Env, spec.Headers, spec.OAuth = env, headers, oa
	return spec, nil
}

// sessionCaller offers a session's own servers and the agent's shared
// ones as one set of tools; the session's win on a name clash.
type sessionCaller struct {
	own, shared *mcpclient.Manager
}

// Tools returns the tools of the session's servers, then those of the
// shared servers whose name no server of the session has.
func (c sessionCaller) Tools() []mcpclient.ServerTool {
	return merged(c, (*mcpclient.Manager).Tools, func(t mcpclient.ServerTool) string { return t.Server })
}

// CallTool calls tool of server, on the Manager that runs it (see manager).
func (c sessionCaller) CallTool(ctx context.Context, server, tool string, args any, opts ...mcpclient.CallOption) (*mcp.CallToolResult, error) {
	return c.manager(server).CallTool(ctx, server, tool, args, opts...)
}

// redact is the redaction MCP servers' own output (stderr, log
// notifications) goes through before it is cut or logged: the secret
// resolver's redactor, or nil when there is none.
func (cf *agentConfig) redact() func([]byte) []byte {
	if r := cf.opts.Secrets; r != nil && r.Redactor != nil {
		return r.Redactor.RedactBytes
	}
	return nil
}

// settings returns the model settings in force for configuration sc (no
// choice applied), routed as the client set (endpoint.apply).
func (cf *agentConfig) settings(sc sessionConfig) config.Model {
	m := sc.model
	if cf.opts.Models != nil {
		m = cf.opts.Models.Settings(sc.model)
	}
	return cf.endpoint.apply(m)
}

// listModels starts listing the models of sc's endpoint, for at most
// catalogWait; the channel gets the list (nil: unknown).
func (cf *agentConfig) listModels(ctx context.Context, sc sessionConfig) <-chan []gateway.ModelInfo {
	ch := make(chan []gateway.ModelInfo, 1)
	if cf.opts.Models == nil {
		ch <- nil
		return ch
	}
	s := cf.settings(sc)
	go func() {
		lctx, cancel := context.WithTimeout(ctx, gateway.DefaultCatalogTimeout)
		defer cancel()
		ch <- cf.opts.Models.Listed(lctx, s)
	}()
	return ch
}

// resolveOAuth resolves the secret references of a spec's oauth settings
// into a copy (the spec's own are left as they are).
func (cf *agentConfig) resolveOAuth(ctx context.Context, o *oauth.Config) (*oauth.Config, error) {
	if o == nil {
		return nil, nil
	}
	out := *o
	for _, f := range []struct {
		key string
		v   *string
	}{{"clientSecret", &out.ClientSecret}, {"identityAssertion", &out.IdentityAssertion}} {
		if *f.v == "" {
			continue
		}
		v, err := cf.opts.Secrets.ResolveKey(ctx, f.key, *f.v)
		if err != nil {
			return nil, fmt.Errorf("resolving oauth.%s: %w", f.key, err)
		}
		*f.v = v
	}
	if len(out.PrivateKey) > 0 {
		v, err := cf.opts.Secrets.ResolveKey(ctx, "privateKey", string(out.PrivateKey))
		if err != nil {
			return nil, fmt.Errorf("resolving oauth.privateKey: %w", err)
		}
		out.PrivateKey = []byte(v)
	}
	return &out, nil
}

// oauthSpec converts a configured server's oauth settings; its secret
// references are resolved by prepare when the server starts.
func oauthSpec(o *config.OAuth) *oauth.Config {
	if o == nil {
		return nil
	}
	out := &oauth.Config{
		Disabled: o.Disabled, ClientID: o.ClientID, ClientSecret: o.ClientSecret, Scopes: o.Scopes,
		ClientMetadataURL: o.ClientMetadataURL, GrantType: o.GrantType, TokenEndpointAuthMethod: o.TokenEndpointAuthMethod,
		PrivateKey: []byte(o.PrivateKey), SigningAlgorithm: o.SigningAlgorithm, DeviceCode: o.DeviceCode,
		IdentityAssertion: o.IdentityAssertion, IDPClientID: o.IDPClientID, IDPIssuer: o.IDPIssuer, IDPTokenEndpoint: o.IDPTokenEndpoint,
		DPoP: o.DPoP, Issuer: o.Issuer, SameOriginTokenEndpoint: o.SameOriginTokenEndpoint,
	}
	if w := o.WorkloadToken; w != nil {
		out.WorkloadTokenFile, out.WorkloadTokenCommand = w.File, w.Command
	}
	return out
}

// takesAudio reports whether the model of a session of the default
// profile takes audio: its settings say so (model.audio, with a provider
// that takes audio), or the agent's one provider does.
func (cf *agentConfig) takesAudio() bool {
	if cf.opts.Models == nil && cf.opts.Providers == nil {
		return gateway.TakesAudio(cf.opts.Provider)
	}
	sc, err := cf.sessionConfigFor("")
	if err != nil {
		return false
	}
	m := cf.settings(sc)
	return m.Audio != nil && *m.Audio && m.ResolvedProvider() != config.ProviderAnthropic
}

// mayHaveModel reports whether sessions can have a model (sampling is
// declared to servers only then).
func (cf *agentConfig) mayHaveModel() bool {
	return cf.opts.Provider != nil || cf.opts.Providers != nil
}

// profile is the configuration profile of a session: the request's
// _meta.profile, else the one the session was created with, else the
// agent's default (--profile).
func (cf *agentConfig) profile(reqMeta map[string]any, stored string) string {
	if p, ok := reqMeta["profile"].(string); ok && p != "" {
		return p
	}
	if stored != "" {
		return stored
	}
	return cf.opts.Profile
}

// policyOf is the policy p points to; nil is off.
func policyOf(p *sandbox.Policy) sandbox.Policy {
	if p == nil {
		return sandbox.Policy{}
	}
	return *p
}
