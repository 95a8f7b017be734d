package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

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
	notes     *notices // cancellation notices in flight
	link      link
	transport Transport
	init      *mcp.InitializeResult
	schemas   *rawSchemas
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
func (s *server) dial(life, ctx context.Context, spec *ServerSpec) (*conn, error) {
	switch spec.Transport {
	case TransportStdio:
		return s.dialStdio(life, ctx, spec)
	case TransportSSE:
		return s.dialSSE(life, ctx, spec)
	case TransportACP:
		return s.dialTunnel(life, ctx, spec)
	default:
		c, err := s.dialStreamable(life, ctx, spec)
		if errors.Is(err, transport.ErrLegacySSEServer) {
			s.logger.Info("server answered like a legacy SSE server; falling back to SSE")
			return s.dialSSE(life, ctx, spec)
		}
		return c, err
	}
}

func (s *server) dialStdio(life, ctx context.Context, spec *ServerSpec) (*conn, error) {
	p, err := startProcess(spec, s.m.opts.Cwd, s.logs, s.m.opts.StderrTail, s.m.opts.Guard)
	if err != nil {
		return nil, err
	}
	s.setProcessTail(p.tail)
	tooLarge := &tooLargeIDs{}
	stdout := newJSONLines(p.stdout, s.m.opts.MaxMessageSize, s.logs, tooLarge)
	schemas, notes, tasks := &rawSchemas{}, newNotices(life), newClientTasks(life, s.logger)
	t := newStdioTransport(stdout, p.stdin, tooLarge)
	c := &conn{
		client:    s.newClient(t, schemas, notes, tasks),
		tasks:     tasks,
		notes:     notes,
		link:      newProcessLink(p, t.done),
		transport: TransportStdio,
		schemas:   schemas,
	}
	if err := s.handshake(life, ctx, c); err != nil {
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
		_ = p.stop(0, s.m.opts.CloseTimeout, s.m.hurry)
		return nil, err
	}
	return c, nil
}

// httpClient is the HTTP client of an http or sse server's connection l:
// requests are authorized by the server's OAuth sign-in (unless it is off;
// see auth.roundTripper), and response bodies are bounded by
// Options.MaxMessageSize (see boundedBodies).
func (s *server) httpClient(spec *ServerSpec, l *httpLink) (*http.Client, error) {
	rt, err := s.auth.roundTripper(spec, l)
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: boundedBodies{base: rt, max: s.m.opts.MaxMessageSize}}, nil
}

func (s *server) dialStreamable(life, ctx context.Context, spec *ServerSpec) (*conn, error) {
	l := newHTTPLink()
	hc, err := s.httpClient(spec, l)
	if err != nil {
		return nil, err
	}
	t, err := transport.NewStreamableHTTP(spec.URL,
		transport.WithHTTPHeaders(spec.Headers),
		//lint:ignore SA1019 on 2025-11-25 the GET stream is how list_changed and server requests arrive; mcp-go opens it only after a legacy handshake (modern.go).
		transport.WithContinuousListening(),
		transport.WithHTTPBasicClient(hc),
		transport.WithHTTPLogger(s.quietLogger()),
	)
	if err != nil {
		return nil, fmt.Errorf("streamable HTTP transport: %w", err)
	}
	c, err := s.dialHTTP(life, ctx, t, TransportHTTP, l)
	if err == nil && s.redialLegacy(c) {
		s.logger.Debug("server/discover answered without 2026-07-28; connecting again on 2025-11-25")
		s.closeConn(c)
		return s.dialStreamable(life, ctx, spec)
	}
	return c, err
}

func (s *server) dialSSE(life, ctx context.Context, spec *ServerSpec) (*conn, error) {
	l := newHTTPLink()
	hc, err := s.httpClient(spec, l)
	if err != nil {
		return nil, err
	}
	t, err := transport.NewSSE(spec.URL,
		transport.WithHeaders(spec.Headers),
		transport.WithHTTPClient(hc),
		transport.WithSSELogger(s.quietLogger()),
	)
	if err != nil {
		return nil, fmt.Errorf("SSE transport: %w", err)
	}
	return s.dialHTTP(life, ctx, t, TransportSSE, l)
}

func (s *server) dialHTTP(life, ctx context.Context, t transport.Interface, tr Transport, l *httpLink) (*conn, error) {
	schemas, notes, tasks := &rawSchemas{}, newNotices(life), newClientTasks(life, s.logger)
	cl := s.newClient(t, schemas, notes, tasks)
	l.client = cl
	cl.OnConnectionLost(func(err error) { l.lost(err) })
	c := &conn{client: cl, notes: notes, link: l, transport: tr, schemas: schemas, tasks: tasks}
	if err := s.handshake(life, ctx, c); err != nil {
		_ = cl.Close()
		return nil, err
	}
	return c, nil
}

// quietLogger is the logger handed to mcp-go's HTTP transports: they log
// retries of the listening stream at error level every second while a
// server is down, which is our restart logic's business, so everything they
// say goes to debug.
func (s *server) quietLogger() *slog.Logger {
	return slog.New(demoteHandler{s.logger.Handler()})
}

// handshake starts the client, wires notifications and runs initialize.
func (s *server) handshake(life, ctx context.Context, c *conn) error {
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
		return fmt.Errorf("connect: no answer within %s", s.spec.ConnectTimeout)
	}
	c.listen = newListener()
	c.client.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == mcp.MethodNotificationSubscriptionsAcknowledged {
			c.listen.ack()
		}
		s.notify(n)
	})
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = s.preferredVersion(c)
	req.Params.ClientInfo = mcp.Implementation{Name: s.m.opts.ClientName, Version: s.m.opts.ClientVersion}
	res, err := c.client.Initialize(ctx, req)
	if err != nil && retryModern(c, err) {
		res, err = c.client.Initialize(ctx, req)
	}
	if err != nil {
		if ctx.Err() != nil && life.Err() == nil {
			return fmt.Errorf("initialize: no answer within %s", s.spec.ConnectTimeout)
		}
		return fmt.Errorf("initialize: %w", err)
	}
	c.init = res
	s.setLogLevel(ctx, c)
	s.resubscribe(ctx, c)
	s.listen(life, c)
	return nil
}

// catalog is what a server offers.
type catalog struct {
	tools     []mcp.Tool
	resources []mcp.Resource
	templates []mcp.ResourceTemplate
	prompts   []mcp.Prompt
}

// discover lists what the server's capabilities say it has, following
// pagination cursors; the lists are fetched concurrently. Tools are
// required to work; the rest is best effort.
func (s *server) discover(ctx context.Context, c *conn, what refreshKind) (catalog, error) {
	var (
		cat     catalog
		toolErr error
		wg      sync.WaitGroup
	)
	caps := c.client.GetServerCapabilities()
	fetch := func(name string, fn func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(); err != nil {
				s.logger.Warn(name+" failed", "err", err)
			}
		}()
	}
	if what&refreshTools != 0 && caps.Tools != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.client.ListTools(ctx, mcp.ListToolsRequest{})
			if err != nil {
				toolErr = fmt.Errorf("tools/list: %w", err)
				return
			}
			c.schemas.apply(res.Tools)
			s.expireTools(c)
			cat.tools = res.Tools
		}()
	}
	if what&refreshResources != 0 && caps.Resources != nil {
		fetch("resources/list", func() error {
			res, err := c.client.ListResources(ctx, mcp.ListResourcesRequest{})
			if err == nil {
				cat.resources = res.Resources
			}
			return err
		})
		fetch("resources/templates/list", func() error {
			res, err := c.client.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
			if err == nil {
				cat.templates = res.ResourceTemplates
			}
			return err
		})
	}
	if what&refreshResources != 0 && caps.Prompts != nil {
		fetch("prompts/list", func() error {
			res, err := c.client.ListPrompts(ctx, mcp.ListPromptsRequest{})
			if err == nil {
				cat.prompts = res.Prompts
			}
			return err
		})
	}
	wg.Wait()
	return cat, toolErr
}
