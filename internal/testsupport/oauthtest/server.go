// Package oauthtest runs, for tests, an OAuth authorization server and an
// MCP server it protects, both in process on 127.0.0.1, with the faults a
// sign-in must survive switched on by Config. Its authorization endpoint
// approves at once and redirects straight to the client's loopback
// redirect URI, so a test signs in by following the prompt's URL (Follow).
package oauthtest

import (
	"context"
	"crypto"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Config switches the servers' behaviour. The zero value is a well-behaved
// pair: metadata everywhere, dynamic registration, public clients, PKCE,
// one-hour tokens without refresh tokens, no scopes.
type Config struct {
	// NoResourceMetadata: the MCP server publishes no protected-resource
	// metadata (the 2025-03-26 layout); NoChallengeMetadata: its 401 does
	// not name it (clients must find the well-known URI). RootMetadata
	// publishes it at the root well-known URI only.
	NoResourceMetadata, NoChallengeMetadata, RootMetadata bool
	// LegacyMetadata: the MCP server's origin also serves the
	// authorization server's metadata (the 2025-03-26 layout, with
	// NoResourceMetadata).
	LegacyMetadata bool
	// NoServerMetadata: the authorization server publishes no metadata.
	NoServerMetadata bool
	// Resource overrides the resource the protected-resource metadata
	// names.
	Resource string
	// ChallengeScope is the scope of the 401 challenge; ScopesSupported
	// the protected resource's scopes_supported; ServerScopes the
	// authorization server's.
	ChallengeScope  string
	ScopesSupported []string
	ServerScopes    []string
	// ToolScopes: calling a tool named here needs the scope given; a
	// token without it gets 403 insufficient_scope.
	ToolScopes map[string]string

	// NoRegistration: no registration endpoint; RefuseRegistration: it
	// answers 400 invalid_client_metadata. RegisterAuthMethod and
	// RegisterSecret are what registration hands out (default: a public
	// client).
	NoRegistration, RefuseRegistration bool
	RegisterAuthMethod                 string
	RegisterSecret                     bool
	// CIMD: the server accepts URLs as client ids.
	CIMD bool
	// AuthMethods is token_endpoint_auth_methods_supported (default
	// ["none"]); Clients the pre-registered clients (id to secret);
	// PublicKey verifies private_key_jwt assertions.
	AuthMethods []string
	Clients     map[string]string
	PublicKey   crypto.PublicKey
	// Grants is grant_types_supported (default authorization_code,
	// refresh_token, client_credentials).
	Grants []string

	// IssSupported: the redirect carries iss and the metadata says so;
	// WrongIss: it carries another issuer; WrongState: another state;
	// IssSlash: it carries the issuer with a "/" added (the same issuer
	// only after a normalisation RFC 9207 forbids); Deny: the user
	// declines (error=access_denied).
	IssSupported, WrongIss, IssSlash, WrongState, Deny bool

	// DPoP: the MCP server challenges with the DPoP scheme and takes DPoP
	// tokens only, each request with a valid proof bound to the token's
	// key; the token endpoint binds a token to the key of a request's
	// proof (token_type DPoP). DPoPNonce: both ask for a nonce (ASNonce,
	// RSNonce) in every proof.
	DPoP, DPoPNonce bool

	// WorkloadToken, when set, is a workload identity token the JWT
	// bearer grant accepts as its assertion (SEP-1933).
	WorkloadToken string

	// TokenTTL is the tokens' lifetime (default one hour); RefreshTokens
	// hands out refresh tokens; RevokeRefresh refuses them
	// (invalid_grant).
	TokenTTL      time.Duration
	RefreshTokens bool
	RevokeRefresh bool
	// HoldToken, if set, makes the token endpoint wait until it is closed
	// (or the request ends) before answering; Holding, if set, is sent to
	// (without blocking) when a request starts waiting.
	HoldToken chan struct{}
	Holding   chan struct{}
	// Device offers the device authorization grant.
	Device bool
	// DropScope is a scope the server never grants, whatever is asked.
	DropScope string
	// TokenEndpoint, when set, is the token_endpoint the metadata names
	// instead of the issuer's own /token (serve it with a server of
	// Handler, on another origin).
	TokenEndpoint string
	// IdentityAssertion is the ID token the identity provider (at
	// IdPTokenURL) exchanges for an authorization grant that the token
	// endpoint accepts (cross-app access).
	IdentityAssertion string
}

// Server is the authorization server and the MCP server it protects.
type Server struct {
	t   testing.TB
	AS  *httptest.Server // the authorization server (the first: see MoveAS)
	RS  *httptest.Server // the MCP server (resource server)
	mcp *server.StreamableHTTPServer
	sse *server.SSEServer // set before the first request

	mu     sync.Mutex
	cfg    Config
	log    []Request
	codes  map[string]*grant
	tokens map[string]*grant // access tokens
	// jtis and proofFailures: the DPoP proofs seen, and why any was
	// refused (dpop.go).
	jtis          map[string]bool
	proofFailures []string
	refresh       map[string]*grant
	devices       map[string]*device // by device code
	jags          map[string]*grant  // identity assertion grants issued by the IdP
	approve       chan struct{}      // closed and replaced when a device is approved
	hanging       int                // token requests held now
	movedTo       *httptest.Server   // the authorization server since MoveAS; nil: AS
}

// Request is one request a server received, for the test to inspect.
type Request struct {
	// Kind is "prm", "as-metadata", "register", "authorize", "token",
	// "device", "device-verify" or "mcp".
	Kind string
	// Host is the host (and port) the request was sent to: which of the
	// authorization servers (see MoveAS, Handler) received it.
	Host   string
	Path   string
	Form   url.Values // query and form parameters
	Header http.Header
}

// grant is what a code or token stands for.
type grant struct {
	clientID, redirectURI, challenge, resource string
	jkt                                        string // DPoP: the key the token is bound to
	scopes                                     []string
	expiry                                     time.Time
}

// device is a pending device authorization.
type device struct {
	userCode string
	approved bool
	g        grant
}

// New starts the servers with cfg; they stop when the test ends.
func New(t testing.TB, cfg Config) *Server {
	t.Helper()
	s := &Server{t: t, cfg: cfg, codes: map[string]*grant{}, tokens: map[string]*grant{}, jtis: map[string]bool{},
		refresh: map[string]*grant{}, devices: map[string]*device{}, jags: map[string]*grant{}, approve: make(chan struct{})}
	s.AS = httptest.NewServer(s.asHandler())
	srv := server.NewMCPServer("protected", "1.0.0", server.WithToolCapabilities(false))
	for _, name := range []string{"echo", "admin"} {
		srv.AddTool(mcp.NewTool(name, mcp.WithString("text")), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(name + ":" + req.GetString("text", "")), nil
		})
	}
	s.mcp = server.NewStreamableHTTPServer(srv, server.WithEndpointPath("/mcp"), server.WithStateful(true))
	s.RS = httptest.NewUnstartedServer(s.rsHandler())
	s.RS.Start()
	s.sse = server.NewSSEServer(srv, server.WithBaseURL(s.RS.URL))
	t.Cleanup(func() {
		s.sse.CloseSessions()
		s.RS.Close()
		s.AS.Close()
	})
	return s
}

// MCPURL is the protected MCP server's URL (streamable HTTP).
func (s *Server) MCPURL() string { return s.RS.URL + "/mcp" }

// SSEURL is the protected MCP server's URL over the legacy SSE transport.
// Its protected resource is the server's root: use it with
// Config.RootMetadata.
func (s *Server) SSEURL() string { return s.RS.URL + "/sse" }

// IdPTokenURL is the identity provider's token endpoint (cross-app
// access; served by the same process as the authorization server).
func (s *Server) IdPTokenURL() string { return s.Issuer() + "/idp/token" }

// Issuer is the authorization server's issuer.
func (s *Server) Issuer() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.movedTo != nil {
		return s.movedTo.URL
	}
	return s.AS.URL
}

// MoveAS starts another authorization server (another issuer, with the
// same handlers and clients) and makes the protected resource metadata name
// it from now on; the tokens issued so far are revoked, as a resource
// server that moved would refuse them (SEP-2352). It returns the new
// issuer. The first server (AS) keeps answering.
func (s *Server) MoveAS() string {
	as := httptest.NewServer(s.asHandler())
	s.t.Cleanup(as.Close)
	s.mu.Lock()
	s.movedTo = as
	clear(s.tokens)
	clear(s.refresh)
	s.mu.Unlock()
	return as.URL
}

// Handler is the authorization server's handler, for a server of the test's
// own on another origin (a token endpoint away from the issuer, say).
func (s *Server) Handler() http.Handler { return s.asHandler() }

// Set changes the configuration.
func (s *Server) Set(change func(*Config)) {
	s.mu.Lock()
	change(&s.cfg)
	s.mu.Unlock()
}

func (s *Server) config() Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

// Requests returns the requests of kind received so far.
func (s *Server) Requests(kind string) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.log {
		if r.Kind == kind {
			out = append(out, r)
		}
	}
	return out
}

// record logs r as kind.
func (s *Server) record(kind string, r *http.Request) Request {
	_ = r.ParseForm()
	req := Request{Kind: kind, Host: r.Host, Path: r.URL.Path, Form: r.Form, Header: r.Header.Clone()}
	s.mu.Lock()
	s.log = append(s.log, req)
	s.mu.Unlock()
	return req
}

// HangToken makes the token endpoint accept requests and answer none:
// each waits until its client gives up, or until release is called, which
// makes the endpoint answer again (the requests still waiting too). hung
// receives a value for each request that starts waiting (it is dropped
// when the buffer of 16 is full). Calling release again does nothing.
func (s *Server) HangToken() (hung <-chan struct{}, release func()) {
	hold, holding := make(chan struct{}), make(chan struct{}, 16)
	s.Set(func(c *Config) { c.HoldToken, c.Holding = hold, holding })
	var once sync.Once
	return holding, func() {
		once.Do(func() {
			s.Set(func(c *Config) { c.HoldToken, c.Holding = nil, nil })
			close(hold)
		})
	}
}

// Hanging reports how many token requests are waiting for an answer (see
// HangToken and Config.HoldToken): 0 once every client that sent one gave
// up.
func (s *Server) Hanging() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hanging
}

// Revoke invalidates every access token issued so far.
func (s *Server) Revoke() {
	s.mu.Lock()
	clear(s.tokens)
	s.mu.Unlock()
}

// Follow opens a prompt's URL the way a browser would: it follows the
// redirects (to the client's loopback listener) and fails unless the last
// answer is 2xx.
func Follow(ctx context.Context, rawURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return &StatusError{URL: resp.Request.URL.String(), Status: resp.StatusCode}
	}
	return nil
}

// StatusError is Follow's error for a non-2xx answer.
type StatusError struct {
	URL    string
	Status int
}

// Error implements error.
func (e *StatusError) Error() string { return e.URL + ": HTTP " + http.StatusText(e.Status) }

// writeJSON writes v as a JSON answer with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// oauthError writes an OAuth error answer.
func oauthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

// newToken returns a fresh random token.
func newToken(prefix string) string { return prefix + rand.Text() }

// hasAll reports whether have contains every scope of need.
func hasAll(have []string, need string) bool {
	for _, s := range strings.Fields(need) {
		if !slices.Contains(have, s) {
			return false
		}
	}
	return true
}
