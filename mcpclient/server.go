package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/acpgate/acpgate/internal/base/ratelimit"
	"github.com/acpgate/acpgate/internal/base/sandbox"
	"github.com/acpgate/acpgate/mcpclient/oauth"
	"github.com/acpgate/acpgate/mcpclient/wire"
)

// server is one MCP server of a Manager: its spec, its state and, while
// ready, its connection. A single goroutine (run) connects, watches and
// restarts it; everything else reads snapshots under mu.
type server struct {
	m       *Manager
	spec    ServerSpec
	logger  *slog.Logger
	limiter *ratelimit.Window
	logs    *logGate         // the server's own output, into logger
	reads   *wire.ReadBudget // what reading the server's messages may cost
	auth    *auth            // OAuth sign-in (http and sse)

	cancel context.CancelFunc // stops run; set by launch
	life   context.Context    // run's context; set by launch (under m.mu)
	done   chan struct{}      // closed when run has returned

	// The protocol roles, each a type of its own (see doc.go).
	dialer     *dialer     // the link: transports and the handshake
	lister     *lister     // the catalog: tools, resources, prompts
	caller     *caller     // calls and tasks
	answerer   *answerer   // requests from the server
	subscriber *subscriber // subscriptions and the listen stream
	routes     []notified  // the roles above that take notifications

	mu   sync.Mutex
	st   Status
	conn *conn       // non-nil only while ready
	tail *tailBuffer // stderr tail of the current or last process
}

// roleEnv is what the roles of one server read and never change, given to
// each at construction: the server's spec and logger, the Manager's
// Options (read only after New) and the channel that hurries teardown.
type roleEnv struct {
	spec   ServerSpec
	logger *slog.Logger
	opts   *Options
	hurry  <-chan struct{}
}

func newServer(m *Manager, spec ServerSpec) *server {
	s := &server{
		m:      m,
		spec:   spec,
		logger: m.logger.With("server", spec.Name),
		done:   make(chan struct{}),
		st: Status{
			Name:        spec.Name,
			MaxRestarts: spec.MaxRestarts,
			Transport:   spec.Transport,
			State:       StateConnecting,
			Since:       time.Now(),
		},
	}
	if spec.Transport == TransportStdio && !spec.Sandbox.Off() {
		s.st.Sandbox = &SandboxStatus{Policy: spec.Sandbox.String(), Pending: true}
	}
	o := &m.opts
	s.logs = newLogGate(s.logger, o.Redact, o.LogRate, o.LogBurst, o.Clock)
	s.reads = wire.NewReadBudget(o.Clock, time.Sleep)
	// The roles, each given what it uses; the caller, the answerer and the
	// subscriber ask each other, so the caller's links are set last.
	env := roleEnv{spec: spec, logger: s.logger, opts: o, hurry: m.hurry}
	s.auth = newAuth(env, s)
	s.caller = &caller{env: env, auth: s.auth}
	s.answerer = &answerer{env: env, logs: s.logs, calls: s.caller}
	s.subscriber = &subscriber{env: env, calls: s.caller, owner: s}
	s.lister = newLister(env, &m.mu, s.changedLocked, s.subscriber)
	s.caller.answers, s.caller.tools, s.caller.raw = s.answerer, s.lister, s.subscriber
	s.dialer = &dialer{env: env, logs: s.logs, reads: s.reads, owner: s, auth: s.auth, session: s.subscriber, requests: s.answerer}
	s.routes = []notified{s.lister, s.caller, s.answerer, s.subscriber}
	if spec.CallsPerMinute > 0 {
		s.limiter = ratelimit.New(spec.CallsPerMinute, time.Minute)
	}
	return s
}

// status returns a snapshot of the server's status.
func (s *server) status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	if s.tail != nil {
		st.Stderr = s.tail.String()
	}
	return st
}

func (s *server) setProcessTail(t *tailBuffer) {
	s.mu.Lock()
	s.tail = t
	s.mu.Unlock()
}

// setSandbox records the sandbox of the server's current start.
func (s *server) setSandbox(sb *SandboxStatus) {
	s.mu.Lock()
	s.st.Sandbox = sb
	s.mu.Unlock()
}

// setState moves the server to state with reason (nil for none), drops the
// connection unless ready, and emits the events.
func (s *server) setState(state State, reason error, c *conn, cat *catalog) {
	s.m.mu.Lock() // see changedLocked
	defer s.m.mu.Unlock()
	// The catalog first: whoever sees the new state sees its catalog.
	prevTools, tools := s.lister.reset(cat, state == StateReady)
	s.mu.Lock()
	s.st.State = state
	s.st.Since = time.Now()
	s.st.WasReady = s.st.WasReady || state == StateReady
	s.st.Error, s.st.Err = "", reason
	if reason != nil {
		s.st.Error = reason.Error()
	}
	if sb := s.st.Sandbox; sb != nil {
		// A copy: earlier snapshots keep theirs.
		c := *sb
		c.Hint = ""
		if reason != nil && sb.Enforced && (state == StateFailed || state == StateRestarting) {
			tail := ""
			if s.tail != nil {
				tail = s.tail.String()
			}
			c.Hint = sandbox.Explain(sb.Policy, s.st.Error+"\n"+tail)
		}
		s.st.Sandbox = &c
	}
	s.conn = c
	if c != nil {
		s.st.Transport = c.transport
		s.st.ProtocolVersion = c.init.ProtocolVersion
		s.st.ServerName = c.init.ServerInfo.Name
		s.st.ServerVersion = c.init.ServerInfo.Version
		s.st.Instructions = c.init.Instructions
	}
	toolsChanged := cat != nil || prevTools != tools
	s.mu.Unlock()
	s.m.opts.Telemetry.ServerState(s.m.ctx, s.spec.Name, string(state))
	s.changedLocked(EventStatus, toolsChanged)
}

// changedLocked tells the fleet that s changed, with m.mu held (see
// fleet.changedLocked).
func (s *server) changedLocked(kind EventKind, toolsChanged bool) {
	s.m.fleet.changedLocked(s, kind, toolsChanged)
}

// ready reports whether the server is ready.
func (s *server) ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.State == StateReady
}

// run connects the server and keeps it connected until ctx ends, restarting
// it after a crash or connection loss as the spec allows.
func (s *server) run(ctx context.Context) {
	defer s.m.wg.Done()
	defer close(s.done)
	var restarts []time.Time // restart attempts within the window
	everReady := false
	for {
		c, cat, err := s.connect(ctx)
		if err == nil {
			everReady = true
			s.logger.Info("MCP server ready", "transport", c.transport, "protocol", c.init.ProtocolVersion, "tools", len(cat.tools))
			s.auth.ready()
			s.setState(StateReady, nil, c, &cat)
			err = s.serve(ctx, c)
			if err != nil && !errors.Is(err, ErrNeedsAuth) {
				// Say so at once; tearing a stubborn group down takes time.
				s.logger.Warn("MCP server went away", "err", err)
				next := len(withinWindow(restarts, time.Now(), s.spec.RestartWindow)) + 1
				s.setRestarts(min(next, s.spec.MaxRestarts), time.Time{})
				s.setState(StateRestarting, err, nil, nil)
			}
			s.closeConn(c)
		}
		if ctx.Err() != nil {
			s.setState(StateClosed, nil, nil, nil)
			return
		}
		if errors.Is(err, ErrNeedsAuth) {
			// Not a failure: the server waits for a sign-in, then
			// reconnects; no restart is counted.
			if !s.awaitSignIn(ctx, err) {
				s.setState(StateClosed, nil, nil, nil)
				return
			}
			continue
		}
		restarts = withinWindow(restarts, time.Now(), s.spec.RestartWindow)
		if everReady && !s.spec.NoRestart && len(restarts) >= s.spec.MaxRestarts {
			err = fmt.Errorf("%w: %d restarts within %s: %w", ErrGaveUp, len(restarts), s.spec.RestartWindow, err)
		}
		if !everReady || s.spec.NoRestart || errors.Is(err, ErrGaveUp) {
			s.logger.Error("MCP server failed", "err", err)
			s.setState(StateFailed, err, nil, nil)
			return
		}
		restarts = append(restarts, time.Now())
		wait := s.m.opts.Backoff(len(restarts))
		s.setRestarts(len(restarts), time.Now().Add(wait))
		s.setState(StateRestarting, err, nil, nil)
		s.logger.Info("restarting MCP server", "attempt", len(restarts), "of", s.spec.MaxRestarts, "in", wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			s.setState(StateClosed, nil, nil, nil)
			return
		case <-t.C:
		}
		s.setRestarts(len(restarts), time.Time{})
	}
}

// withinWindow drops the times of ts older than window before now.
func withinWindow(ts []time.Time, now time.Time, window time.Duration) []time.Time {
	i := 0
	for i < len(ts) && now.Sub(ts[i]) >= window {
		i++
	}
	return ts[i:]
}

// stop stops a running server and waits until it is down, then closes its
// oauth.Client, if any.
func (s *server) stop() {
	if s.cancel != nil {
		s.cancel()
		<-s.done
	}
	s.auth.close()
}

// setRestarts records the restart count and when the next attempt starts.
func (s *server) setRestarts(n int, next time.Time) {
	s.mu.Lock()
	s.st.Restarts = n
	s.st.NextAttempt = next
	s.mu.Unlock()
}

// connect dials the server and discovers what it offers, within the
// connect timeout.
func (s *server) connect(ctx context.Context) (c *conn, cat catalog, err error) {
	// The start's span parents the handshake and the discovery; the
	// connection's own life (ctx) is not in it.
	sctx, span := s.m.opts.Telemetry.StartServer(ctx, s.spec.Name, string(s.spec.Transport))
	defer func() { span.End(sctx, err) }()
	dctx, cancel := context.WithTimeout(sctx, s.spec.ConnectTimeout)
	defer cancel()
	spec := s.spec
	if prepare := s.m.opts.Prepare; prepare != nil {
		var err error
		if spec, err = prepare(dctx, spec); err != nil {
			return nil, catalog{}, err
		}
	}
	c, err = s.dialer.dial(ctx, dctx, &spec)
	if err != nil {
		return nil, catalog{}, err
	}
	cat, err = s.lister.discover(dctx, c, refreshAll)
	if err != nil {
		if dctx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("discovery: no answer within %s", s.spec.ConnectTimeout)
		}
		s.closeConn(c)
		return nil, catalog{}, err
	}
	return c, cat, nil
}

// serve watches a ready connection: it re-lists on list_changed and returns
// nil when ctx ends, or the reason when the connection dies.
func (s *server) serve(ctx context.Context, c *conn) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.link.done():
			return c.link.reason()
		case <-s.lister.refreshes():
			s.lister.relist(ctx, c)
		}
	}
}

// closeConn tears a connection down within the Manager's close bounds.
func (s *server) closeConn(c *conn) {
	c.schemas.ttl.stop()
	if c.listen != nil {
		c.listen.stop() // before the notices are waited for: ending it may send one
	}
	_ = c.client.Close() // closes stdin for stdio; ends the session for HTTP
	c.tasks.close()      // no handler of the server's tasks outlives the connection
	if err := c.link.close(s.m.opts.CloseGrace, s.m.opts.CloseTimeout, s.m.hurry); err != nil {
		s.logger.Error("tearing down MCP server", "err", err)
		s.m.fleet.noteCloseErr(fmt.Errorf("server %q: %w", s.spec.Name, err))
	}
	c.notes.Wait()
}

// notify hands a notification from the server to the role it is for. It
// runs on the transport's reader goroutine and must not call into the
// client.
func (s *server) notify(n mcp.JSONRPCNotification) {
	for _, r := range s.routes {
		if r.notify(n.Method, n.Params.AdditionalFields) {
			return
		}
	}
}

// readyConn returns the connection if the server is ready. Otherwise the
// error wraps ErrNotReady, and ErrRestarting while it restarts, or
// ErrNeedsAuth while it waits for sign-in. A connection whose link has
// died (its process exited) before run has recorded the server's next
// state is no longer ready: readyConn waits, within ctx, for that state
// (restarting, failed) and says it, rather than hand out a dead
// connection.
func (s *server) readyConn(ctx context.Context) (*conn, error) {
	for {
		s.m.mu.Lock()
		changed := s.m.changedCh // setState changes the state under m.mu
		s.m.mu.Unlock()
		c, dead, err := s.currentConn()
		if dead == nil {
			return c, err
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %q: %w", ErrNotReady, s.spec.Name, dead.link.reason())
		}
	}
}

// currentConn is readyConn without waiting: the ready connection, or the
// error for the server's state, or (dead) a ready connection whose link
// has died.
func (s *server) currentConn() (c, dead *conn, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.State == StateReady && s.conn != nil {
		select {
		case <-s.conn.link.done():
			return nil, s.conn, nil
		default:
			return s.conn, nil, nil
		}
	}
	if s.st.State == StateRestarting {
		next := "under way"
		if !s.st.NextAttempt.IsZero() {
			next = "next try in " + time.Until(s.st.NextAttempt).Round(time.Millisecond).String()
		}
		return nil, nil, fmt.Errorf("%w: %q is restarting (attempt %d of %d, %s) after: %s",
			ErrRestarting, s.spec.Name, max(s.st.Restarts, 1), s.spec.MaxRestarts, next, s.st.Error)
	}
	if s.st.State == StateNeedsAuth {
		return nil, nil, fmt.Errorf("%w: %w: %q is waiting for sign-in: %s", ErrNotReady, ErrNeedsAuth, s.spec.Name, s.st.Error)
	}
	if s.st.Error != "" {
		return nil, nil, fmt.Errorf("%w: %q is %s: %s", ErrNotReady, s.spec.Name, s.st.State, s.st.Error)
	}
	return nil, nil, fmt.Errorf("%w: %q is %s", ErrNotReady, s.spec.Name, s.st.State)
}

var errTimeout = errors.New("call timeout")

// The small interfaces the roles meet through, besides notified: what one
// role asks of another. newServer wires them.

// serverRequests is what the link asks of the answerer: to serve the
// requests a server sends (as tasks, or plainly), which of them it has a
// handler for (the capabilities it declares), and to answer an input
// request of a 2026-07-28 result.
type serverRequests interface {
	serveTask(ctx context.Context, ct *clientTasks, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, bool)
	serveRequest(ctx context.Context, req transport.JSONRPCRequest, next transport.RequestHandler) (*transport.JSONRPCResponse, error)
	requestHandler(method string) func(context.Context, Origin, json.RawMessage) (any, error)
	answer(ctx context.Context, method string, params any) (any, error)
}

// linkOwner is what the dialer asks of the server whose links it makes:
// to record a process's stderr tail, to hand on a notification (on the
// transport's reader goroutine), and to tear a connection down.
type linkOwner interface {
	setProcessTail(t *tailBuffer)
	setSandbox(sb *SandboxStatus)
	notify(n mcp.JSONRPCNotification)
	closeConn(c *conn)
}

// authTransport is what the dialer asks of the auth role: the round
// tripper of an http or sse link, signing its requests in.
type authTransport interface {
	roundTripper(spec *ServerSpec, l *httpLink) (http.RoundTripper, error)
}

// sessionSetup is what the dialer asks of the subscriber once a
// handshake is made: the log level, the subscriptions again, and the
// 2026-07-28 listen stream (for the connection's life).
type sessionSetup interface {
	setLogLevel(ctx context.Context, c *conn)
	resubscribe(ctx context.Context, c *conn)
	listen(life context.Context, c *conn)
}

// callSignIn is what the caller asks of the auth role when a call is
// refused for want of a sign-in: the OAuth client, a sign-in run, and a
// wait for its end.
type callSignIn interface {
	current() *oauth.Client
	signIn(mode signInMode) (*signInRun, error)
	wait(ctx context.Context, run *signInRun) error
}

// toolIndex is what the caller asks of the lister: whether a listed tool
// of that name satisfies ok.
type toolIndex interface {
	anyTool(name string, ok func(mcp.Tool) bool) bool
}

// rawRequester is what the caller asks of the subscriber: a request mcp-go
// has no method for, sent as JSON-RPC on c.
type rawRequester interface {
	rawRequest(ctx context.Context, c *conn, prefix, method string, params any, header http.Header) (json.RawMessage, error)
}

// resourceUpdated announces that the server updated the resource uri.
func (s *server) resourceUpdated(uri string) {
	s.m.events.push(Event{Kind: EventResourceUpdated, Server: s.spec.Name, URI: uri, Status: s.status()})
}

// callPlumbing is what the subscriber asks of the caller: the error of a
// failed request, told as a call's, and ids for its own requests.
type callPlumbing interface {
	callErr(ctx, callCtx context.Context, c *conn, what string, err error) error
	nextID() uint64
}

// resourceEvents is what the subscriber asks of its server: to announce
// an updated resource (an EventResourceUpdated).
type resourceEvents interface {
	resourceUpdated(uri string)
}

// samples reports whether the server is offered sampling.
func (e roleEnv) samples() bool { return e.opts.Sampler != nil && !e.spec.NoSampling }

// authOwner is what the auth role asks of its server: the life a sign-in
// runs under (counted until release), and to show a sign-in's prompt, and
// its end, in the server's status.
type authOwner interface {
	signInLife() (life context.Context, release func(), err error)
	setPrompt(p oauth.Prompt)
	endPrompt(promptID string, err error)
}

// callFinder is what the answerer asks of the caller: the running call a
// server request belongs to.
type callFinder interface {
	taskCall(params json.RawMessage) *callState
	soleCall() *callState
}

// notified routes a notification from the server to the role it is for.
// It runs on the transport's reader goroutine and must not call into the
// client.
type notified interface {
	notify(method string, params map[string]any) bool
}
