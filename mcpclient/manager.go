package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpgate/acpgate/internal/base/sandbox"
	"github.com/acpgate/acpgate/internal/base/telemetry"
	"github.com/acpgate/acpgate/mcpclient/oauth"
	"github.com/mark3labs/mcp-go/mcp"
)

// Options configures a Manager. A nil *Options means all defaults.
type Options struct {
	// Logger receives the Manager's logs and every server's stderr, each
	// record carrying server=<name>. Default: discard.
	Logger *slog.Logger
	// Cwd is the working directory of stdio servers whose spec sets none
	// (the session's cwd). Default: the agent's.
	Cwd string
	// OnEvent is called for every status and tool-list change, in order,
	// from a single goroutine. It may call the Manager's read methods
	// (Statuses, Tools, ...) but not Close, Wait, WaitSettled or Start.
	// Wait, WaitSettled, Start and Reconfigure return only once OnEvent
	// has returned from the events of every change before they returned
	// (whether they return nil or ctx's error): a view derived from the
	// events is then as current as the catalog. So OnEvent must return
	// promptly.
	OnEvent func(Event)
	// MaxServers and MaxTools limit the servers started and the tools
	// offered; what is kept is the first servers, and the first tools, in
	// spec order. Defaults: DefaultMaxServers, DefaultMaxTools.
	MaxServers int
	MaxTools   int
	// CallsPerMinute is the default per-server rate limit
	// (DefaultCallsPerMinute); Unlimited turns it off.
	CallsPerMinute int
	// CloseGrace is how long a stdio server gets to exit after its stdin is
	// closed before SIGTERM; CloseTimeout is when SIGKILL follows.
	CloseGrace   time.Duration
	CloseTimeout time.Duration
	// Backoff is the wait before restart attempt n (1-based). Default:
	// 1s, 2s, 4s, 8s, 16s, then 30s.
	Backoff func(n int) time.Duration
	// Prepare, if set, is called before every start of a server (the first
	// and each restart) with its spec, and returns the spec to start it
	// with: this is where secret references in Env and Headers are
	// resolved, as late as possible. An error fails that start; the
	// server's status carries the error, which must not contain secret
	// values.
	Prepare func(ctx context.Context, spec ServerSpec) (ServerSpec, error)
	// MaxMessageSize bounds one message line from a stdio server
	// (DefaultMaxMessageSize). StderrTail is how much stderr Status keeps
	// (DefaultStderrTail).
	MaxMessageSize int
	StderrTail     int
	// Sandbox runs stdio servers under their spec's Sandbox policy; nil
	// enforces none: a server whose policy is not off fails to start,
	// unless the policy says failIfUnavailable: false (it runs unconfined,
	// and Status.Sandbox says so). Workspace is what a
	// workspace-write policy may write (the session's cwd and additional
	// directories; default: Cwd).
	Sandbox   *sandbox.Launcher
	Workspace []string
	// Guard, if set, is told about every stdio server's process group
	// (see Guard). Default: none.
	Guard Guard
	// Redact, if set, is applied to every line of a server's own output
	// (stderr, stray stdout lines, notifications/message data) whole,
	// before the line is cut to a bound, logged or kept in Status.Stderr, so
	// that no cut can split what it would replace. It must not modify its
	// argument and is called concurrently.
	Redact func([]byte) []byte
	// LogRate and LogBurst limit the log records a server's own output
	// makes (stderr, stray stdout, notifications/message together): LogRate
	// lines a second, up to LogBurst at once (defaults DefaultLogRate,
	// DefaultLogBurst; Unlimited turns the limit off). Dropped lines are
	// counted in one record a second; Status.Stderr still gets every
	// stderr line.
	LogRate  int
	LogBurst int
	// Clock is the clock the log rate limit reads (default time.Now).
	Clock func() time.Time
	// ClientName and ClientVersion identify the client to servers (the
	// clientInfo of initialize). Defaults: DefaultClientName and
	// DefaultClientVersion.
	ClientName    string
	ClientVersion string
	// OAuthStore keeps the tokens of http and sse servers that need a
	// sign-in, across Managers (nil: in memory, for this Manager only).
	OAuthStore *oauth.Store
	// SignIn, if set, presents a sign-in prompt for the named server to
	// the user (an URL to open, or a device code). The Manager calls it
	// for a server that needs a sign-in (once per need; see Login), and
	// for a call that needs more scope (the call waits for the sign-in).
	// It may return at once or when the user is done; it must return when
	// ctx ends (the sign-in timed out, was replaced, or Close was called).
	// Return an error wrapping oauth.ErrDeclined when the user said no.
	// Nil: no interactive sign-in; such servers wait in StateNeedsAuth.
	SignIn func(ctx context.Context, server string, p oauth.Prompt) error
	// OAuthSecret, if set, is told every token and secret of a sign-in
	// (for the redactor). It must be safe for concurrent use.
	OAuthSecret func(string)
	// RunCommand runs the workload token command of a server's sign-in
	// (oauth.Options.RunCommand); nil refuses such servers.
	RunCommand func(ctx context.Context, limit int, name string, args ...string) ([]byte, error)
	// SignInTimeout bounds the user's part of one sign-in (default
	// oauth.DefaultRedirectTimeout).
	SignInTimeout time.Duration
	// OAuthTimeouts bound the requests to authorization servers (connect,
	// headers, whole request) and each token refresh (see oauth.Timeouts;
	// zero fields: the defaults). A call that waits for a token longer
	// than its own timeout fails naming the token endpoint (it wraps
	// ErrCallTimeout and oauth.ErrNoAnswer).
	OAuthTimeouts oauth.Timeouts
	// Elicitor, Sampler and Roots answer the requests servers send
	// (elicitation/create, sampling/createMessage, roots/list; see
	// requests.go for how a request is attributed to a call). Each
	// capability is declared in initialize exactly when its handler is
	// set: elicitation (form and url), sampling (with tools; not to a
	// server whose spec sets NoSampling), roots (with listChanged, see
	// RootsChanged). Without a handler the request is refused. Default:
	// none.
	Elicitor Elicitor
	Sampler  Sampler
	Roots    RootsLister
	// Tunnel carries the messages of acp servers (TransportACP; see
	// Tunnel). Without it such a server fails, its spec invalid.
	Tunnel Tunnel
	// Telemetry records a span per request, server start and sign-in, the
	// duration of requests and the servers' state changes (nil: off).
	Telemetry *telemetry.Telemetry
	// Trace is the parent of what the Manager does on its own (starting
	// servers, listing their tools): the trace context of the request that
	// opened the session. Every request carries the trace context of its
	// context in its _meta (and, to HTTP servers, in the traceparent
	// header), with telemetry off too.
	Trace telemetry.Parent
}

// The defaults of Options.ClientName and Options.ClientVersion. An agent
// sets its own version, so that servers see the binary's.
const (
	DefaultClientName    = "acpgate"
	DefaultClientVersion = "(devel)"
)

// DefaultBackoff is the restart backoff: 1, 2, 4, 8, 16, then 30 seconds.
func DefaultBackoff(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	if n > 5 {
		return 30 * time.Second
	}
	return time.Duration(1<<(n-1)) * time.Second
}

func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.DiscardHandler)
	}
	if out.MaxServers <= 0 {
		out.MaxServers = DefaultMaxServers
	}
	if out.MaxTools <= 0 {
		out.MaxTools = DefaultMaxTools
	}
	if out.CallsPerMinute == 0 {
		out.CallsPerMinute = DefaultCallsPerMinute
	}
	if out.CloseGrace <= 0 {
		out.CloseGrace = DefaultCloseGrace
	}
	if out.CloseTimeout <= 0 {
		out.CloseTimeout = DefaultCloseTimeout
	}
	if out.Backoff == nil {
		out.Backoff = DefaultBackoff
	}
	if out.MaxMessageSize <= 0 {
		out.MaxMessageSize = DefaultMaxMessageSize
	}
	if out.StderrTail <= 0 {
		out.StderrTail = DefaultStderrTail
	}
	if out.LogRate == 0 {
		out.LogRate = DefaultLogRate
	}
	if out.LogBurst <= 0 {
		out.LogBurst = DefaultLogBurst
	}
	if out.Clock == nil {
		out.Clock = time.Now
	}
	if out.ClientName == "" {
		out.ClientName = DefaultClientName
	}
	if out.ClientVersion == "" {
		out.ClientVersion = DefaultClientVersion
	}
	return out
}

// Manager owns the MCP servers of one session. All methods are safe for
// concurrent use. Close must be called to stop its servers.
type Manager struct {
	opts   Options
	logger *slog.Logger
	cur    atomic.Pointer[serverList] // replaced whole by Reconfigure
	events *eventQueue

	ctx    context.Context // the servers' life; cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // run goroutines

	hurry     chan struct{} // closed when Close's context ends: SIGKILL now
	hurryOnce sync.Once

	mu        sync.Mutex
	started   bool
	closing   bool
	closed    chan struct{}
	closeErrs []error
	changedCh chan struct{} // closed and replaced on every change

	fleet *fleet // the servers: their list, reconfiguration, events
}

// fleet is the Manager's servers as a whole: the published list and its
// rebuilding (Reconfigure), launching them, finding one by name, the
// events and tool allocation that follow a change, and the request path
// every call takes to a server. It holds the Manager (m) and reaches its
// state under m.mu; safe for concurrent use.
type fleet struct {
	m *Manager
}

// New returns a Manager for specs. It fails only when the specs cannot be
// told apart (a missing or duplicate name); a spec that is otherwise wrong,
// or over the server limit, becomes a failed server whose Status says why.
func New(specs []ServerSpec, opts *Options) (*Manager, error) {
	o := opts.withDefaults()
	m := &Manager{
		opts:      o,
		logger:    o.Logger,
		hurry:     make(chan struct{}),
		closed:    make(chan struct{}),
		changedCh: make(chan struct{}),
	}
	m.fleet = &fleet{m: m}
	list, err := m.fleet.buildList(specs, nil)
	if err != nil {
		return nil, err // nothing started yet: no goroutine to leak
	}
	m.ctx, m.cancel = context.WithCancel(o.Trace.Into(context.Background()))
	m.events = newEventQueue(o.OnEvent)
	m.cur.Store(list)
	return m, nil
}

// serverList is the Manager's servers, in spec order. It is never modified
// once published.
type serverList struct {
	servers []*server
	byName  map[string]*server
}

// list returns the current servers.
func (fl *fleet) list() *serverList { return fl.m.cur.Load() }

// buildList makes the servers for specs, reusing those of keep (by name)
// whose spec is unchanged.
func (fl *fleet) buildList(specs []ServerSpec, keep map[string]*server) (*serverList, error) {
	l := &serverList{byName: make(map[string]*server, len(specs))}
	enabled := 0
	for i, spec := range specs {
		if spec.Name == "" {
			return nil, fmt.Errorf("%w: server #%d has no name", ErrInvalidSpec, i+1)
		}
		if _, dup := l.byName[spec.Name]; dup {
			return nil, fmt.Errorf("%w: duplicate server name %q", ErrInvalidSpec, spec.Name)
		}
		full := spec.withDefaults(fl.m.opts.CallsPerMinute)
		if old, ok := keep[spec.Name]; ok && reflect.DeepEqual(old.spec, full) {
			if !spec.Disabled {
				enabled++
			}
			l.servers = append(l.servers, old)
			l.byName[spec.Name] = old
			continue
		}
		s := newServer(fl.m, full)
		invalid := spec.Validate()
		if invalid == nil && full.Transport == TransportACP && fl.m.opts.Tunnel == nil {
			invalid = fmt.Errorf("%w: server %q: acp servers are not supported here (no tunnel to the ACP client)", ErrInvalidSpec, spec.Name)
		}
		switch {
		case spec.Disabled:
			s.st.State = StateClosed
			s.st.Warning = "disabled"
		case invalid != nil:
			s.st.State, s.st.Error = StateFailed, invalid.Error()
		case enabled >= fl.m.opts.MaxServers:
			s.st.State = StateFailed
			s.st.Error = fmt.Sprintf("%v: at most %d servers per session; %q was not started", ErrLimit, fl.m.opts.MaxServers, spec.Name)
		default:
			enabled++
		}
		l.servers = append(l.servers, s)
		l.byName[spec.Name] = s
	}
	return l, nil
}

// Reconfigure changes the Manager's servers to specs: servers whose spec is
// unchanged keep running untouched; changed and removed ones are stopped
// (as by Close), and changed and new ones are started (a changed one keeps
// its resource subscriptions: see Subscribe). It waits like Start
// and returns the names of the servers it (re)started. Safe for concurrent
// use with everything but Close.
func (m *Manager) Reconfigure(ctx context.Context, specs []ServerSpec) ([]string, error) {
	return m.fleet.reconfigure(ctx, specs, "")
}

// Restart stops the server called name and starts it again with the
// same spec (a new process or connection; its resource subscriptions are
// made again), waiting like Start. The error wraps ErrUnknownServer for a
// name the Manager does not have, or ErrClosed. Safe for concurrent use
// with everything but Close.
func (m *Manager) Restart(ctx context.Context, name string) error {
	if _, ok := m.fleet.list().byName[name]; !ok {
		return fmt.Errorf("%w %q", ErrUnknownServer, name)
	}
	_, err := m.fleet.reconfigure(ctx, m.Specs(), name)
	return err
}

// Specs returns the specs of the Manager's servers, in order, as given to
// New or Reconfigure (with defaults filled in). Safe for concurrent use.
func (m *Manager) Specs() []ServerSpec {
	l := m.fleet.list()
	out := make([]ServerSpec, len(l.servers))
	for i, s := range l.servers {
		out[i] = s.spec
	}
	return out
}

// reconfigure is Reconfigure, with the server called renew (if any) made
// anew even when its spec is unchanged.
func (fl *fleet) reconfigure(ctx context.Context, specs []ServerSpec, renew string) ([]string, error) {
	fl.m.mu.Lock()
	if fl.m.closing {
		fl.m.mu.Unlock()
		return nil, ErrClosed
	}
	started := fl.m.started
	fl.m.mu.Unlock()
	old := fl.list()
	keep := old.byName
	if renew != "" {
		keep = maps.Clone(keep)
		delete(keep, renew)
	}
	next, err := fl.buildList(specs, keep)
	if err != nil {
		return nil, err
	}
	var stopped []*server
	for _, s := range old.servers {
		if next.byName[s.spec.Name] != s {
			stopped = append(stopped, s)
		}
	}
	var wg sync.WaitGroup
	for _, s := range stopped {
		wg.Add(1)
		go func() { defer wg.Done(); s.stop() }()
	}
	wg.Wait()
	for _, s := range next.servers {
		// A server replaced under its name keeps its resource
		// subscriptions: they are made again when it is ready.
		if was := old.byName[s.spec.Name]; was != nil && was != s {
			for _, uri := range was.subscriber.subs.list() {
				s.subscriber.subs.set(uri, true)
			}
		}
	}
	var restarted []string
	fl.m.mu.Lock()
	fl.m.cur.Store(next)
	for _, s := range next.servers {
		if old.byName[s.spec.Name] == s {
			continue
		}
		restarted = append(restarted, s.spec.Name)
		if started && s.st.State == StateConnecting {
			fl.launch(s)
		}
	}
	fl.m.mu.Unlock()
	for _, s := range next.servers {
		if old.byName[s.spec.Name] != s {
			fl.changed(s, EventStatus, true)
		}
	}
	for _, s := range stopped {
		if next.byName[s.spec.Name] == nil {
			fl.changed(s, EventToolsChanged, true)
		}
	}
	return restarted, fl.m.Wait(ctx)
}

// launch starts s's run goroutine, unless Close has begun (then s is
// marked closed). Called with m.mu held.
func (fl *fleet) launch(s *server) {
	if fl.m.closing {
		s.mu.Lock()
		s.st.State = StateClosed
		s.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(fl.m.ctx)
	s.cancel, s.life = cancel, ctx
	fl.m.wg.Add(1)
	go s.run(ctx)
}

// Start connects every enabled server in parallel and waits until each is
// ready or failed, or ctx ends, whichever is first. Servers still connecting
// when ctx ends go on connecting; a slow or broken server never holds up or
// fails the others. The returned error is ctx's, if it ended first. Calling
// Start again only waits.
func (m *Manager) Start(ctx context.Context) error {
	m.Launch()
	return m.Wait(ctx)
}

// Launch starts connecting every enabled server in parallel, without
// waiting (see Wait and WaitSettled). Calling it again, or after Start or
// Close, does nothing.
func (m *Manager) Launch() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started || m.closing {
		return
	}
	m.started = true
	for _, s := range m.fleet.list().servers {
		if s.st.State == StateConnecting {
			m.fleet.launch(s)
		}
	}
}

// Wait blocks until no server is connecting, or ctx ends (returning its
// error); either way, then until Options.OnEvent has seen every change so
// far.
func (m *Manager) Wait(ctx context.Context) error { return m.WaitSettled(ctx, 0) }

// WaitSettled is Wait that may return early: once at least one server is
// ready, it returns as soon as no server has changed for grace (the servers
// still connecting then are slow, and go on connecting). grace <= 0 is
// Wait. Like Wait, it returns only once Options.OnEvent has seen every
// change so far.
func (m *Manager) WaitSettled(ctx context.Context, grace time.Duration) error {
	defer m.events.flush()
	quiet := time.NewTimer(time.Hour)
	quiet.Stop()
	defer quiet.Stop()
	for {
		m.mu.Lock()
		ch := m.changedCh
		m.mu.Unlock()
		if !m.fleet.anyIn(StateConnecting) {
			return nil
		}
		var quietC <-chan time.Time
		if grace > 0 && m.fleet.anyIn(StateReady) {
			quiet.Reset(grace)
			quietC = quiet.C
		}
		select {
		case <-ch:
			quiet.Stop()
		case <-quietC:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// anyIn reports whether a server is in state.
func (fl *fleet) anyIn(state State) bool {
	for _, s := range fl.list().servers {
		if s.status().State == state {
			return true
		}
	}
	return false
}

// Close stops every server in parallel and returns when all are gone: stdio
// servers get their stdin closed, then CloseGrace to exit, then SIGTERM to
// their whole process group, then SIGKILL at CloseTimeout; HTTP sessions are
// ended. If ctx ends first, the remaining groups are killed at once; Close
// still returns only when they are gone. Idempotent and safe to call
// concurrently; every call returns the same error.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	first := !m.closing
	m.closing = true
	neverStarted := !m.started
	m.mu.Unlock()
	if first && neverStarted {
		for _, s := range m.fleet.list().servers {
			if s.status().State == StateConnecting {
				s.setState(StateClosed, nil, nil, nil)
			}
		}
	}
	if first {
		m.cancel()
		go func() {
			for _, s := range m.fleet.list().servers {
				s.auth.close() // ends token flights, which outlive their requests
			}
			m.wg.Wait()
			m.events.close()
			close(m.closed)
		}()
	}
	select {
	case <-m.closed:
	case <-ctx.Done():
		m.hurryOnce.Do(func() { close(m.hurry) })
		<-m.closed
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return errors.Join(m.closeErrs...)
}

func (fl *fleet) noteCloseErr(err error) {
	fl.m.mu.Lock()
	fl.m.closeErrs = append(fl.m.closeErrs, err)
	fl.m.mu.Unlock()
}

// server finds a server by name.
func (fl *fleet) server(name string) (*server, error) {
	if s, ok := fl.list().byName[name]; ok {
		return s, nil
	}
	names := make([]string, len(fl.list().servers))
	for i, s := range fl.list().servers {
		names[i] = s.spec.Name
	}
	return nil, fmt.Errorf("%w %q (this session has: %v)", ErrUnknownServer, name, names)
}

// Statuses returns every server's status, in spec order.
func (m *Manager) Statuses() []Status {
	out := make([]Status, len(m.fleet.list().servers))
	for i, s := range m.fleet.list().servers {
		out[i] = s.status()
	}
	return out
}

// Status returns the named server's status.
func (m *Manager) Status(name string) (Status, bool) {
	s, ok := m.fleet.list().byName[name]
	if !ok {
		return Status{}, false
	}
	return s.status(), true
}

// ServerTool is a tool and the server that offers it.
type ServerTool struct {
	Server string
	// Tool is the definition as the server sent it: mcp-go's type on
	// purpose (see the package doc), so that the raw input schema,
	// annotations and _meta reach the bridge unchanged.
	Tool mcp.Tool
}

// Tools returns the tools offered by ready servers, in spec order and each
// server's order, within the tool limit: the catalog a session's tool view
// is derived from, on the events of Options.OnEvent. Safe for concurrent
// use; the slice is new at each call.
func (m *Manager) Tools() []ServerTool {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []ServerTool
	for _, s := range m.fleet.list().servers {
		if !s.ready() {
			continue
		}
		s.lister.read(func(cat *catalog, kept int) {
			for _, t := range cat.tools[:kept] {
				out = append(out, ServerTool{Server: s.spec.Name, Tool: t})
			}
		})
	}
	return out
}

// ServerResource is a resource, resource template or prompt and its
// server. T is mcp-go's mcp.Resource, mcp.ResourceTemplate or mcp.Prompt,
// on purpose (see the package doc): the item as the server listed it.
type ServerResource[T any] struct {
	Server string
	Item   T
}

// Resources returns the resources of ready servers, in spec order.
func (m *Manager) Resources() []ServerResource[mcp.Resource] {
	return collect(m, func(c *catalog) []mcp.Resource { return c.resources })
}

// ResourceTemplates returns the resource templates of ready servers.
func (m *Manager) ResourceTemplates() []ServerResource[mcp.ResourceTemplate] {
	return collect(m, func(c *catalog) []mcp.ResourceTemplate { return c.templates })
}

// Prompts returns the prompts of ready servers.
func (m *Manager) Prompts() []ServerResource[mcp.Prompt] {
	return collect(m, func(c *catalog) []mcp.Prompt { return c.prompts })
}

func collect[T any](m *Manager, pick func(*catalog) []T) []ServerResource[T] {
	var out []ServerResource[T]
	for _, s := range m.fleet.list().servers {
		if !s.ready() {
			continue
		}
		s.lister.read(func(cat *catalog, _ int) {
			for _, it := range pick(cat) {
				out = append(out, ServerResource[T]{Server: s.spec.Name, Item: it})
			}
		})
	}
	return out
}

// changed records a change of s: it re-applies the tool limit when tools
// changed, wakes Wait, and queues the events.
// The events are queued before Wait is woken, so that a Wait that sees the
// change also waits for its events.
func (fl *fleet) changed(s *server, kind EventKind, toolsChanged bool) {
	fl.m.mu.Lock()
	defer fl.m.mu.Unlock()
	fl.changedLocked(s, kind, toolsChanged)
}

// changedLocked is changed with m.mu held: a server changing its tools
// holds m.mu from the change to the limit's new allocation, so that no
// reader of the tools (Tools, checkTool, which take m.mu too) sees one
// without the other.
func (fl *fleet) changedLocked(s *server, kind EventKind, toolsChanged bool) {
	if toolsChanged {
		fl.allocateTools()
	}
	fl.m.events.push(Event{Kind: kind, Server: s.spec.Name, Status: s.status()})
	if toolsChanged && kind != EventToolsChanged {
		fl.m.events.push(Event{Kind: EventToolsChanged, Server: s.spec.Name, Status: s.status()})
	}
	close(fl.m.changedCh)
	fl.m.changedCh = make(chan struct{})
}

// allocateTools applies MaxTools: the first tools in spec order are kept.
// Called with m.mu held.
func (fl *fleet) allocateTools() {
	left := fl.m.opts.MaxTools
	for _, s := range fl.list().servers {
		if s.spec.Disabled {
			continue
		}
		n, kept := s.lister.keep(left)
		left -= kept
		s.mu.Lock()
		s.st.Tools, s.st.Dropped = kept, n-kept
		s.st.Warning = ""
		if s.st.Dropped > 0 {
			s.st.Warning = fmt.Sprintf("%v: %d of %d tools not offered (at most %d tools per session)", ErrLimit, s.st.Dropped, n, fl.m.opts.MaxTools)
		}
		s.mu.Unlock()
	}
}

// Guard is told about every stdio server's process group while it lives,
// so that something outside the agent can stop the groups, and every
// process carrying the instance token, if the agent dies without tearing
// them down (see package watchdog). Implementations must be safe for
// concurrent use and return quickly.
type Guard interface {
	// Watch records a started server: its process group (on Windows, the
	// leader's pid) and its instance token (see package proctree).
	Watch(pgid int, token string)
	// Unwatch forgets a server whose processes are all gone.
	Unwatch(pgid int)
}
