package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp/jsonrpc"
	"github.com/acpgate/acpgate/bridge"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/hooks"
	"github.com/acpgate/acpgate/internal/base/telemetry"
	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/internal/inputs/secrets"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/acpgate/acpgate/session"
)

// This file is the agent itself: its options, Serve (one connection, from
// the first frame to shutdown), the roles it is made of, initialize, and
// the JSON-RPC errors every method returns.

// DefaultNoModelMessage answers prompts of sessions that have no model
// when Options.NoModelMessage is "": what to configure, and the slash
// commands that work without a model.
const DefaultNoModelMessage = "No model is configured, so I cannot answer prompts yet. " +
	"Configure an OpenAI-compatible model (a model name, and an API key and base URL if needed) and start a new session. " +
	"The slash commands work without a model: /mcp shows the MCP servers, /tools lists their tools, " +
	"and /call <tool> <json-arguments> calls one."

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
	// UserSkills are the user's folders of skills (absolute; a missing
	// one is fine), before the configuration's skills.dirs: see
	// docs/skills.md.
	UserSkills []string
	// NoModelMessage answers prompts of sessions that have no model
	// (default DefaultNoModelMessage).
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
	// HookTrust remembers the user's answers about projects' hooks (nil:
	// none is remembered; each session asks again).
	HookTrust *hooks.TrustStore
	// TerminalAuth, when set, is offered in initialize to clients that
	// advertise terminal auth (see auth.go); nil offers no method.
	TerminalAuth *TerminalAuth
	// Telemetry records the turns, model requests, tool calls and
	// sessions (nil: off; MCP.Telemetry records the servers' side). A
	// trace context in a request's _meta is passed on either way.
	Telemetry *telemetry.Telemetry
}

// Agent serves one ACP connection: it is the ACP method surface and owns
// the session lifecycle (lifecycle.go, config_options.go), and hands each
// kind of work to the role that does it: the prompt turn (turns), slash
// commands (commands), tool-call approval (permissions), MCP servers'
// requests to the user (userRequests), all speaking to the editor through
// one peer. Its methods are called by the connection's handler
// (routes.go), concurrently; all state is guarded.
type Agent struct {
	opts   Options
	logger *slog.Logger
	peer   *peer
	conf   *agentConfig
	runner *gateway.Runner
	turns  *turns
	cmds   *commands
	perms  *permissions
	asks   *userRequests
	tunnel *tunnel // MCP over ACP: the client's acp servers
	auth   *auth
	prov   *providers
	// shared runs the servers configured shared: true (shared.go).
	shared *sharedServers
	// subs counts the sessions' subscriptions on shared servers.
	subs sharedSubs
	// ids serialises the lifecycle of each session id.
	ids idLocks
	// methods dispatches the ACP methods served (routes.go).
	methods *dispatcher
	// advertisedACP: initialize has advertised mcpCapabilities.acp, so
	// mcpServers may list acp servers.
	advertisedACP atomic.Bool

	mu       sync.Mutex
	sessions map[string]*liveSession
	closing  bool
}

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
	if err := a.shared.start(sctx); err != nil {
		return err
	}
	conn := jsonrpc.New(in, a.peer.out, jsonrpc.Options{
		Handler:      a.methods.handle,
		Preempt:      a.methods.preempt,
		MaxLine:      maxFrame,
		Queue:        notificationQueue,
		MaxInFlight:  requestsInFlight,
		CancelMethod: methodCancelRequest,
		Logger:       a.logger.With("component", "acp-conn"),
	})
	a.peer.conn = clientCalls{conn: conn}
	conn.Start()
	// Shutting down, answering the last requests included, takes at most
	// closeBound: servers not gone by then are killed at once.
	var bound context.Context
	var cancel context.CancelFunc
	select {
	case <-conn.Done():
		a.logger.Info("client closed the connection")
		bound, cancel = context.WithTimeout(context.Background(), closeBound)
		defer cancel()
		a.answerAll(bound, conn)
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

// methodCancelRequest is ACP's $/cancel_request: it cancels a request
// either way.
const methodCancelRequest = "$/cancel_request"

// answerAll waits, until ctx ends, for every request read before the
// client closed its end to be answered: the connection has cancelled
// their contexts, so a prompt ends as cancelled and the rest finish
// quickly. A client that closed its reading end too gets no answer: once
// a write fails, it stops waiting.
func (a *Agent) answerAll(ctx context.Context, conn *jsonrpc.Conn) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-a.peer.out.broken:
			cancel()
		case <-ctx.Done():
		}
	}()
	if err := conn.Wait(ctx); err != nil {
		a.logger.Warn("requests left unanswered at shutdown", "err", err)
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
	noModel := opts.NoModelMessage
	if noModel == "" {
		noModel = DefaultNoModelMessage
	}
	a.runner = gateway.NewRunner(gateway.RunnerOptions{
		NoModelMessage: noModel,
		Telemetry:      opts.Telemetry,
		Logger:         opts.Logger,
	})
	a.conf = &agentConfig{opts: &a.opts, logger: opts.Logger, peer: a.peer, endpoint: &endpoint{}}
	a.perms = &permissions{peer: a.peer}
	a.tunnel = newTunnel(a.peer, opts.Logger)
	a.asks = &userRequests{peer: a.peer, conf: a.conf, logger: opts.Logger, secrets: opts.Secrets, urls: map[string]urlElicitation{}}
	a.turns = &turns{peer: a.peer, conf: a.conf, runner: a.runner, logger: opts.Logger, secrets: opts.Secrets}
	a.cmds = &commands{peer: a.peer, conf: a.conf, runner: a.runner, turns: a.turns}
	a.cmds.slashes = a.cmds.registry()
	a.turns.cmds = a.cmds
	a.auth = &auth{opts: &a.opts, logger: opts.Logger, sessions: a.liveSessions}
	a.prov = &providers{conf: a.conf, opts: &a.opts, logger: opts.Logger}
	a.shared = &sharedServers{opts: &a.opts, conf: a.conf, logger: opts.Logger, peer: a.peer, asks: a.asks, cmds: a.cmds, sessions: a.liveSessions}
	a.methods = &dispatcher{table: routes(a), logger: opts.Logger}
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
	if a.shared.mgr != nil {
		<-a.shared.done // Reconfigure must not run concurrently with Close
		errs = append(errs, a.shared.mgr.Close(ctx))
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

// initializeResponse is the schema's InitializeResponse: acp-go-sdk
// v0.13.0's has no sessionCapabilities.delete.
type initializeResponse struct {
	ProtocolVersion   acpsdk.ProtocolVersion `json:"protocolVersion"`
	AgentInfo         *acpsdk.Implementation `json:"agentInfo,omitempty"`
	AuthMethods       []acpsdk.AuthMethod    `json:"authMethods"`
	AgentCapabilities agentCapabilities      `json:"agentCapabilities"`
	// Meta advertises the extensions served: steering, as
	// claude-agent-acp and codex-acp advertise it ({"steering":
	// {"supported": true}}).
	Meta map[string]any `json:"_meta,omitempty"`
}

// agentCapabilities is the schema's AgentCapabilities (see
// initializeResponse).
type agentCapabilities struct {
	LoadSession         bool                          `json:"loadSession,omitempty"`
	Auth                acpsdk.AgentAuthCapabilities  `json:"auth"`
	McpCapabilities     acpsdk.McpCapabilities        `json:"mcpCapabilities"`
	PromptCapabilities  acpsdk.PromptCapabilities     `json:"promptCapabilities"`
	Providers           *acpsdk.ProvidersCapabilities `json:"providers,omitempty"`
	SessionCapabilities sessionCapabilities           `json:"sessionCapabilities"`
	// Meta says that a prompt sent while a turn runs is queued, as
	// claude-agent-acp says it ({"claudeCode": {"promptQueueing": true}}).
	Meta map[string]any `json:"_meta,omitempty"`
}

// clientSession is the schema's ClientSessionCapabilities, which
// acp-go-sdk v0.13.0 lacks: what the client can show of a session beyond
// the updates every client takes.
type clientSession struct {
	// notices: the client shows notice updates (session.notices).
	notices bool
	// compaction: the client shows compaction_update and
	// compaction_summary_chunk (session.compaction).
	compaction bool
}

// sessionCapabilitiesOf reads clientCapabilities.session from
// initialize's params. As the schema says, a member that is absent, null
// or not an object does not advertise the capability.
func sessionCapabilitiesOf(params json.RawMessage) clientSession {
	var p struct {
		ClientCapabilities struct {
			Session json.RawMessage `json:"session"`
		} `json:"clientCapabilities"`
	}
	var session map[string]json.RawMessage
	if json.Unmarshal(params, &p) == nil && kindOf(p.ClientCapabilities.Session) == "object" {
		_ = json.Unmarshal(p.ClientCapabilities.Session, &session)
	}
	object := func(name string) bool { return kindOf(session[name]) == "object" }
	return clientSession{notices: object("notices"), compaction: object("compaction")}
}

// sessionCapabilities is the schema's SessionCapabilities: acp-go-sdk
// v0.13.0's, and delete.
type sessionCapabilities struct {
	List                  *acpsdk.SessionListCapabilities                  `json:"list,omitempty"`
	Close                 *acpsdk.SessionCloseCapabilities                 `json:"close,omitempty"`
	Resume                *acpsdk.SessionResumeCapabilities                `json:"resume,omitempty"`
	Fork                  *acpsdk.SessionForkCapabilities                  `json:"fork,omitempty"`
	Delete                *struct{}                                        `json:"delete,omitempty"`
	AdditionalDirectories *acpsdk.SessionAdditionalDirectoriesCapabilities `json:"additionalDirectories,omitempty"`
}

// initialize answers initialize. The client's capabilities (acp-go-sdk's
// ClientCapabilities, and clientCapabilities.session, which it lacks)
// decide how
// MCP servers' questions reach the user (see elicit); providers are
// advertised when the sessions' models are built from settings
// (agentConfig.canRoute).
func (a *Agent) initialize(_ context.Context, raw json.RawMessage) (any, error) {
	var p acpsdk.InitializeRequest
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	a.peer.setCapabilities(p.ClientCapabilities, sessionCapabilitiesOf(raw))
	session := a.peer.sessionCapabilities()
	a.logger.Debug("client capabilities", "notices", session.notices, "compaction", session.compaction)
	// What is advertised is derived from the routes that exist: a
	// capability is never advertised without its method.
	has := a.methods.serves
	var providers *acpsdk.ProvidersCapabilities
	if a.conf.canRoute() && has(acpsdk.AgentMethodProvidersList) && has(acpsdk.AgentMethodProvidersSet) && has(acpsdk.AgentMethodProvidersDisable) {
		providers = &acpsdk.ProvidersCapabilities{}
	}
	mcp := mcpCapabilities()
	mcp.Acp = mcp.Acp && has(acpsdk.AgentMethodMcpMessage)
	a.advertisedACP.Store(mcp.Acp)
	var meta, capsMeta map[string]any
	if has(methodSteering) {
		meta = map[string]any{"steering": map[string]any{"supported": true}}
	}
	if has(acpsdk.AgentMethodSessionPrompt) {
		capsMeta = map[string]any{"claudeCode": map[string]any{"promptQueueing": true}}
	}
	return initializeResponse{
		Meta:            meta,
		ProtocolVersion: acpsdk.ProtocolVersionNumber,
		AgentInfo:       &acpsdk.Implementation{Name: a.opts.Name, Version: a.opts.Version},
		AuthMethods:     a.auth.methods(p.ClientCapabilities),
		AgentCapabilities: agentCapabilities{
			LoadSession:        has(acpsdk.AgentMethodSessionLoad),
			Auth:               acpsdk.AgentAuthCapabilities{Logout: ptrIf[acpsdk.LogoutCapabilities](has(acpsdk.AgentMethodLogout))},
			McpCapabilities:    mcp,
			PromptCapabilities: acpsdk.PromptCapabilities{Image: true, EmbeddedContext: true, Audio: a.conf.takesAudio()},
			Providers:          providers,
			SessionCapabilities: sessionCapabilities{
				List:   ptrIf[acpsdk.SessionListCapabilities](has(acpsdk.AgentMethodSessionList)),
				Close:  ptrIf[acpsdk.SessionCloseCapabilities](has(acpsdk.AgentMethodSessionClose)),
				Resume: ptrIf[acpsdk.SessionResumeCapabilities](has(acpsdk.AgentMethodSessionResume)),
				Fork:   ptrIf[acpsdk.SessionForkCapabilities](has(acpsdk.AgentMethodSessionFork)),
				Delete: ptrIf[struct{}](has(methodSessionDelete)),
				// The additional directories are the session's MCP roots,
				// next to its cwd, and the workspace tools may work in them.
				AdditionalDirectories: &acpsdk.SessionAdditionalDirectoriesCapabilities{},
			},
			Meta: capsMeta,
		},
	}, nil
}

// ptrIf is a new zero T when ok (a capability advertised: {}), else nil.
func ptrIf[T any](ok bool) *T {
	if ok {
		return new(T)
	}
	return nil
}
