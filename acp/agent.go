package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp/config"
	"github.com/acpgate/acpgate/acp/secrets"
	"github.com/acpgate/acpgate/bridge"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/acpgate/acpgate/session"
)

// This file is the agent itself: its options, Serve (one connection, from
// the first frame to shutdown), the roles it is made of, initialize, and
// the JSON-RPC errors every method returns.

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
	// UserInstructions is the path of the user's AGENTS.md, whose
	// instructions every session's system prompt holds (a missing file is
	// fine); "" for none.
	UserInstructions string
	// NoModelMessage answers prompts of sessions that have no model.
	NoModelMessage string
	// StartupBudget bounds how long, from a session's opening, what needs
	// its tools (a prompt, /call, /tools, /resources, a prompt command)
	// waits for its MCP servers still connecting (default 5 s); they go on
	// connecting in the background. session/new and session/load never
	// wait for servers.
	StartupBudget time.Duration
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
	// TerminalAuth, when set, is offered in initialize to clients that
	// advertise terminal auth (see auth.go); nil offers no method.
	TerminalAuth *TerminalAuth
}

// Agent serves one ACP connection: it is the ACP method surface and owns
// the session lifecycle (sessions.go, config_options.go), and hands each
// kind of work to the role that does it: the prompt turn (turns), slash
// commands (commands), tool-call approval (permissions), MCP servers'
// requests to the user (userRequests), all speaking to the editor through
// one peer. Its methods are called by the SDK, concurrently; all state is
// guarded.
type Agent struct {
	opts   Options
	logger *slog.Logger
	peer   *peer
	setup  *setup
	runner *gateway.Runner
	turns  *turns
	cmds   *commands
	perms  *permissions
	asks   *userRequests
	tunnel *tunnel // MCP over ACP: the client's acp servers
	// shared runs the servers configured shared: true; nil without a
	// configuration. sharedDone is closed when the goroutine applying
	// configuration changes to it has returned.
	shared     *mcpclient.Manager
	sharedDone chan struct{}
	// subs counts the sessions' subscriptions on shared servers.
	subs sharedSubs
	// ids serialises the lifecycle of each session id.
	ids idLocks

	mu       sync.Mutex
	sessions map[string]*liveSession
	closing  bool
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
	if opts.MCP.ClientName == "" {
		opts.MCP.ClientName = opts.Name
	}
	if opts.MCP.ClientVersion == "" {
		opts.MCP.ClientVersion = opts.Version
	}
	a := newAgent(opts, out)
	sctx, stopShared := context.WithCancel(ctx)
	defer stopShared()
	if err := a.startShared(sctx); err != nil {
		return err
	}
	input := newInputFilter(in, a.peer.out, a.logger)
	input.expect = a.peer.out.expect
	a.peer.conn = acpsdk.NewAgentSideConnection(a, a.peer.out, input)
	a.peer.conn.SetLogger(a.logger.With("component", "acp-sdk"))
	input.start()
	// Shutting down, answering the last requests included, takes at most
	// closeBound: servers not gone by then are killed at once.
	var bound context.Context
	var cancel context.CancelFunc
	select {
	case <-a.peer.conn.Done():
		a.logger.Info("client closed the connection")
		bound, cancel = context.WithTimeout(context.Background(), closeBound)
		defer cancel()
		a.answerAll(bound)
	case <-a.peer.out.broken:
		a.logger.Info("writing to the client failed; the client is gone")
	case <-ctx.Done():
		a.logger.Info("shutting down", "cause", context.Cause(ctx))
	}
	if bound == nil {
		bound, cancel = context.WithTimeout(context.Background(), closeBound)
		defer cancel()
	}
	stopShared()
	return a.shutdown(bound)
}

// answerAll waits, until ctx ends, for every request read before the
// client closed its end to be answered: the SDK has cancelled their
// contexts, so a prompt ends as cancelled and the rest finish quickly.
// A client that closed its reading end too gets no answer: once a write
// fails, it stops waiting.
func (a *Agent) answerAll(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-a.peer.out.broken:
			cancel()
		case <-ctx.Done():
		}
	}()
	if n := a.peer.out.drain(ctx); n > 0 {
		a.logger.Warn("requests left unanswered at shutdown", "count", n)
	}
}

// newAgent builds an agent and its roles on opts (defaulted by Serve);
// the peer's connection is set by Serve.
func newAgent(opts Options, out io.Writer) *Agent {
	a := &Agent{
		opts:     opts,
		logger:   opts.Logger,
		sessions: map[string]*liveSession{},
	}
	var redactor *secrets.Redactor
	if opts.Secrets != nil {
		redactor = opts.Secrets.Redactor
	}
	a.peer = &peer{out: newLockedWriter(out, redactor), logger: opts.Logger}
	a.runner = gateway.NewRunner(gateway.RunnerOptions{
		NoModelMessage: opts.NoModelMessage,
		Logger:         opts.Logger,
	})
	a.setup = &setup{opts: &a.opts, logger: opts.Logger, peer: a.peer, endpoint: &endpoint{}}
	a.perms = &permissions{peer: a.peer}
	a.tunnel = newTunnel(a.peer, opts.Logger)
	a.asks = &userRequests{peer: a.peer, setup: a.setup, logger: opts.Logger, secrets: opts.Secrets, urls: map[string]urlElicitation{}}
	a.turns = &turns{peer: a.peer, setup: a.setup, runner: a.runner, logger: opts.Logger, secrets: opts.Secrets}
	a.cmds = &commands{peer: a.peer, setup: a.setup, runner: a.runner, turns: a.turns}
	a.turns.cmds = a.cmds
	return a
}

// shutdown closes every session, in parallel, hurrying servers that are
// not gone when ctx ends.
func (a *Agent) shutdown(ctx context.Context) error {
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
//
// It reaches the client through initialize (extensions.go), which adds
// sessionCapabilities.delete; providers are advertised when the
// sessions' models are built from settings (setup.canRoute).
func (a *Agent) Initialize(ctx context.Context, p acpsdk.InitializeRequest) (acpsdk.InitializeResponse, error) {
	a.peer.setCapabilities(p.ClientCapabilities)
	var providers *acpsdk.ProvidersCapabilities
	if a.setup.canRoute() {
		providers = &acpsdk.ProvidersCapabilities{}
	}
	return acpsdk.InitializeResponse{
		ProtocolVersion: acpsdk.ProtocolVersionNumber,
		AgentInfo:       &acpsdk.Implementation{Name: a.opts.Name, Version: a.opts.Version},
		AuthMethods:     a.authMethods(p.ClientCapabilities),
		AgentCapabilities: acpsdk.AgentCapabilities{
			LoadSession:        true,
			Auth:               acpsdk.AgentAuthCapabilities{Logout: &acpsdk.LogoutCapabilities{}},
			McpCapabilities:    mcpCapabilities(),
			PromptCapabilities: acpsdk.PromptCapabilities{Image: true, EmbeddedContext: true},
			Providers:          providers,
			SessionCapabilities: acpsdk.SessionCapabilities{
				List:   &acpsdk.SessionListCapabilities{},
				Close:  &acpsdk.SessionCloseCapabilities{},
				Resume: &acpsdk.SessionResumeCapabilities{},
				Fork:   &acpsdk.SessionForkCapabilities{},
				// The additional directories are the session's MCP roots,
				// next to its cwd, and the workspace tools may work in them.
				AdditionalDirectories: &acpsdk.SessionAdditionalDirectoriesCapabilities{},
			},
		},
	}, nil
}
