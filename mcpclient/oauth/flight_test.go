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
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/mcpclient/oauth"
)

// postWithin sends an initialize through c with a context that ends after
// d, and returns the error.
func postWithin(c *oauth.Client, url string, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(initialize))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := (&http.Client{Transport: c.RoundTripper(nil)}).Do(req)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

// mustNameTokenEndpoint fails the test unless err says that the token
// endpoint of s did not answer.
func mustNameTokenEndpoint(t *testing.T, what string, err error, s *oauthtest.Server) {
	t.Helper()
	var ue *oauth.UnansweredError
	if !errors.Is(err, oauth.ErrNoAnswer) || !errors.As(err, &ue) {
		t.Fatalf("%s: %v, want an UnansweredError", what, err)
	}
	if want := s.Issuer() + "/token"; ue.Endpoint != want || !strings.Contains(err.Error(), want) {
		t.Fatalf("%s: %v names %q, want the token endpoint %s", what, err, ue.Endpoint, want)
	}
}

// A token endpoint that accepts a refresh and never answers: each request
// waiting for the token leaves when its own context ends, saying which
// endpoint did not answer; they share one flight (one token request),
// which ends at its own bound; once the endpoint answers again, the next
// request refreshes and succeeds. (Each request has 500 ms: with 100 ms
// the one joining the flight, under the race detector on a loaded
// machine, ran out before it reached the flight.)
func TestHungTokenEndpoint(t *testing.T) {
	s := oauthtest.New(t, oauthtest.Config{RefreshTokens: true})
	c := newClient(t, s, oauth.Config{}, &oauth.Options{Timeouts: oauth.Timeouts{Header: 1500 * time.Millisecond}})
	t.Cleanup(func() { _ = c.Close() })
	mustNeedAuth(t, c, s)
	signIn(t, c)
	mustOK(t, c, s)

	s.Revoke()
	hung, release := s.HangToken()
	defer release()
	first := make(chan error, 1)
	go func() { first <- postWithin(c, s.MCPURL(), 500*time.Millisecond) }()
	<-hung
	oauthtest.MustSeeFlight(t, oauth.FlightFrames())
	// Joins the flight under way: no second token request.
	mustNameTokenEndpoint(t, "a request joining the flight", postWithin(c, s.MCPURL(), 500*time.Millisecond), s)
	err := <-first
	mustNameTokenEndpoint(t, "the request that started the flight", err, s)

	// The flight gives up at its bound (the answer's headers): nothing
	// stays blocked, on either side.
	testbin.WaitFor(t, "the flight's end", func() bool { return s.Hanging() == 0 && oauthtest.FlightGoroutines(oauth.FlightFrames()) == 0 })
	if got := grantTypes(s); !slices.Equal(got, []string{"authorization_code", "refresh_token"}) {
		t.Fatalf("token requests %v, want one refresh for both requests", got)
	}
	if !c.SignedIn() {
		t.Fatal("a refresh that was not answered dropped the token")
	}

	release()
	mustOK(t, c, s)
	if got := grantTypes(s); !slices.Equal(got, []string{"authorization_code", "refresh_token", "refresh_token"}) {
		t.Fatalf("token requests %v, want a refresh once the endpoint answers", got)
	}
}

// The flight's own bound (Timeouts.Token) ends it even where the HTTP
// client's bounds would not yet; its error, which a request waiting that
// long gets, names the endpoint.
func TestTokenFlightBound(t *testing.T) {
	s := oauthtest.New(t, oauthtest.Config{RefreshTokens: true})
	c := newClient(t, s, oauth.Config{}, &oauth.Options{Timeouts: oauth.Timeouts{Token: 200 * time.Millisecond}})
	t.Cleanup(func() { _ = c.Close() })
	mustNeedAuth(t, c, s)
	signIn(t, c)
	s.Revoke()
	hung, release := s.HangToken()
	defer release()
	res := make(chan error, 1)
	go func() { res <- postWithin(c, s.MCPURL(), 20*time.Second) }()
	<-hung
	oauthtest.MustSeeFlight(t, oauth.FlightFrames())
	err := <-res
	mustNameTokenEndpoint(t, "a request outlasting the flight", err, s)
	var fe *oauth.Error
	if !errors.As(err, &fe) || fe.Step != oauth.StepRefresh || !errors.Is(err, oauth.ErrTokenEndpoint) {
		t.Fatalf("%v: want the refresh step's error", err)
	}
	testbin.WaitFor(t, "the flight's end", func() bool { return s.Hanging() == 0 && oauthtest.FlightGoroutines(oauth.FlightFrames()) == 0 })
}

// Close ends the flight under way (its waiters fail at once) and no new
// one starts; Close is idempotent.
func TestCloseEndsTokenFlight(t *testing.T) {
	s := oauthtest.New(t, oauthtest.Config{RefreshTokens: true})
	c := newClient(t, s, oauth.Config{}, nil)
	mustNeedAuth(t, c, s)
	signIn(t, c)
	s.Revoke()
	hung, release := s.HangToken()
	defer release()
	done := make(chan error, 1)
	go func() { done <- postWithin(c, s.MCPURL(), time.Minute) }()
	<-hung
	oauthtest.MustSeeFlight(t, oauth.FlightFrames())
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("request waiting for a closed Client's flight: %v", err)
	}
	testbin.WaitFor(t, "the flight's end", func() bool { return s.Hanging() == 0 && oauthtest.FlightGoroutines(oauth.FlightFrames()) == 0 })
	if err := postWithin(c, s.MCPURL(), time.Minute); !errors.Is(err, oauth.ErrClosed) {
		t.Fatalf("refresh after Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
