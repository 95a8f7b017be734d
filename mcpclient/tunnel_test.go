package mcpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/acpgate/acpgate/internal/testsupport/mcptunnel"
	"github.com/acpgate/acpgate/mcpclient"
)

// fakeTunnel is an mcpclient.Tunnel to in-process servers: each
// connection is an mcptunnel.Endpoint. It records what was opened and
// closed, and can end a connection as the end of the ACP connection would.
type fakeTunnel struct {
	mu      sync.Mutex
	servers map[string]*server.MCPServer // by server id
	refuse  map[string]*mcpclient.RequestError
	conns   []*fakeConn
	// versions are the protocol versions the servers offer (see
	// mcptunnel.NewEndpoint).
	versions []string
}

func newFakeTunnel() *fakeTunnel {
	return &fakeTunnel{servers: map[string]*server.MCPServer{}, refuse: map[string]*mcpclient.RequestError{}, versions: mcptunnel.Legacy}
}

func (f *fakeTunnel) Open(_ context.Context, serverID string, h mcpclient.TunnelHandler) (mcpclient.TunnelConn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e := f.refuse[serverID]; e != nil {
		return nil, fmt.Errorf("mcp/connect: %w", e)
	}
	srv := f.servers[serverID]
	if srv == nil {
		return nil, &mcpclient.RequestError{Code: mcp.INVALID_PARAMS, Message: "unknown serverId " + serverID}
	}
	c := &fakeConn{id: fmt.Sprintf("conn-%d", len(f.conns)+1), done: make(chan struct{})}
	ep, err := mcptunnel.NewEndpoint(srv, c.id, handlerPeer{h}, f.versions)
	if err != nil {
		return nil, err
	}
	c.ep = ep
	f.conns = append(f.conns, c)
	return c, nil
}

// opened returns the connections opened so far.
func (f *fakeTunnel) opened() []*fakeConn {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*fakeConn(nil), f.conns...)
}

// fakeConn is one connection of a fakeTunnel.
type fakeConn struct {
	id       string
	ep       *mcptunnel.Endpoint
	done     chan struct{}
	loseOnce sync.Once
	mu       sync.Mutex
	closes   int
}

func (c *fakeConn) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	res, e := c.ep.Request(ctx, method, params)
	if e != nil {
		return nil, &mcpclient.RequestError{Code: e.Code, Message: e.Message, Data: e.Data}
	}
	return res, nil
}

func (c *fakeConn) Notify(ctx context.Context, method string, params json.RawMessage) error {
	c.ep.Notify(ctx, method, params)
	return nil
}

func (c *fakeConn) Done() <-chan struct{} { return c.done }

func (c *fakeConn) Close(context.Context) error {
	c.mu.Lock()
	c.closes++
	c.mu.Unlock()
	c.ep.Close()
	return nil
}

// lose ends the connection as the end of the ACP connection does.
func (c *fakeConn) lose() { c.loseOnce.Do(func() { close(c.done) }) }

func (c *fakeConn) closed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closes > 0
}

// handlerPeer is the Peer of an Endpoint: the server's messages go to the
// connection's TunnelHandler.
type handlerPeer struct{ h mcpclient.TunnelHandler }

func (p handlerPeer) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	res, err := p.h.HandleRequest(ctx, method, params)
	var re *mcpclient.RequestError
	if errors.As(err, &re) {
		return nil, &mcptunnel.Error{Code: re.Code, Message: re.Message, Data: re.Data}
	}
	return res, err
}

func (p handlerPeer) Notify(method string, params json.RawMessage) {
	p.h.HandleNotification(method, params)
}

func acpServer(name, serverID string) mcpclient.ServerSpec {
	return mcpclient.ServerSpec{Name: name, Transport: mcpclient.TransportACP, ServerID: serverID}
}

// tunnelOpts returns a fake tunnel serving mcptunnel's test server as
// "id-1", and fastOpts using it.
func tunnelOpts(t *testing.T) (*fakeTunnel, *mcpclient.Options) {
	t.Helper()
	tun := newFakeTunnel()
	tun.servers["id-1"] = mcptunnel.NewServer("client-tools")
	opts, _ := fastOpts(t)
	opts.Tunnel = tun
	return tun, opts
}

// An acp server works like any other: its tools are listed and called,
// its requests (elicitation, roots, sampling) reach the Options' handlers, a
// tools/list_changed is honoured, and Close closes its connection.
func TestTunnelServer(t *testing.T) {
	t.Parallel()
	tun := newFakeTunnel()
	srv := mcptunnel.NewServer("client-tools")
	tun.servers["id-1"] = srv
	opts, _ := fastOpts(t)
	opts.Tunnel = tun
	events := newEventLog()
	opts.OnEvent = events.add
	h := &handlers{
		ElicitFunc: func(_ context.Context, r mcpclient.ElicitRequest) (mcpclient.ElicitResult, error) {
			return mcpclient.ElicitResult{Action: mcpclient.ElicitAccept, Content: map[string]any{"answer": "yes to " + r.Message}}, nil
		},
		RootsFunc: func(context.Context, mcpclient.Origin) ([]mcpclient.Root, error) {
			return []mcpclient.Root{{URI: "file:///work"}}, nil
		},
		SampleFunc: func(_ context.Context, r mcpclient.SamplingRequest) (mcpclient.SamplingResult, error) {
			return mcpclient.SamplingResult{Model: "m1", Content: []mcpclient.SamplingContent{{Type: mcpclient.SamplingText, Text: "sampled"}}}, nil
		},
	}
	opts.Elicitor, opts.Roots, opts.Sampler = h, h, h
	m, err := mcpclient.New([]mcpclient.ServerSpec{acpServer("tun", "id-1")}, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	mustReady(t, m, "tun")
	if st, _ := m.Status("tun"); st.Transport != mcpclient.TransportACP || st.ServerName != "client-tools" {
		t.Errorf("status: %+v", st)
	}
	if got := text(t, call(t, m, "tun", "echo", map[string]any{"text": "through the tunnel"})); got != "through the tunnel" {
		t.Errorf("echo: %q", got)
	}
	if got := text(t, call(t, m, "tun", "ask", map[string]any{"message": "proceed?"})); got != "accept: yes to proceed?" {
		t.Errorf("ask: %q", got)
	}
	if elicits := h.elicits; len(elicits) != 1 || elicits[0].Origin.Tool != "ask" {
		t.Errorf("elicitations: %+v", elicits)
	}
	if got := text(t, call(t, m, "tun", "roots", nil)); got != "file:///work\n" {
		t.Errorf("roots: %q", got)
	}
	if got := text(t, call(t, m, "tun", "sample", map[string]any{"prompt": "hi"})); got != "sampled" {
		t.Errorf("sample: %q", got)
	}

	srv.AddTool(mcp.NewTool("late", mcp.WithDescription("Added later")), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("late"), nil
	})
	events.wait(t, "the late tool", func(e mcpclient.Event) bool {
		return e.Kind == mcpclient.EventToolsChanged && hasTool(m, "tun", "late")
	})

	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if conns := tun.opened(); len(conns) != 1 || !conns[0].closed() {
		t.Errorf("connections after Close: %d, closed %v", len(conns), len(conns) == 1 && conns[0].closed())
	}
}

// A connection the client refuses fails the server with the client's
// error; no tunnel at all fails it as an invalid spec.
func TestTunnelRefusedOrMissing(t *testing.T) {
	t.Parallel()
	tun := newFakeTunnel()
	tun.refuse["gone"] = &mcpclient.RequestError{Code: mcp.INVALID_PARAMS, Message: "no such server here"}
	opts, _ := fastOpts(t)
	opts.Tunnel = tun
	m := start(t, opts, acpServer("refused", "gone"))
	st, _ := m.Status("refused")
	var re *mcpclient.RequestError
	if st.State != mcpclient.StateFailed || !errors.As(st.Err, &re) || re.Code != mcp.INVALID_PARAMS ||
		!strings.Contains(st.Error, "mcp/connect: no such server here") {
		t.Errorf("refused: %+v", st)
	}

	opts, _ = fastOpts(t)
	m = start(t, opts, acpServer("untunnelled", "x"), mcpclient.ServerSpec{Name: "blank", Transport: mcpclient.TransportACP})
	if st, _ := m.Status("untunnelled"); st.State != mcpclient.StateFailed || !strings.Contains(st.Error, "no tunnel to the ACP client") {
		t.Errorf("without a tunnel: %+v", st)
	}
	if st, _ := m.Status("blank"); st.State != mcpclient.StateFailed || !strings.Contains(st.Error, "requires a server id") {
		t.Errorf("without a server id: %+v", st)
	}
}

// A connection that ends on its own is restarted as any server is: a new
// connection is opened, and the old one closed.
func TestTunnelReconnects(t *testing.T) {
	t.Parallel()
	tun, opts := tunnelOpts(t)
	events := newEventLog()
	opts.OnEvent = events.add
	m := start(t, opts, acpServer("tun", "id-1"))
	mustReady(t, m, "tun")
	first := tun.opened()[0]
	first.lose()
	e := events.wait(t, "restarting", func(e mcpclient.Event) bool { return e.Status.State == mcpclient.StateRestarting })
	if !errors.Is(e.Status.Err, mcpclient.ErrConnLost) {
		t.Errorf("restarting: %+v", e.Status)
	}
	events.wait(t, "ready again", func(e mcpclient.Event) bool {
		return e.Status.State == mcpclient.StateReady && e.Status.Restarts == 1
	})
	if conns := tun.opened(); len(conns) != 2 || !first.closed() || conns[1].closed() {
		t.Fatalf("connections: %d, first closed %v", len(conns), first.closed())
	}
	if got := text(t, call(t, m, "tun", "echo", map[string]any{"text": "again"})); got != "again" {
		t.Errorf("echo after the reconnect: %q", got)
	}
}

// A result over Options.MaxMessageSize fails its call, and the server
// stays usable.
func TestTunnelResponseTooLarge(t *testing.T) {
	t.Parallel()
	_, opts := tunnelOpts(t)
	opts.MaxMessageSize = 64 << 10
	m := start(t, opts, acpServer("tun", "id-1"))
	_, err := m.CallTool(context.Background(), "tun", "big", map[string]any{"size": 100 << 10})
	if !errors.Is(err, mcpclient.ErrResponseTooLarge) {
		t.Fatalf("big call: %v", err)
	}
	if got := text(t, call(t, m, "tun", "echo", map[string]any{"text": "still here"})); got != "still here" {
		t.Errorf("echo after: %q", got)
	}
}

// A server that speaks 2026-07-28 is reached on it through the tunnel too.
func TestTunnelModern(t *testing.T) {
	t.Parallel()
	tun, opts := tunnelOpts(t)
	tun.versions = nil // all mcp-go speaks
	m := start(t, opts, acpServer("tun", "id-1"))
	if st, _ := m.Status("tun"); st.State != mcpclient.StateReady || st.ProtocolVersion != mcp.ProtocolVersion20260728 {
		t.Fatalf("status: %+v", st)
	}
	if got := text(t, call(t, m, "tun", "echo", map[string]any{"text": "modern"})); got != "modern" {
		t.Errorf("echo: %q", got)
	}
}
