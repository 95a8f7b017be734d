package oauth_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/internal/testsupport/oauthtest"
	"github.com/acpgate/acpgate/mcpclient/oauth"
)

// The client identity: a configured client wins, then a CIMD URL where
// the server supports it, then dynamic registration.
func TestClientIdentity(t *testing.T) {
	const cimd = "https://client.example.com/acpgate.json"
	for _, tc := range []struct {
		name      string
		server    oauthtest.Config
		cfg       oauth.Config
		clientID  string // "" = the registered one
		registers bool
		basic     bool // the token request authenticates with Basic
	}{
		{name: "dcr", registers: true},
		{name: "dcr with a secret", server: oauthtest.Config{RegisterSecret: true, RegisterAuthMethod: "client_secret_basic",
			AuthMethods: []string{"client_secret_basic"}}, registers: true, basic: true},
		{name: "configured", server: oauthtest.Config{NoRegistration: true, AuthMethods: []string{"client_secret_basic"},
			Clients: map[string]string{"pre": "s3cret"}}, cfg: oauth.Config{ClientID: "pre", ClientSecret: "s3cret"}, clientID: "pre", basic: true},
		{name: "configured post", server: oauthtest.Config{AuthMethods: []string{"client_secret_post"},
			Clients: map[string]string{"pre": "s3cret"}}, cfg: oauth.Config{ClientID: "pre", ClientSecret: "s3cret"}, clientID: "pre"},
		{name: "cimd", server: oauthtest.Config{CIMD: true}, cfg: oauth.Config{ClientMetadataURL: cimd}, clientID: cimd},
		{name: "cimd unsupported", cfg: oauth.Config{ClientMetadataURL: cimd}, registers: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := oauthtest.New(t, tc.server)
			c := newClient(t, s, tc.cfg, nil)
			mustNeedAuth(t, c, s)
			signIn(t, c)
			mustOK(t, c, s)
			if got := len(s.Requests("register")) == 1; got != tc.registers {
				t.Fatalf("registered: %v, want %v", got, tc.registers)
			}
			id := s.Requests("authorize")[0].Form.Get("client_id")
			if tc.clientID != "" && id != tc.clientID {
				t.Fatalf("client_id %q, want %q", id, tc.clientID)
			}
			tok := s.Requests("token")[0]
			if got := strings.HasPrefix(tok.Header.Get("Authorization"), "Basic "); got != tc.basic {
				t.Fatalf("Basic authentication: %v, want %v", got, tc.basic)
			}
		})
	}
}

// A 403 insufficient_scope asks for a step-up sign-in with the scopes
// added; one the server can never satisfy stops at ErrInsufficientScope.
func TestStepUp(t *testing.T) {
	s := oauthtest.New(t, oauthtest.Config{ChallengeScope: "mcp:basic", DropScope: "mcp:root",
		ToolScopes: map[string]string{"admin": "mcp:admin", "root": "mcp:root"}})
	c := newClient(t, s, oauth.Config{}, nil)
	mustNeedAuth(t, c, s)
	signIn(t, c)
	call := func(tool string) error {
		_, err := post(t, c, s.MCPURL(), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+tool+`"}}`)
		return err
	}
	var na *oauth.NeedsAuthError
	if err := call("admin"); !errors.As(err, &na) || na.Status != http.StatusForbidden || na.Scope != "mcp:admin" {
		t.Fatalf("call needing more scope: %v", err)
	}
	signIn(t, c)
	if got := s.Requests("authorize")[1].Form.Get("scope"); got != "mcp:basic mcp:admin" {
		t.Fatalf("step-up asked for %q", got)
	}
	if err := call("admin"); err != nil {
		t.Fatalf("call after the step-up: %v", err)
	}
	if err := call("root"); !errors.Is(err, oauth.ErrNeedsAuth) {
		t.Fatalf("call needing a scope never granted: %v", err)
	}
	signIn(t, c)
	if err := call("root"); !errors.Is(err, oauth.ErrInsufficientScope) || errors.Is(err, oauth.ErrNeedsAuth) {
		t.Fatalf("call after a step-up that cannot help: %v", err)
	}
	if n := len(s.Requests("authorize")); n != 3 {
		t.Fatalf("%d authorizations", n)
	}
}

// offline_access is asked for only where the authorization server lists
// it; registration always asks for refresh tokens.
func TestOfflineAccess(t *testing.T) {
	for _, supported := range []bool{true, false} {
		cfg := oauthtest.Config{ScopesSupported: []string{"mcp:basic"}, ServerScopes: []string{"mcp:basic"}}
		if supported {
			cfg.ServerScopes = append(cfg.ServerScopes, "offline_access")
		}
		s := oauthtest.New(t, cfg)
		c := newClient(t, s, oauth.Config{}, nil)
		mustNeedAuth(t, c, s)
		signIn(t, c)
		want := "mcp:basic"
		if supported {
			want += " offline_access"
		}
		if got := s.Requests("authorize")[0].Form.Get("scope"); got != want {
			t.Errorf("offline_access supported=%v: scope %q, want %q", supported, got, want)
		}
		if g := s.Requests("register")[0].Form.Get("grant_types"); !strings.Contains(g, "refresh_token") {
			t.Errorf("registered grant types %s", g)
		}
	}
}

// pemKey returns a fresh key of kind ("ec" or "rsa") as a PKCS#8 PEM.
func pemKey(t *testing.T, kind string) ([]byte, crypto.PublicKey) {
	t.Helper()
	var key crypto.Signer
	var err error
	if kind == "ec" {
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	} else {
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	}
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), key.Public()
}

// Client credentials get a token without the user: on the first 401, with
// client_secret_basic or a private_key_jwt assertion.
func TestClientCredentials(t *testing.T) {
	ecPEM, ecPub := pemKey(t, "ec")
	rsaPEM, rsaPub := pemKey(t, "rsa")
	for _, tc := range []struct {
		name   string
		server oauthtest.Config
		cfg    oauth.Config
	}{
		{"basic", oauthtest.Config{AuthMethods: []string{"client_secret_basic"}, Clients: map[string]string{"m2m": "s3cret"}},
			oauth.Config{ClientID: "m2m", ClientSecret: "s3cret"}},
		{"private_key_jwt ES256", oauthtest.Config{AuthMethods: []string{"private_key_jwt"}, PublicKey: ecPub},
			oauth.Config{ClientID: "m2m", PrivateKey: ecPEM, SigningAlgorithm: "ES256"}},
		{"private_key_jwt RS256", oauthtest.Config{AuthMethods: []string{"private_key_jwt"}, PublicKey: rsaPub},
			oauth.Config{ClientID: "m2m", PrivateKey: rsaPEM}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.server.Grants = []string{"client_credentials"}
			s := oauthtest.New(t, tc.server)
			tc.cfg.GrantType = oauth.GrantClientCredentials
			c := newClient(t, s, tc.cfg, nil)
			mustOK(t, c, s)
			if got := grantTypes(s); len(got) != 1 || got[0] != "client_credentials" {
				t.Fatalf("token requests %v", got)
			}
			if tok := s.Requests("token")[0]; tok.Form.Get("resource") != s.MCPURL() {
				t.Fatalf("token request without the resource: %v", tok.Form)
			}
			if len(s.Requests("authorize")) != 0 {
				t.Fatal("a machine grant asked the user")
			}
		})
	}
	// A refused client is a token endpoint error, not a sign-in.
	s := oauthtest.New(t, oauthtest.Config{AuthMethods: []string{"client_secret_basic"}, Clients: map[string]string{"m2m": "right"}})
	c := newClient(t, s, oauth.Config{GrantType: oauth.GrantClientCredentials, ClientID: "m2m", ClientSecret: "wrong"}, nil)
	_, err := post(t, c, s.MCPURL(), initialize)
	var te *oauth.TokenError
	if !errors.As(err, &te) || te.Code != "invalid_client" || errors.Is(err, oauth.ErrNeedsAuth) {
		t.Fatalf("wrong secret: %v", err)
	}
}

// Cross-app access: the identity assertion is exchanged at the identity
// provider, and the grant it returns at the authorization server.
func TestCrossAppAccess(t *testing.T) {
	s := oauthtest.New(t, oauthtest.Config{AuthMethods: []string{"client_secret_basic"},
		Clients: map[string]string{"xaa": "s3cret"}, IdentityAssertion: "id-token-of-the-user"})
	c := newClient(t, s, oauth.Config{ClientID: "xaa", ClientSecret: "s3cret", IdentityAssertion: "id-token-of-the-user",
		IDPClientID: "idp-client", IDPTokenEndpoint: s.IdPTokenURL()}, nil)
	mustOK(t, c, s)
	x := s.Requests("idp-token")
	if len(x) != 1 || x[0].Form.Get("audience") != s.Issuer() || x[0].Form.Get("resource") != s.MCPURL() || x[0].Form.Get("client_id") != "idp-client" {
		t.Fatalf("token exchange %+v", x)
	}
	if got := grantTypes(s); len(got) != 1 || got[0] != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		t.Fatalf("token requests %v", got)
	}
}

// The device grant shows a user code; the token comes once the user
// approved it on the verification page.
func TestDeviceGrant(t *testing.T) {
	s := oauthtest.New(t, oauthtest.Config{Device: true})
	c := newClient(t, s, oauth.Config{DeviceCode: true}, nil)
	mustNeedAuth(t, c, s)
	var p prompts
	if err := c.SignIn(context.Background(), p.present); err != nil {
		t.Fatal(err)
	}
	if len(p.seen) != 1 || p.seen[0].UserCode == "" || p.seen[0].VerificationURI != s.AS.URL+"/device/verify" {
		t.Fatalf("prompt %+v", p.seen)
	}
	mustOK(t, c, s)
	if len(s.Requests("authorize")) != 0 {
		t.Fatal("the device grant used the authorization endpoint")
	}
	// Without the grant on offer, a redirect is used.
	s = oauthtest.New(t, oauthtest.Config{})
	c = newClient(t, s, oauth.Config{DeviceCode: true}, nil)
	mustNeedAuth(t, c, s)
	signIn(t, c)
	if len(s.Requests("authorize")) != 1 {
		t.Fatal("no redirect sign-in without the device grant")
	}
}

func TestInvalidConfig(t *testing.T) {
	for name, cfg := range map[string]oauth.Config{
		"disabled":       {Disabled: true},
		"grant":          {GrantType: "password"},
		"machine no id":  {GrantType: oauth.GrantClientCredentials},
		"jwt no key":     {ClientID: "x", TokenEndpointAuthMethod: oauth.AuthPrivateKeyJWT},
		"bad key":        {ClientID: "x", PrivateKey: []byte("not a key")},
		"cimd not https": {ClientMetadataURL: "http://example.com/c.json"},
	} {
		if _, err := oauth.New("https://example.com/mcp", cfg, oauth.Options{}); !errors.Is(err, oauth.ErrConfig) {
			t.Errorf("%s: New: %v, want ErrConfig", name, err)
		}
	}
}
