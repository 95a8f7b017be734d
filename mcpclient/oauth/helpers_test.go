package oauth_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/testsupport/oauthtest"
	"github.com/acpgate/acpgate/mcpclient/oauth"
)

// newClient returns a Client for s's MCP server with a Store in a fresh
// directory (unless opts sets one).
func newClient(t *testing.T, s *oauthtest.Server, cfg oauth.Config, opts *oauth.Options) *oauth.Client {
	t.Helper()
	var o oauth.Options
	if opts != nil {
		o = *opts
	}
	if o.Store == nil {
		o.Store = oauth.NewStore(t.TempDir())
	}
	c, err := oauth.New(s.MCPURL(), cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// follow is a PresentFunc that opens the prompt's URL like a browser and
// leaves the outcome to the redirect.
func follow(ctx context.Context, p oauth.Prompt) error {
	_ = oauthtest.Follow(ctx, p.URL)
	return nil
}

// prompts records the prompts a sign-in presents, then follows them.
type prompts struct {
	mu   sync.Mutex
	seen []oauth.Prompt
}

func (p *prompts) present(ctx context.Context, pr oauth.Prompt) error {
	p.mu.Lock()
	p.seen = append(p.seen, pr)
	p.mu.Unlock()
	return follow(ctx, pr)
}

// signIn signs c in, failing the test on an error.
func signIn(t *testing.T, c *oauth.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.SignIn(ctx, follow); err != nil {
		t.Fatalf("SignIn: %v", err)
	}
}

// initialize is an MCP initialize request body.
const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// post sends an MCP request body to url through c's RoundTripper.
func post(t *testing.T, c *oauth.Client, url, body string) (*http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := (&http.Client{Transport: c.RoundTripper(nil)}).Do(req)
	if err == nil {
		t.Cleanup(func() { resp.Body.Close() })
	}
	return resp, err
}

// mustOK fails the test unless an initialize through c succeeds.
func mustOK(t *testing.T, c *oauth.Client, s *oauthtest.Server) {
	t.Helper()
	resp, err := post(t, c, s.MCPURL(), initialize)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: HTTP %d", resp.StatusCode)
	}
}

// mustNeedAuth fails the test unless an initialize through c fails with a
// *NeedsAuthError, which it returns.
func mustNeedAuth(t *testing.T, c *oauth.Client, s *oauthtest.Server) *oauth.NeedsAuthError {
	t.Helper()
	_, err := post(t, c, s.MCPURL(), initialize)
	var na *oauth.NeedsAuthError
	if !errors.Is(err, oauth.ErrNeedsAuth) || !errors.As(err, &na) {
		t.Fatalf("initialize: %v, want a NeedsAuthError", err)
	}
	return na
}

// stepOf returns the step of a sign-in error.
func stepOf(t *testing.T, err error) oauth.Step {
	t.Helper()
	var e *oauth.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is no *oauth.Error", err, err)
	}
	return e.Step
}

// grantTypes returns the grant_type of each token request s received.
func grantTypes(s *oauthtest.Server) []string {
	var out []string
	for _, r := range s.Requests("token") {
		out = append(out, r.Form.Get("grant_type"))
	}
	return out
}
