package oauth_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/testsupport/oauthtest"
	"github.com/acpgate/acpgate/mcpclient/oauth"
)

// secretsAt counts the token requests s received at issuer's host that
// carry the secret of client cc ("s3cret"), basic or form.
func secretsAt(t *testing.T, s *oauthtest.Server, issuer string) int {
	t.Helper()
	u, err := url.Parse(issuer)
	if err != nil {
		t.Fatal(err)
	}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("cc:s3cret"))
	n := 0
	for _, r := range s.Requests("token") {
		if r.Host == u.Host && (r.Header.Get("Authorization") == basic || r.Form.Get("client_secret") == "s3cret") {
			n++
		}
	}
	return n
}

// signInErr is the error of a SignIn of c (present: follow).
func signInErr(c *oauth.Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return c.SignIn(ctx, follow)
}

// A client-credentials client used at one issuer is not used at the one
// the resource names after a move: no secret goes there, in this Client or
// in a new one of the same Store (a restart), and the error names both.
func TestMachineClientStaysWithItsIssuer(t *testing.T) {
	s, cfg := ccServer(t)
	store := oauth.NewStore(t.TempDir())
	c := newClient(t, s, cfg, &oauth.Options{Store: store})
	t.Cleanup(func() { _ = c.Close() })
	mustOK(t, c, s)
	first, moved := s.Issuer(), s.MoveAS()
	if na := mustNeedAuth(t, c, s); !errors.Is(na.Reason, oauth.ErrAuthServerChanged) {
		t.Fatalf("reason %v, want ErrAuthServerChanged", na.Reason)
	}
	for i, cl := range []*oauth.Client{c, newClient(t, s, cfg, &oauth.Options{Store: store})} {
		err := signInErr(cl)
		if !errors.Is(err, oauth.ErrClientIssuer) || stepOf(t, err) != oauth.StepRegistration {
			t.Fatalf("client %d: sign-in after the move: %v, want ErrClientIssuer", i, err)
		}
		for _, iss := range []string{first, moved} {
			if !strings.Contains(err.Error(), iss) {
				t.Fatalf("client %d: %v does not name %s", i, err, iss)
			}
		}
		_ = cl.Close()
	}
	if n := secretsAt(t, s, moved); n != 0 {
		t.Fatalf("the new issuer received the secret %d times", n)
	}
}

// Config.Issuer ties the configured client from its first use: at any
// other issuer the secret is not sent; at its own, it is.
func TestConfiguredIssuer(t *testing.T) {
	s, cfg := ccServer(t)
	cfg.Issuer = "http://127.0.0.1:1/elsewhere"
	c := newClient(t, s, cfg, nil)
	t.Cleanup(func() { _ = c.Close() })
	if err := signInErr(c); !errors.Is(err, oauth.ErrClientIssuer) {
		t.Fatalf("sign-in at another issuer: %v, want ErrClientIssuer", err)
	}
	if n := secretsAt(t, s, s.Issuer()); n != 0 {
		t.Fatalf("the secret went to an issuer it does not belong to (%d times)", n)
	}
	cfg.Issuer = s.Issuer() + "/"
	c2 := newClient(t, s, cfg, nil)
	t.Cleanup(func() { _ = c2.Close() })
	if err := signInErr(c2); err != nil {
		t.Fatalf("sign-in at its own issuer: %v", err)
	}
}

// A user's sign-in with a configured confidential client, after the move,
// registers a client of its own at the new issuer; the configured secret
// is not sent there. Without registration there, the error names both.
func TestUserSignInRegistersAtTheNewIssuer(t *testing.T) {
	s := oauthtest.New(t, oauthtest.Config{AuthMethods: []string{oauth.AuthClientSecretBasic, oauth.AuthNone}, Clients: map[string]string{"cc": "s3cret"}})
	cfg := oauth.Config{ClientID: "cc", ClientSecret: "s3cret"}
	c := newClient(t, s, cfg, nil)
	t.Cleanup(func() { _ = c.Close() })
	mustNeedAuth(t, c, s)
	signIn(t, c)
	mustOK(t, c, s)
	moved := s.MoveAS()
	mustNeedAuth(t, c, s)
	signIn(t, c)
	mustOK(t, c, s)
	if n := secretsAt(t, s, moved); n != 0 {
		t.Fatalf("the new issuer received the configured secret %d times", n)
	}
	if len(s.Requests("register")) != 1 {
		t.Fatalf("registrations %d, want one at the new issuer", len(s.Requests("register")))
	}

	s.Set(func(c *oauthtest.Config) { c.NoRegistration = true })
	again := s.MoveAS()
	mustNeedAuth(t, c, s)
	err := signInErr(c)
	if !errors.Is(err, oauth.ErrClientIssuer) || !strings.Contains(err.Error(), again) {
		t.Fatalf("sign-in at an issuer without registration: %v, want ErrClientIssuer naming %s", err, again)
	}
}

// A token endpoint on another origin than its issuer is used by default;
// Config.SameOriginTokenEndpoint refuses it before anything is sent there.
func TestSameOriginTokenEndpoint(t *testing.T) {
	s, cfg := ccServer(t)
	elsewhere := httptest.NewServer(s.Handler())
	t.Cleanup(elsewhere.Close)
	s.Set(func(c *oauthtest.Config) { c.TokenEndpoint = elsewhere.URL + "/token" })
	c := newClient(t, s, cfg, nil)
	t.Cleanup(func() { _ = c.Close() })
	mustOK(t, c, s)
	cfg.SameOriginTokenEndpoint = true
	strict := newClient(t, s, cfg, nil)
	t.Cleanup(func() { _ = strict.Close() })
	before := secretsAt(t, s, elsewhere.URL)
	err := signInErr(strict)
	if !errors.Is(err, oauth.ErrTokenEndpointOrigin) || !errors.Is(err, oauth.ErrMetadata) {
		t.Fatalf("sign-in with the token endpoint elsewhere: %v, want ErrTokenEndpointOrigin", err)
	}
	if !strings.Contains(err.Error(), s.Issuer()) || !strings.Contains(err.Error(), elsewhere.URL) {
		t.Fatalf("%v does not name both origins", err)
	}
	if n := secretsAt(t, s, elsewhere.URL) - before; n != 0 {
		t.Fatalf("the refused token endpoint received the secret %d times", n)
	}
}
