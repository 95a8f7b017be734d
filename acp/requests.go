package acp

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/mcpclient"
)

// serverRequests answers the requests MCP servers send (elicitation,
// sampling, roots) for one session (s), or, for the shared servers (s
// nil), for the session whose turn made the call the request belongs to
// (found in the handler's context, which carries the turn's values; see
// mcpclient's attribution rules). It implements mcpclient.Elicitor,
// Sampler and RootsLister; safe for concurrent use.
type serverRequests struct {
	a *Agent
	s *liveSession
}

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
func (r serverRequests) session(ctx context.Context) *liveSession {
	if r.s != nil {
		return r.s
	}
	s, _ := ctx.Value(sessionKey{}).(*liveSession)
	return s
}

// Elicit implements mcpclient.Elicitor.
func (r serverRequests) Elicit(ctx context.Context, req mcpclient.ElicitRequest) (mcpclient.ElicitResult, error) {
	s := r.session(ctx)
	if s == nil {
		r.a.logger.Warn("an MCP server's question belongs to no session; cancelled", "server", req.Server)
		return mcpclient.ElicitResult{Action: mcpclient.ElicitCancel}, nil
	}
	return r.a.elicit(ctx, s, req)
}

// ElicitationComplete implements mcpclient.Elicitor.
func (r serverRequests) ElicitationComplete(server, id string) {
	r.a.elicitationComplete(server, id)
}

// CreateMessage implements mcpclient.Sampler.
func (r serverRequests) CreateMessage(ctx context.Context, req mcpclient.SamplingRequest) (mcpclient.SamplingResult, error) {
	s := r.session(ctx)
	if s == nil {
		return mcpclient.SamplingResult{}, fmt.Errorf("the sampling request of %q belongs to no session", req.Server)
	}
	return r.a.sample(ctx, s, req)
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

// roots are the session's directories as MCP roots: file:// URIs named
// after the directory.
func (s *liveSession) roots() []mcpclient.Root {
	dirs := append([]string{s.cwd}, s.dirs...)
	out := make([]mcpclient.Root, 0, len(dirs))
	for _, d := range dirs {
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(d)}
		out = append(out, mcpclient.Root{URI: u.String(), Name: filepath.Base(d)})
	}
	return out
}

// checkDirs requires the additional directories of a session to be
// absolute paths.
func checkDirs(dirs []string) error {
	for i, d := range dirs {
		if !filepath.IsAbs(d) {
			return invalidParams("additionalDirectories[%d] must be an absolute path, got %q", i, d)
		}
	}
	return nil
}

// clientElicitation returns what the client said in initialize about
// elicitation (form and URL mode).
func (a *Agent) clientElicitation() (form, url bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.clientCaps.Elicitation
	return e != nil && e.Form != nil, e != nil && e.Url != nil
}

// mayHaveModel reports whether sessions can have a model (sampling is
// declared to servers only then).
func (a *Agent) mayHaveModel() bool { return a.opts.Provider != nil || a.opts.Providers != nil }

// card shows a card of its own in session s: a tool call with id, title,
// status and text content (and extra content blocks).
func (a *Agent) card(s *liveSession, id, title string, status acpsdk.ToolCallStatus, text string, extra ...acpsdk.ToolCallContent) {
	content := append([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(text))}, extra...)
	a.update(s, acpsdk.StartToolCall(acpsdk.ToolCallId(id), title,
		acpsdk.WithStartKind(acpsdk.ToolKindOther),
		acpsdk.WithStartStatus(status),
		acpsdk.WithStartContent(content)))
}

// cardStatus updates a card (or a tool call): its status and text.
func (a *Agent) cardStatus(s *liveSession, id string, status acpsdk.ToolCallStatus, text string) {
	a.update(s, acpsdk.UpdateToolCall(acpsdk.ToolCallId(id), acpsdk.WithUpdateStatus(status),
		acpsdk.WithUpdateContent([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(text))})))
}

// nextCard returns a new card id with prefix.
func (a *Agent) nextCard(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, a.cards.Add(1))
}
