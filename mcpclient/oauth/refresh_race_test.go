package oauth

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/testsupport/oauthtest"
)

// Two Clients of one Store (two sessions of one server) refresh with the
// same refresh token; the server rotates refresh tokens, so the second is
// refused. The second Client then takes the token the first stored,
// instead of dropping its own and asking for a sign-in.
func TestRefreshRaceAcrossClients(t *testing.T) {
	s := oauthtest.New(t, oauthtest.Config{RefreshTokens: true})
	store := NewStore(t.TempDir())
	newC := func() *Client {
		c, err := New(s.MCPURL(), Config{}, Options{Store: store})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	c1 := newC()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	post := func(c *Client) int {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.MCPURL(), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := (&http.Client{Transport: c.RoundTripper(nil)}).Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	post(c1) // the 401 that records the challenge
	if err := c1.SignIn(ctx, func(ctx context.Context, p Prompt) error { return oauthtest.Follow(ctx, p.URL) }); err != nil {
		t.Fatal(err)
	}
	c2 := newC() // takes the stored token, and its refresh token
	c1.mu.Lock()
	r1 := c1.rec
	c1.mu.Unlock()
	if _, err := c1.refresh(ctx, r1); err != nil { // spends the refresh token
		t.Fatal(err)
	}
	c2.mu.Lock()
	r2 := c2.rec
	c2.mu.Unlock()
	tok, err := c2.refresh(ctx, r2) // the same, spent, refresh token
	if err != nil || tok == "" {
		t.Fatalf("the second refresh: %q, %v; want the first Client's token", tok, err)
	}
	c1.mu.Lock()
	want := c1.rec.AccessToken
	c1.mu.Unlock()
	if tok != want {
		t.Fatal("the second Client did not take the token the first stored")
	}
	if got := post(c2); got != http.StatusOK {
		t.Fatalf("a request of the second Client: HTTP %d", got)
	}
}
