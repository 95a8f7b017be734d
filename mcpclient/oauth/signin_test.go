package oauth_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/testsupport/oauthtest"
	"github.com/acpgate/acpgate/mcpclient/oauth"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// The whole flow through mcp-go's streamable HTTP client: the server's 401
// becomes ErrNeedsAuth (with the challenge), SignIn discovers, registers,
// authorizes with PKCE S256 and the resource, and the tools work.
func TestSignInThroughMCPClient(t *testing.T) {
	s := oauthtest.New(t, oauthtest.Config{ChallengeScope: "mcp:basic"})
	c := newClient(t, s, oauth.Config{}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	connect := func() (*client.Client, error) {
		tr, err := transport.NewStreamableHTTP(s.MCPURL(), transport.WithHTTPBasicClient(&http.Client{Transport: c.RoundTripper(nil)}))
		if err != nil {
			t.Fatal(err)
		}
		cl := client.NewClient(tr, client.WithProtocolVersion("2025-11-25"))
		t.Cleanup(func() { cl.Close() })
		if err := cl.Start(ctx); err != nil {
			return nil, err
		}
		_, err = cl.Initialize(ctx, mcp.InitializeRequest{})
		return cl, err
	}
	_, err := connect()
	var na *oauth.NeedsAuthError
	if !errors.As(err, &na) || !errors.Is(err, oauth.ErrNeedsAuth) {
		t.Fatalf("initialize before sign-in: %v, want a NeedsAuthError", err)
	}
	if na.Status != http.StatusUnauthorized || na.Scope != "mcp:basic" || !strings.HasSuffix(na.ResourceMetadata, "/.well-known/oauth-protected-resource/mcp") {
		t.Fatalf("NeedsAuthError %+v lacks the challenge", na)
	}
	if c.SignedIn() {
		t.Fatal("SignedIn before the sign-in")
	}
	var p prompts
	if err := c.SignIn(ctx, p.present); err != nil {
		t.Fatal(err)
	}
	if len(p.seen) != 1 || p.seen[0].ID == "" || p.seen[0].Server != s.MCPURL() {
		t.Fatalf("prompts %+v", p.seen)
	}
	cl, err := connect()
	if err != nil {
		t.Fatalf("initialize after sign-in: %v", err)
	}
	res, err := cl.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	auth := s.Requests("authorize")
	if len(auth) != 1 {
		t.Fatalf("%d authorization requests", len(auth))
	}
	q := auth[0].Form
	if q.Get("code_challenge_method") != "S256" || q.Get("resource") != s.MCPURL() || q.Get("scope") != "mcp:basic" {
		t.Fatalf("authorization request %v", q)
	}
	tok := s.Requests("token")
	if len(tok) != 1 || tok[0].Form.Get("resource") != s.MCPURL() || tok[0].Form.Get("code_verifier") == "" {
		t.Fatalf("token requests %+v", tok)
	}
	reg := s.Requests("register")
	if len(reg) != 1 {
		t.Fatal("no dynamic registration")
	}
	// SEP-837: a client with a loopback redirect registers as native.
	if got := reg[0].Form.Get("application_type"); got != `"native"` {
		t.Fatalf("registered application_type %s, want \"native\"", got)
	}
	if !c.SignedIn() {
		t.Fatal("not SignedIn after the sign-in")
	}
}

// Without resource_metadata in the challenge, the well-known URIs are
// tried, path-based first.
func TestWellKnownFallback(t *testing.T) {
	for _, root := range []bool{false, true} {
		s := oauthtest.New(t, oauthtest.Config{NoChallengeMetadata: true, RootMetadata: root})
		c := newClient(t, s, oauth.Config{}, nil)
		mustNeedAuth(t, c, s)
		signIn(t, c)
		mustOK(t, c, s)
		var paths []string
		for _, r := range s.Requests("prm") {
			paths = append(paths, r.Path)
		}
		want := []string{"/.well-known/oauth-protected-resource/mcp"}
		if root {
			want = append(want, "/.well-known/oauth-protected-resource")
		}
		if !slices.Equal(paths, want) {
			t.Errorf("root=%v: metadata requests %v, want %v", root, paths, want)
		}
		if got := s.Requests("authorize")[0].Form.Get("resource"); root && got != s.RS.URL {
			t.Errorf("resource %q, want the metadata's %q", got, s.RS.URL)
		}
	}
}

// Without protected-resource metadata, the 2025-03-26 layout: the
// authorization server's metadata at the server's origin.
func TestLegacyDiscovery(t *testing.T) {
	s := oauthtest.New(t, oauthtest.Config{NoResourceMetadata: true, LegacyMetadata: true})
	c := newClient(t, s, oauth.Config{}, nil)
	na := mustNeedAuth(t, c, s)
	if na.ResourceMetadata != "" {
		t.Fatalf("challenge names metadata: %+v", na)
	}
	signIn(t, c)
	mustOK(t, c, s)
	md := s.Requests("as-metadata")
	if len(md) != 1 || md[0].Header.Get("MCP-Protocol-Version") == "" {
		t.Fatalf("metadata requests %+v", md)
	}
	if got := s.Requests("authorize")[0].Form.Get("resource"); got != s.MCPURL() {
		t.Fatalf("resource %q", got)
	}
}

// Metadata found nowhere, or an authorization server without metadata:
// the error names the metadata step.
func TestNoMetadata(t *testing.T) {
	for name, cfg := range map[string]oauthtest.Config{
		"nothing anywhere":      {NoResourceMetadata: true, NoServerMetadata: true},
		"no server metadata":    {NoServerMetadata: true},
		"resource of elsewhere": {Resource: "https://evil.example.com/mcp"},
	} {
		t.Run(name, func(t *testing.T) {
			s := oauthtest.New(t, cfg)
			c := newClient(t, s, oauth.Config{}, nil)
			mustNeedAuth(t, c, s)
			err := c.SignIn(context.Background(), follow)
			if !errors.Is(err, oauth.ErrMetadata) || stepOf(t, err) != oauth.StepMetadata {
				t.Fatalf("SignIn: %v, want a metadata error", err)
			}
			if n := len(s.Requests("authorize")); n != 0 {
				t.Fatalf("%d authorization requests after a metadata failure", n)
			}
		})
	}
	s := oauthtest.New(t, oauthtest.Config{Resource: "https://evil.example.com/mcp"})
	c := newClient(t, s, oauth.Config{}, nil)
	mustNeedAuth(t, c, s)
	if err := c.SignIn(context.Background(), follow); !errors.Is(err, oauth.ErrResourceMismatch) {
		t.Fatalf("SignIn with a foreign resource: %v", err)
	}
}

// Faults in the authorization response end the sign-in with the step and
// the reason.
func TestAuthorizationResponseFaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  oauthtest.Config
		want error
	}{
		{"wrong iss", oauthtest.Config{WrongIss: true}, oauth.ErrIssuerMismatch},
		{"wrong iss where supported", oauthtest.Config{WrongIss: true, IssSupported: true}, oauth.ErrIssuerMismatch},
		{"iss equal only once normalised", oauthtest.Config{IssSlash: true, IssSupported: true}, oauth.ErrIssuerMismatch},
		{"state mismatch", oauthtest.Config{WrongState: true}, oauth.ErrStateMismatch},
		{"declined", oauthtest.Config{Deny: true}, oauth.ErrDeclined},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := oauthtest.New(t, tc.cfg)
			c := newClient(t, s, oauth.Config{}, nil)
			mustNeedAuth(t, c, s)
			err := c.SignIn(context.Background(), follow)
			if !errors.Is(err, tc.want) || stepOf(t, err) != oauth.StepRedirect {
				t.Fatalf("SignIn: %v, want %v at the redirect", err, tc.want)
			}
			if len(s.Requests("token")) != 0 {
				t.Fatal("the code was redeemed after a bad redirect")
			}
		})
	}
	// The right iss passes.
	s := oauthtest.New(t, oauthtest.Config{IssSupported: true})
	c := newClient(t, s, oauth.Config{}, nil)
	mustNeedAuth(t, c, s)
	signIn(t, c)
	mustOK(t, c, s)
}

// A refresh token the server refuses falls back to a sign-in, once: the
// next requests need the sign-in without trying the dead token again.
func TestRefreshRevoked(t *testing.T) {
	s := oauthtest.New(t, oauthtest.Config{RefreshTokens: true})
	c := newClient(t, s, oauth.Config{}, nil)
	mustNeedAuth(t, c, s)
	signIn(t, c)
	mustOK(t, c, s)

	// A token the server forgot is refreshed and the request retried.
	s.Revoke()
	mustOK(t, c, s)
	if got := grantTypes(s); !slices.Equal(got, []string{"authorization_code", "refresh_token"}) {
		t.Fatalf("token requests %v", got)
	}

	s.Revoke()
	s.Set(func(c *oauthtest.Config) { c.RevokeRefresh = true })
	na := mustNeedAuth(t, c, s)
	var step *oauth.Error
	if !errors.As(na, &step) || step.Step != oauth.StepRefresh {
		t.Fatalf("NeedsAuthError %v does not say the refresh was refused", na)
	}
	if c.SignedIn() {
		t.Fatal("SignedIn with a refused refresh token")
	}
	mustNeedAuth(t, c, s)
	if n := len(grantTypes(s)); n != 3 {
		t.Fatalf("%d token requests; the dead refresh token was tried again", n)
	}
	s.Set(func(c *oauthtest.Config) { c.RevokeRefresh = false })
	signIn(t, c)
	mustOK(t, c, s)
}

// A token about to expire is refreshed before the request.
func TestRefreshBeforeExpiry(t *testing.T) {
	s := oauthtest.New(t, oauthtest.Config{RefreshTokens: true})
	var skew time.Duration
	c := newClient(t, s, oauth.Config{}, &oauth.Options{Now: func() time.Time { return time.Now().Add(skew) }})
	mustNeedAuth(t, c, s)
	signIn(t, c)
	skew = 59*time.Minute + 45*time.Second // the one-hour token expires in 15 s
	mustOK(t, c, s)
	if got := grantTypes(s); !slices.Equal(got, []string{"authorization_code", "refresh_token"}) {
		t.Fatalf("token requests %v, want a refresh before the request", got)
	}
	if n := len(s.Requests("mcp")); n != 2 {
		t.Fatalf("%d MCP requests, want the 401 and one with the refreshed token", n)
	}
}

func TestRegistrationRefused(t *testing.T) {
	s := oauthtest.New(t, oauthtest.Config{RefuseRegistration: true})
	c := newClient(t, s, oauth.Config{}, nil)
	mustNeedAuth(t, c, s)
	err := c.SignIn(context.Background(), follow)
	var te *oauth.TokenError
	if !errors.Is(err, oauth.ErrRegistration) || stepOf(t, err) != oauth.StepRegistration ||
		!errors.As(err, &te) || te.Code != "invalid_client_metadata" || te.Description != "registration is closed" {
		t.Fatalf("SignIn: %v", err)
	}

	s = oauthtest.New(t, oauthtest.Config{NoRegistration: true})
	c = newClient(t, s, oauth.Config{}, nil)
	mustNeedAuth(t, c, s)
	if err := c.SignIn(context.Background(), follow); !errors.Is(err, oauth.ErrRegistration) {
		t.Fatalf("SignIn without registration or client: %v", err)
	}
}

// A token endpoint that does not answer holds the sign-in only as long as
// its context; the loopback listener is closed after it.
func TestSlowTokenEndpoint(t *testing.T) {
	hold, holding := make(chan struct{}), make(chan struct{}, 1)
	defer close(hold)
	s := oauthtest.New(t, oauthtest.Config{HoldToken: hold, Holding: holding})
	c := newClient(t, s, oauth.Config{}, nil)
	mustNeedAuth(t, c, s)
	ctx, cancel := context.WithCancel(context.Background())
	var p prompts
	done := make(chan error, 1)
	go func() { done <- c.SignIn(ctx, p.present) }()
	<-holding
	cancel()
	err := <-done
	if !errors.Is(err, context.Canceled) || stepOf(t, err) != oauth.StepToken {
		t.Fatalf("SignIn: %v", err)
	}
	redirect := s.Requests("authorize")[0].Form.Get("redirect_uri")
	if _, err := http.Get(redirect); err == nil {
		t.Fatal("the loopback listener still answers after the sign-in")
	}
}

// A user who never comes back times the sign-in out.
func TestRedirectTimeout(t *testing.T) {
	s := oauthtest.New(t, oauthtest.Config{})
	c := newClient(t, s, oauth.Config{}, &oauth.Options{RedirectTimeout: 50 * time.Millisecond})
	mustNeedAuth(t, c, s)
	err := c.SignIn(context.Background(), func(context.Context, oauth.Prompt) error { return nil })
	if !errors.Is(err, oauth.ErrRedirectTimeout) || stepOf(t, err) != oauth.StepRedirect {
		t.Fatalf("SignIn: %v", err)
	}
	// A present that refuses ends the sign-in at once.
	err = c.SignIn(context.Background(), func(context.Context, oauth.Prompt) error { return oauth.ErrDeclined })
	if !errors.Is(err, oauth.ErrDeclined) || stepOf(t, err) != oauth.StepAuthorization {
		t.Fatalf("SignIn declined by present: %v", err)
	}
	if err := c.SignIn(context.Background(), nil); !errors.Is(err, oauth.ErrNoSignIn) {
		t.Fatalf("SignIn without present: %v", err)
	}
}

// When the protected resource metadata names another authorization server
// and the token is refused (SEP-2352), the token is dropped without a
// refresh at the old server, the NeedsAuthError says why, and the next
// sign-in goes to the new server with a registration of its own.
func TestAuthorizationServerMoved(t *testing.T) {
	s := oauthtest.New(t, oauthtest.Config{RefreshTokens: true})
	c := newClient(t, s, oauth.Config{}, nil)
	mustNeedAuth(t, c, s)
	signIn(t, c)
	mustOK(t, c, s)
	old := s.Issuer()
	moved := s.MoveAS()
	refreshes := len(s.Requests("token"))
	na := mustNeedAuth(t, c, s)
	if !errors.Is(na.Reason, oauth.ErrAuthServerChanged) {
		t.Fatalf("the refusal's reason: %v, want ErrAuthServerChanged", na.Reason)
	}
	if len(s.Requests("token")) != refreshes {
		t.Fatalf("a refresh at the old authorization server %s", old)
	}
	var p prompts
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.SignIn(ctx, p.present); err != nil {
		t.Fatal(err)
	}
	if len(p.seen) != 1 || !strings.HasPrefix(p.seen[0].URL, moved+"/") {
		t.Fatalf("the sign-in went to %v, want the new server %s", p.seen, moved)
	}
	if n := len(s.Requests("register")); n != 2 {
		t.Fatalf("%d registrations, want one at each server", n)
	}
	mustOK(t, c, s)
}
