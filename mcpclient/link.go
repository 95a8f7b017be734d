package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpgate/acpgate/internal/base/telemetry"
	"github.com/acpgate/acpgate/mcpclient/wire"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// link is what keeps one connection to a server alive: a child process for
// stdio, an HTTP session for http and sse, a tunnel connection for acp.
// Implementations are safe for concurrent use and their close is
// idempotent.
type link interface {
	// done is closed when the link dies on its own (process exit,
	// connection lost).
	done() <-chan struct{}
	// reason says why done closed.
	reason() error
	// close tears the link down within the bounds and returns once nothing
	// of it is left (for stdio: no live process in the group).
	close(grace, total time.Duration, hurry <-chan struct{}) error
	// stderrTail is the server's recent stderr ("" if it has none).
	stderrTail() string
}

// conn is one live, initialized connection to a server.
type conn struct {
	client    *client.Client
	notes     *wire.Notices // cancellation notices in flight
	link      link
	transport Transport
	init      *mcp.InitializeResult
	schemas   *toolListing
	tasks     *clientTasks // the tasks the server created (clienttasks.go)
	listen    *listener    // subscriptions/listen on 2026-07-28 (listen.go)
}

// processLink is the link of a stdio server. It dies once the process has
// exited and what it wrote to stdout before has been read and dispatched
// (a server that answers and exits at once is answered), or stdoutDrain
// after the exit when something the server started keeps stdout open.
type processLink struct {
	p    *process
	gone chan struct{}
}

// stdoutDrain bounds how long a dead server's stdout is read after its
// exit.
const stdoutDrain = 200 * time.Millisecond

// newProcessLink returns p's link; drained is closed when its stdout has
// been read to the end.
func newProcessLink(p *process, drained <-chan struct{}) processLink {
	l := processLink{p: p, gone: make(chan struct{})}
	go func() {
		<-p.Exited()
		t := time.NewTimer(stdoutDrain)
		defer t.Stop()
		select {
		case <-drained:
		case <-t.C:
		}
		close(l.gone)
	}()
	return l
}

func (l processLink) done() <-chan struct{} { return l.gone }
func (l processLink) reason() error {
	return fmt.Errorf("%w (%s)", ErrServerExited, l.p.exitReason())
}
func (l processLink) close(grace, total time.Duration, hurry <-chan struct{}) error {
	return l.p.stop(grace, total, hurry)
}
func (l processLink) stderrTail() string { return l.p.tail.String() }

// httpLink is the link of an http or sse server. It dies when the SSE
// stream is lost or a request fails at the transport level.
type httpLink struct {
	client   *client.Client
	lostOnce sync.Once
	lostCh   chan struct{}
	lostErr  error
}

func newHTTPLink() *httpLink { return &httpLink{lostCh: make(chan struct{})} }

func (l *httpLink) lost(err error) {
	l.lostOnce.Do(func() {
		l.lostErr = err
		close(l.lostCh)
	})
}
func (l *httpLink) done() <-chan struct{} { return l.lostCh }
func (l *httpLink) reason() error         { return fmt.Errorf("%w: %w", ErrConnLost, l.lostErr) }
func (l *httpLink) close(time.Duration, time.Duration, <-chan struct{}) error {
	// Ends the HTTP session (DELETE) and its streams; idempotent in mcp-go.
	return l.client.Close()
}
func (l *httpLink) stderrTail() string { return "" }

// dial starts the transport for s and completes the initialize handshake.
// life bounds the connection (transport goroutines); ctx bounds the dial.
// spec is the server's spec as prepared for this connection (secrets
// resolved).
func (dl *dialer) dial(life, ctx context.Context, spec *ServerSpec) (*conn, error) {
	switch spec.Transport {
	case TransportStdio:
		return dl.dialStdio(life, ctx, spec)
	case TransportSSE:
		return dl.dialSSE(life, ctx, spec)
	case TransportACP:
		return dl.dialTunnel(life, ctx, spec)
	default:
		c, err := dl.dialStreamable(life, ctx, spec)
		if errors.Is(err, transport.ErrLegacySSEServer) {
			dl.env.logger.Info("server answered like a legacy SSE server; falling back to SSE")
			return dl.dialSSE(life, ctx, spec)
		}
		return c, err
	}
}

func (dl *dialer) dialStdio(life, ctx context.Context, spec *ServerSpec) (*conn, error) {
	p, sb, err := startProcess(spec, dl.env.opts, dl.logs)
	dl.owner.setSandbox(sb)
	if err != nil {
		return nil, err
	}
	dl.owner.setProcessTail(p.tail)
	tooLarge := &wire.TooLargeIDs{}
	stdout := wire.NewJSONLines(p.stdout, dl.env.opts.MaxMessageSize, dl.logs, tooLarge, dl.reads)
	schemas, notes, tasks := &toolListing{}, wire.NewNotices(life), newClientTasks(life, dl.env.logger)
	t := wire.NewStdioTransport(stdout, p.stdin, tooLarge)
	t.Peek = peekTask
	c := &conn{
		client:    dl.newClient(t, schemas, notes, tasks),
		tasks:     tasks,
		notes:     notes,
		link:      newProcessLink(p, t.Done()),
		transport: TransportStdio,
		schemas:   schemas,
	}
	if err := dl.handshake(life, ctx, c); err != nil {
		// A server that died during the handshake: say so, with its exit.
		// A handshake cut short by the server's stop (the session closes,
		// acpgate exits) has nothing to explain: stop it at once.
		if life.Err() == nil {
			select {
			case <-p.Exited():
			case <-time.After(200 * time.Millisecond):
			}
		}
		select {
		case <-p.Exited():
			err = fmt.Errorf("%w during initialize (%s)", ErrServerExited, p.exitReason())
		default:
		}
		_ = c.client.Close()
		_ = p.stop(0, dl.env.opts.CloseTimeout, dl.env.hurry)
		return nil, err
	}
	return c, nil
}

// httpClient is the HTTP client of an http or sse server's connection l:
// requests are authorized by the server's OAuth sign-in (unless it is off;
// see auth.roundTripper), and response bodies are bounded by
// Options.MaxMessageSize (see wire.BoundedBodies).
func (dl *dialer) httpClient(spec *ServerSpec, l *httpLink) (*http.Client, error) {
	rt, err := dl.auth.roundTripper(spec, l)
	if err != nil {
		return nil, err
	}
	// The trace context goes in the headers too (telemetry.Transport).
	return &http.Client{Transport: telemetry.Transport(wire.BoundedBodies{Base: rt, Max: dl.env.opts.MaxMessageSize, Budget: dl.reads})}, nil
}

func (dl *dialer) dialStreamable(life, ctx context.Context, spec *ServerSpec) (*conn, error) {
	l := newHTTPLink()
	hc, err := dl.httpClient(spec, l)
	if err != nil {
		return nil, err
	}
	t, err := transport.NewStreamableHTTP(spec.URL,
		transport.WithHTTPHeaders(spec.Headers),
		//lint:ignore SA1019 on 2025-11-25 the GET stream is how list_changed and server requests arrive; mcp-go opens it only after a legacy handshake (revision.go).
		transport.WithContinuousListening(),
		transport.WithHTTPBasicClient(hc),
		transport.WithHTTPLogger(dl.quietLogger()),
	)
	if err != nil {
		return nil, fmt.Errorf("streamable HTTP transport: %w", err)
	}
	c, err := dl.dialHTTP(life, ctx, t, TransportHTTP, l)
	if err == nil && dl.redialLegacy(c) {
		dl.env.logger.Debug("server/discover answered without 2026-07-28; connecting again on 2025-11-25")
		dl.owner.closeConn(c)
		return dl.dialStreamable(life, ctx, spec)
	}
	return c, err
}

func (dl *dialer) dialSSE(life, ctx context.Context, spec *ServerSpec) (*conn, error) {
	l := newHTTPLink()
	hc, err := dl.httpClient(spec, l)
	if err != nil {
		return nil, err
	}
	t, err := transport.NewSSE(spec.URL,
		transport.WithHeaders(spec.Headers),
		transport.WithHTTPClient(hc),
		transport.WithSSELogger(dl.quietLogger()),
	)
	if err != nil {
		return nil, fmt.Errorf("SSE transport: %w", err)
	}
	return dl.dialHTTP(life, ctx, t, TransportSSE, l)
}

func (dl *dialer) dialHTTP(life, ctx context.Context, t transport.Interface, tr Transport, l *httpLink) (*conn, error) {
	schemas, notes, tasks := &toolListing{}, wire.NewNotices(life), newClientTasks(life, dl.env.logger)
	cl := dl.newClient(t, schemas, notes, tasks)
	l.client = cl
	cl.OnConnectionLost(func(err error) { l.lost(err) })
	c := &conn{client: cl, notes: notes, link: l, transport: tr, schemas: schemas, tasks: tasks}
	if err := dl.handshake(life, ctx, c); err != nil {
		_ = cl.Close()
		return nil, err
	}
	return c, nil
}

// quietLogger is the logger handed to mcp-go's HTTP transports: they log
// retries of the listening stream at error level every second while a
// server is down, which is our restart logic's business, so everything they
// say goes to debug.
func (dl *dialer) quietLogger() *slog.Logger {
	return slog.New(demoteHandler{dl.env.logger.Handler()})
}

// handshake starts the client, wires notifications and runs initialize.
func (dl *dialer) handshake(life, ctx context.Context, c *conn) error {
	// The transport keeps life for its streams and for requests the server
	// sends us; ctx bounds only the start (an SSE server that never sends
	// its endpoint would otherwise hold it forever).
	started := make(chan error, 1)
	go func() { started <- c.client.Start(life) }()
	select {
	case err := <-started:
		if err != nil {
			return fmt.Errorf("start transport: %w", err)
		}
	case <-ctx.Done():
		_ = c.client.Close()
		<-started
		return fmt.Errorf("connect: no answer within %s", dl.env.spec.ConnectTimeout)
	}
	c.listen = newListener()
	c.client.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == mcp.MethodNotificationSubscriptionsAcknowledged {
			c.listen.ack()
		}
		dl.owner.notify(n)
	})
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = dl.preferredVersion(c)
	req.Params.ClientInfo = mcp.Implementation{Name: dl.env.opts.ClientName, Version: dl.env.opts.ClientVersion}
	res, err := c.client.Initialize(ctx, req)
	if err != nil && retryModern(c, err) {
		res, err = c.client.Initialize(ctx, req)
	}
	if err != nil {
		if ctx.Err() != nil && life.Err() == nil {
			return fmt.Errorf("initialize: no answer within %s", dl.env.spec.ConnectTimeout)
		}
		return fmt.Errorf("initialize: %w", err)
	}
	c.init = res
	dl.session.setLogLevel(ctx, c)
	dl.session.resubscribe(ctx, c)
	dl.session.listen(life, c)
	return nil
}

// dialer is the link: it starts the transport (dial*), makes the
// handshake or the 2026-07-28 discovery, and chooses the protocol
// revision. Files: link.go, revision.go, tunnel.go.
type dialer struct {
	env      roleEnv
	logs     *logGate         // the server's own output, into the log
	reads    *wire.ReadBudget // what reading the server's messages may cost
	owner    linkOwner        // the server
	auth     authTransport    // the auth role
	session  sessionSetup     // the subscriber
	requests serverRequests   // the answerer
	// httpLegacy: the server answered server/discover over streamable
	// HTTP without 2026-07-28; it is offered 2025-11-25 only from then on.
	httpLegacy atomic.Bool
}

// newClient returns the mcp-go client of one connection over t: the
// transport wrapped (see wrapTransport), server requests answered by
// serveTask (with the connection's task table tasks) and serveRequest, and
// the capabilities of the Options' handlers declared (tasks in the legacy
// handshake only: handshakeCapabilities).
func (dl *dialer) newClient(t transport.Interface, schemas *toolListing, notes *wire.Notices, tasks *clientTasks) *client.Client {
	serve := func(ctx context.Context, req transport.JSONRPCRequest, next transport.RequestHandler) (*transport.JSONRPCResponse, error) {
		if resp, ok := dl.requests.serveTask(ctx, tasks, req); ok {
			return resp, nil
		}
		return dl.requests.serveRequest(ctx, req, next)
	}
	w := withServe(wrapTransport(t, schemas, notes, requestTrace{tel: dl.env.opts.Telemetry, server: dl.env.spec.Name}), serve, dl.handshakeCapabilities)
	tasks.send = w.SendNotification
	return client.NewClient(w, append(dl.protocolOptions(t), client.WithClientCapabilities(dl.capabilities()))...)
}

// capabilities are the client capabilities declared to the server: exactly
// those whose handler is set (sampling not to a server whose spec sets
// NoSampling), the Tasks extension (2026-07-28 requests only; see
// exttasks.go) and the skills extension (skills.go).
func (dl *dialer) capabilities() mcp.ClientCapabilities {
	var c mcp.ClientCapabilities
	o := dl.env.opts
	if o.Elicitor != nil {
		c.Elicitation = &mcp.ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}}
	}
	if dl.env.samples() {
		c.Sampling = &mcp.SamplingCapability{Tools: &struct{}{}}
	}
	if o.Roots != nil {
		c.Roots = &struct {
			ListChanged bool `json:"listChanged,omitempty"`
		}{ListChanged: true}
	}
	// Tasks: 2026-07-28 only, see exttasks.go; skills: both revisions,
	// see skills.go.
	c.Extensions = map[string]any{extTasksID: struct{}{}, SkillsExtension: struct{}{}}
	return c
}

// taskCapability is the client "tasks" capability declared on a legacy
// connection: the request types that may be task-augmented are those whose
// handler is set; nil when there is none.
func (dl *dialer) taskCapability() *mcp.TasksCapability {
	var r mcp.TaskRequestsCapability
	if dl.requests.requestHandler(string(mcp.MethodSamplingCreateMessage)) != nil {
		r.Sampling = &struct {
			CreateMessage *struct{} `json:"createMessage,omitempty"`
		}{CreateMessage: &struct{}{}}
	}
	if dl.requests.requestHandler(string(mcp.MethodElicitationCreate)) != nil {
		r.Elicitation = &struct {
			Create *struct{} `json:"create,omitempty"`
		}{Create: &struct{}{}}
	}
	if r.Sampling == nil && r.Elicitation == nil {
		return nil
	}
	return &mcp.TasksCapability{List: &struct{}{}, Cancel: &struct{}{}, Requests: &r}
}

// handshakeCapabilities edits an initialize request (the legacy
// handshake) for the capabilities that differ from those of 2026-07-28
// requests: the client tasks capability is declared here only (where
// acpgate honours some), and the Tasks extension, of 2026-07-28, is not
// declared here (see dropExtTasks).
func (dl *dialer) handshakeCapabilities(req *transport.JSONRPCRequest) {
	b, err := json.Marshal(req.Params)
	if err != nil {
		return
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(b, &params) != nil || params == nil {
		return
	}
	caps := map[string]json.RawMessage{}
	if raw, ok := params["capabilities"]; ok {
		_ = json.Unmarshal(raw, &caps)
	}
	dropExtTasks(caps)
	if tc := dl.taskCapability(); tc != nil {
		if caps["tasks"], err = json.Marshal(tc); err != nil {
			return
		}
	}
	if params["capabilities"], err = json.Marshal(caps); err != nil {
		return
	}
	req.Params = params
}
