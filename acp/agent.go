// Package acp is acpgate's ACP translator: it implements the acp-go-sdk
// Agent (and AgentLoader) on top of the session store, the MCP client
// manager, the bridge and the gateway Runner. It speaks ACP only; MCP and
// model logic live in the packages it calls.
package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp/config"
	"github.com/acpgate/acpgate/acp/secrets"
	"github.com/acpgate/acpgate/bridge"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/acpgate/acpgate/session"
)

// Options configures the agent. Store is required.
type Options struct {
	// Name and Version identify the agent in initialize.
	Name, Version string
	// Store persists sessions.
	Store *session.Store
	// Providers returns the model of sessions whose effective model
	// settings (the configuration file's, for the session's profile) are
	// m; nil (with a nil error) means no model is configured. It is called
	// when a session opens and on /reload, concurrently; it should cache
	// what it builds. An error is shown to the user at the session's
	// prompts. When Providers is nil, every session uses Provider.
	Providers func(ctx context.Context, m config.Model) (gateway.Provider, error)
	// Provider is the model of every session when Providers is nil; nil
	// means none is configured.
	Provider gateway.Provider
	// Models, when set, builds the sessions' models and lists what their
	// endpoints offer, for the model picker (session config option
	// "model"); Providers and Provider are then not used. Without it the
	// picker offers the configured model and model.choices, built with
	// Providers.
	Models Models
	// System is the model's system prompt.
	System string
	// NoModelMessage answers prompts of sessions that have no model.
	NoModelMessage string
	// StartupBudget bounds how long session/new and session/load wait for
	// the session's MCP servers (default 5 s); servers still connecting go
	// on in the background.
	StartupBudget time.Duration
	// StartupGrace lets session/new and session/load answer before the
	// budget ends: once one server is ready and no other has settled for
	// this long (default DefaultStartupGrace; NoStartupGrace: wait for
	// all).
	StartupGrace time.Duration
	// MCP is the template of every session's MCP client options (limits,
	// close bounds). Logger, Cwd and OnEvent are set per session (the
	// template's OnEvent, when set, observes every event of the sessions'
	// own servers and of the shared servers after the sessions have
	// handled it); ClientName and
	// ClientVersion default to Name and Version.
	MCP mcpclient.Options
	// Bridge configures how MCP tools and results are bridged.
	Bridge bridge.Options
	// Logger receives the agent's logs. Default: discard.
	Logger *slog.Logger
	// Config returns the configuration in force (it may change between
	// calls: hot reload); nil means no configuration file.
	Config func() *config.Config
	// ConfigChanged, if set, receives a value after each change of what
	// Config returns: the shared servers whose spec changed are then
	// restarted (new sessions pick up every other change when they open).
	ConfigChanged <-chan struct{}
	// Profile is the configuration profile of sessions whose request names
	// none (in _meta.profile).
	Profile string
	// Secrets resolves secret references in servers' env and headers when
	// they start; nil uses the values as they are.
	Secrets *secrets.Resolver
	// WorkspaceTools, when set, is where every session's workspace tools
	// work (the --workspace-tools flag), over the configuration file's
	// workspaceTools; the default is config.WorkspaceClient.
	WorkspaceTools config.WorkspaceTools
	// WorkspaceEnv is the environment of the commands the local
	// run_command runs; nil means acpgate's own.
	WorkspaceEnv []string
}

// DefaultStartupGrace is Options.StartupGrace's default; NoStartupGrace
// turns the grace off (session/new waits for every server, or the budget).
const (
	DefaultStartupGrace               = time.Second
	NoStartupGrace      time.Duration = -1
)

// Agent serves one ACP connection. Its methods are called by the SDK,
// concurrently; all state is guarded.
type Agent struct {
	opts   Options
	logger *slog.Logger
	conn   *acpsdk.AgentSideConnection
	out    *lockedWriter
	runner *gateway.Runner
	// shared runs the servers configured shared: true; nil without a
	// configuration. sharedDone is closed when the goroutine applying
	// configuration changes to it has returned.
	shared     *mcpclient.Manager
	sharedDone chan struct{}
	// subs counts the sessions' subscriptions on shared servers.
	subs sharedSubs

	cards atomic.Uint64 // numbers the cards of server requests

	mu       sync.Mutex
	sessions map[string]*liveSession
	closing  bool
	// clientCaps is what the client said it can do, in initialize.
	clientCaps acpsdk.ClientCapabilities
	// urls holds the URL elicitations waiting for their completion, by
	// urlKey.
	urls map[string]urlElicitation
}

var (
	_ acpsdk.Agent       = (*Agent)(nil)
	_ acpsdk.AgentLoader = (*Agent)(nil)
)

// Serve runs the agent on one connection (in: the client's messages, out:
// ours) until the client closes its end or ctx ends. Then it closes every
// session, which stops all their MCP servers, and syncs the store.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	if opts.Store == nil {
		return errors.New("acp: no session store")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.StartupBudget <= 0 {
		opts.StartupBudget = 5 * time.Second
	}
	if opts.StartupGrace == 0 {
		opts.StartupGrace = DefaultStartupGrace
	}
	if opts.MCP.ClientName == "" {
		opts.MCP.ClientName = opts.Name
	}
	if opts.MCP.ClientVersion == "" {
		opts.MCP.ClientVersion = opts.Version
	}
	a := &Agent{
		opts:     opts,
		logger:   opts.Logger,
		out:      newLockedWriter(redacting(out, opts.Secrets)),
		sessions: map[string]*liveSession{},
		urls:     map[string]urlElicitation{},
	}
	a.runner = gateway.NewRunner(gateway.RunnerOptions{
		System:         opts.System,
		NoModelMessage: opts.NoModelMessage,
		Logger:         opts.Logger,
	})
	sctx, stopShared := context.WithCancel(ctx)
	defer stopShared()
	if err := a.startShared(sctx); err != nil {
		return err
	}
	input := newInputFilter(in, a.out, a.logger)
	a.conn = acpsdk.NewAgentSideConnection(a, a.out, input)
	a.conn.SetLogger(a.logger.With("component", "acp-sdk"))
	input.start()
	select {
	case <-a.conn.Done():
		a.logger.Info("client closed the connection")
	case <-a.out.broken:
		a.logger.Info("writing to the client failed; the client is gone")
	case <-ctx.Done():
		a.logger.Info("shutting down", "cause", context.Cause(ctx))
	}
	stopShared()
	return a.shutdown()
}

// redacting wraps out so that every resolved secret is redacted from each
// frame sent to the client: responses, updates, errors, cards. The SDK
// writes each frame with one Write, so no value is split across two.
func redacting(out io.Writer, r *secrets.Resolver) io.Writer {
	if r == nil || r.Redactor == nil {
		return out
	}
	return r.Redactor.Writer(out)
}

// closeBound is how long closing a session (or shutting down) lets its
// servers go politely before the remaining ones are killed at once.
const closeBound = 3 * time.Second

// shutdown closes every session, in parallel, hurrying servers that are
// not gone within closeBound.
func (a *Agent) shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeBound)
	defer cancel()
	a.mu.Lock()
	a.closing = true
	all := make([]*liveSession, 0, len(a.sessions))
	for _, s := range a.sessions {
		all = append(all, s)
	}
	a.sessions = map[string]*liveSession{}
	a.mu.Unlock()
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, s := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = a.closeSession(ctx, s)
		}()
	}
	wg.Wait()
	if a.shared != nil {
		<-a.sharedDone // Reconfigure must not run concurrently with Close
		errs = append(errs, a.shared.Close(ctx))
	}
	return errors.Join(errs...)
}

// startShared starts the servers configured shared: true, one instance for
// every session, in parallel and in the background (the client's first
// request does not wait for them; a session waits for them within its own
// startup budget, see waitShared), and keeps them in step with the
// configuration until ctx ends: on each Options.ConfigChanged, the shared
// servers whose spec changed are restarted, new ones started and removed
// ones stopped. Without a configuration there is no shared manager.
func (a *Agent) startShared(ctx context.Context) error {
	sc, specs, err := a.sharedSpecs()
	if err != nil || a.config() == nil {
		return err
	}
	mo := a.opts.MCP
	sc.applyLimits(&mo, specs)
	mo.Logger = a.logger.With("session", "shared")
	mo.Prepare = a.prepare
	mo.Redact = a.redact()
	mo.OnEvent = a.sharedEvent
	// Shared servers' requests go to the session whose call they belong
	// to; they have no roots (no one session's directories).
	mo.Elicitor = serverRequests{a: a}
	if a.mayHaveModel() {
		mo.Sampler = serverRequests{a: a}
	}
	m, err := mcpclient.New(specs, &mo)
	if err != nil {
		return fmt.Errorf("shared MCP servers: %w", err)
	}
	a.shared, a.sharedDone = m, make(chan struct{})
	m.Launch()
	go a.followShared(ctx)
	return nil
}

// waitShared waits, until ctx ends, for the shared servers the way a
// session waits for its own (see mcpclient.Manager.WaitSettled): they were
// launched at start-up, so by the time a session opens they have usually
// settled already.
func (a *Agent) waitShared(ctx context.Context, grace time.Duration) {
	if a.shared != nil {
		_ = a.shared.WaitSettled(ctx, grace)
	}
}

// sharedSpecs returns the configuration of the agent's profile and its
// shared servers (with the configured default timeouts).
func (a *Agent) sharedSpecs() (sessionConfig, []mcpclient.ServerSpec, error) {
	sc, err := a.sessionConfigFor(a.opts.Profile)
	if err != nil {
		return sc, nil, err
	}
	specs := sc.shared
	sc.applyLimits(&mcpclient.Options{}, specs)
	return sc, specs, nil
}

// followShared applies each configuration change to the shared servers
// until ctx ends; then it closes sharedDone.
func (a *Agent) followShared(ctx context.Context) {
	defer close(a.sharedDone)
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.opts.ConfigChanged: // nil: blocks until ctx ends
		}
		_, specs, err := a.sharedSpecs()
		if err != nil {
			a.logger.Error("shared MCP servers not reconfigured", "err", err)
			continue
		}
		bctx, cancel := context.WithTimeout(ctx, a.opts.StartupBudget)
		restarted, err := a.shared.Reconfigure(bctx, specs)
		cancel()
		switch {
		case err != nil && ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded):
			a.logger.Error("shared MCP servers not reconfigured", "err", err)
		case len(restarted) > 0:
			a.logger.Info("shared MCP servers restarted after a configuration change", "servers", restarted)
		}
	}
}

// redact is the redaction MCP servers' own output (stderr, log
// notifications) goes through before it is cut or logged: the secret
// resolver's redactor, or nil when there is none.
func (a *Agent) redact() func([]byte) []byte {
	if r := a.opts.Secrets; r != nil && r.Redactor != nil {
		return r.Redactor.RedactBytes
	}
	return nil
}

// sharedEvent passes an event of a shared server to every session's tool
// view (each session offers the shared servers' tools), to its commands
// (each session offers the shared servers' prompts), and an updated
// resource to the sessions that follow it (and have no server of that
// name of their own).
func (a *Agent) sharedEvent(e mcpclient.Event) {
	for _, s := range a.liveSessions() {
		s.sync.OnEvent(e)
		switch e.Kind {
		case mcpclient.EventResourcesChanged, mcpclient.EventStatus:
			a.advertiseCommands(s, false)
		case mcpclient.EventResourceUpdated:
			if a.caller(s).manager(e.Server) == a.shared {
				s.res.updated(resourceKey{e.Server, e.URI})
			}
		}
	}
	if observe := a.opts.MCP.OnEvent; observe != nil {
		observe(e)
	}
}

// liveSessions returns the open sessions, in no order.
func (a *Agent) liveSessions() []*liveSession {
	a.mu.Lock()
	defer a.mu.Unlock()
	all := make([]*liveSession, 0, len(a.sessions))
	for _, s := range a.sessions {
		all = append(all, s)
	}
	return all
}

// lookup finds a live session or returns an invalid-params error naming it.
func (a *Agent) lookup(id acpsdk.SessionId) (*liveSession, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.sessions[string(id)]; ok {
		return s, nil
	}
	return nil, invalidParams("unknown session %q (create it with session/new or session/load first)", id)
}

// invalidParams is a JSON-RPC -32602 error with a readable message.
func invalidParams(format string, args ...any) *acpsdk.RequestError {
	msg := fmt.Sprintf(format, args...)
	return &acpsdk.RequestError{Code: -32602, Message: "Invalid params: " + msg, Data: map[string]any{"error": msg}}
}

// internalError is a JSON-RPC -32603 error with a readable message.
func internalError(format string, args ...any) *acpsdk.RequestError {
	msg := fmt.Sprintf(format, args...)
	return &acpsdk.RequestError{Code: -32603, Message: "Internal error: " + msg, Data: map[string]any{"error": msg}}
}

// Initialize implements acpsdk.Agent. The client's capabilities decide how
// MCP servers' questions reach the user (see elicit).
func (a *Agent) Initialize(ctx context.Context, p acpsdk.InitializeRequest) (acpsdk.InitializeResponse, error) {
	a.mu.Lock()
	a.clientCaps = p.ClientCapabilities
	a.mu.Unlock()
	return acpsdk.InitializeResponse{
		ProtocolVersion: acpsdk.ProtocolVersionNumber,
		AgentInfo:       &acpsdk.Implementation{Name: a.opts.Name, Version: a.opts.Version},
		AuthMethods:     []acpsdk.AuthMethod{},
		AgentCapabilities: acpsdk.AgentCapabilities{
			LoadSession:        true,
			Auth:               acpsdk.AgentAuthCapabilities{Logout: &acpsdk.LogoutCapabilities{}},
			McpCapabilities:    acpsdk.McpCapabilities{Http: true, Sse: true},
			PromptCapabilities: acpsdk.PromptCapabilities{Image: true, EmbeddedContext: true},
			SessionCapabilities: acpsdk.SessionCapabilities{
				List:   &acpsdk.SessionListCapabilities{},
				Close:  &acpsdk.SessionCloseCapabilities{},
				Resume: &acpsdk.SessionResumeCapabilities{},
				// The additional directories are the session's MCP roots,
				// next to its cwd, and the workspace tools may work in them.
				AdditionalDirectories: &acpsdk.SessionAdditionalDirectoriesCapabilities{},
			},
		},
	}, nil
}

// Authenticate implements acpsdk.Agent. acpgate needs no authentication
// and advertises no auth methods (initialize's authMethods is empty), so
// every method id is unknown: invalid params naming it.
func (a *Agent) Authenticate(_ context.Context, p acpsdk.AuthenticateRequest) (acpsdk.AuthenticateResponse, error) {
	return acpsdk.AuthenticateResponse{}, invalidParams("unknown auth method %q: acpgate needs no authentication and advertises no auth methods", p.MethodId)
}
