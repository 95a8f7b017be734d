package oauth_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/testsupport/oauthtest"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/mcpclient/oauth"
)

// ccServer is an authorization server with the confidential client cc.
func ccServer(t *testing.T) (*oauthtest.Server, oauth.Config) {
	s := oauthtest.New(t, oauthtest.Config{AuthMethods: []string{oauth.AuthClientSecretBasic}, Clients: map[string]string{"cc": "s3cret"}})
	return s, oauth.Config{GrantType: oauth.GrantClientCredentials, ClientID: "cc", ClientSecret: "s3cret"}
}

// A machine grant's sign-in is a token flight: with the token endpoint
// hung, each SignIn waits until its own context ends and then fails naming
// the token endpoint, whoever started the flight; one token request serves
// them all.
func TestMachineSignInStopsAtItsDeadline(t *testing.T) {
	s, cfg := ccServer(t)
	c := newClient(t, s, cfg, nil)
	t.Cleanup(func() { _ = c.Close() })
	mustOK(t, c, s) // the first request gets a token by the grant
	hung, release := s.HangToken()
	defer release()
	first := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		first <- c.SignIn(ctx, nil)
	}()
	<-hung
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := c.SignIn(ctx, nil)
	t.Logf("the second sign-in ended after %s (its deadline 100 ms)", time.Since(start))
	mustNameTokenEndpoint(t, "a sign-in joining the flight", err, s)
	mustNameTokenEndpoint(t, "the sign-in that started the flight", <-first, s)
	if got := grantTypes(s); !slices.Equal(got, []string{"client_credentials", "client_credentials"}) {
		t.Fatalf("token requests %v, want one for both sign-ins", got)
	}
	release()
	testbin.WaitFor(t, "the flight's end", func() bool { return oauthtest.FlightGoroutines(oauth.FlightFrames()) == 0 })
	if err := c.SignIn(context.Background(), nil); err != nil {
		t.Fatalf("sign-in once the endpoint answers: %v", err)
	}
}

// Two Clients of one Store (two sessions), each with a token of its own,
// both revoked: the one whose token is older adopts the other's from the
// Store, which the server refuses too; it then gets one by its grant and
// the request goes through, rather than asking for a sign-in.
func TestMachineGrantAfterStoredTokenRefused(t *testing.T) {
	s, cfg := ccServer(t)
	store := oauth.NewStore(t.TempDir())
	a := newClient(t, s, cfg, &oauth.Options{Store: store})
	t.Cleanup(func() { _ = a.Close() })
	mustOK(t, a, s)
	s.Revoke()
	b := newClient(t, s, cfg, &oauth.Options{Store: store})
	t.Cleanup(func() { _ = b.Close() })
	mustOK(t, b, s) // a token of its own, the newer in the Store
	s.Revoke()
	mustOK(t, a, s)
}
