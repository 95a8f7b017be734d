package acp

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/acpgate/acpgate/internal/inputs/secrets"
	"github.com/acpgate/acpgate/mcpclient"
)

// This file is the requests MCP servers send to the user (userRequests,
// and serverRequests, the mcpclient handlers that route each request to
// its session) and roots/list, answered from the session's directories.

// userRequests brings what MCP servers ask of the user to the editor:
// elicitation (forms and URLs, or a permission question or a card where
// the editor has no elicitation), sampling (after the user's approval),
// and sign-in prompts; roots are answered from the session itself. It
// holds the URL elicitations still open. Safe for concurrent use.
type userRequests struct {
	peer    *peer
	conf    *agentConfig // the sessions' models, for sampling
	logger  *slog.Logger
	secrets *secrets.Resolver // redacts what is logged; nil: none

	mu sync.Mutex
	// urls holds the URL elicitations waiting for their completion, by
	// urlKey.
	urls map[string]urlElicitation
}

// serverRequests answers the requests MCP servers send (elicitation,
// sampling, roots) for one session (s), or, for the shared servers (s
// nil), for the session whose turn made the call the request belongs to
// (found in the handler's context, which carries the turn's values; see
// mcpclient's attribution rules). It implements mcpclient.Elicitor,
// Sampler and RootsLister; safe for concurrent use.
type serverRequests struct {
	u *userRequests
	s requestSession // nil: the session found in the request's context
}

// requestSession is a live session as the requests of its servers reach
// it: what userRequests asks of it, and its roots (liveSession implements
// it). Safe for concurrent use.
type requestSession interface {
	askSession
	roots() []mcpclient.Root
}

var _ requestSession = (*liveSession)(nil)

var (
	_ mcpclient.Elicitor    = serverRequests{}
	_ mcpclient.Sampler     = serverRequests{}
	_ mcpclient.RootsLister = serverRequests{}
)

// sessionKey is the context key of the session a turn runs in.
type sessionKey struct{}

// withSession returns ctx carrying s (a turn's context).
func withSession(ctx context.Context, s *liveSession) context.Context {
	return context.WithValue(ctx, sessionKey{}, s)
}

// session returns the session a request is for, or nil.
func (r serverRequests) session(ctx context.Context) requestSession {
	if r.s != nil {
		return r.s
	}
	if s, _ := ctx.Value(sessionKey{}).(*liveSession); s != nil {
		return s
	}
	return nil // not a nil *liveSession: callers compare with nil
}

// Elicit implements mcpclient.Elicitor.
func (r serverRequests) Elicit(ctx context.Context, req mcpclient.ElicitRequest) (mcpclient.ElicitResult, error) {
	s := r.session(ctx)
	if s == nil {
		r.u.logger.Warn("an MCP server's question belongs to no session; cancelled", "server", req.Server)
		return mcpclient.ElicitResult{Action: mcpclient.ElicitCancel}, nil
	}
	return r.u.elicit(ctx, s, req)
}

// ElicitationComplete implements mcpclient.Elicitor.
func (r serverRequests) ElicitationComplete(server, id string) {
	r.u.elicitationComplete(server, id)
}

// CreateMessage implements mcpclient.Sampler.
func (r serverRequests) CreateMessage(ctx context.Context, req mcpclient.SamplingRequest) (mcpclient.SamplingResult, error) {
	s := r.session(ctx)
	if s == nil {
		return mcpclient.SamplingResult{}, fmt.Errorf("the sampling request of %q belongs to no session", req.Server)
	}
	return r.u.sample(ctx, s, req)
}

// Roots implements mcpclient.RootsLister: the session's cwd and its
// additional directories.
func (r serverRequests) Roots(ctx context.Context, _ mcpclient.Origin) ([]mcpclient.Root, error) {
	s := r.session(ctx)
	if s == nil {
		return []mcpclient.Root{}, nil
	}
	return s.roots(), nil
}
