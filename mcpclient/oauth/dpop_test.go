package oauth_test

import (
	"strings"
	"testing"

	"github.com/acpgate/acpgate/internal/testsupport/oauthtest"
	"github.com/acpgate/acpgate/mcpclient/oauth"
)

// A server that challenges with the DPoP scheme gets DPoP (RFC 9449,
// SEP-1932) without any setting: a proof on each token request, the token
// bound to the key, "Authorization: DPoP" with a fresh proof (ath) on each
// request; with nonces asked for by both servers, each refusal is retried
// once with the nonce. A Client made later from the Store uses the stored
// token and key.
func TestDPoP(t *testing.T) {
	for _, nonce := range []bool{false, true} {
		s := oauthtest.New(t, oauthtest.Config{DPoP: true, DPoPNonce: nonce, RefreshTokens: true})
		store := oauth.NewStore(t.TempDir())
		c := newClient(t, s, oauth.Config{}, &oauth.Options{Store: store})
		mustNeedAuth(t, c, s)
		signIn(t, c)
		mustOK(t, c, s)
		mustOK(t, c, s)
		if f := s.ProofFailures(); len(f) != 0 {
			t.Fatalf("nonce=%v: refused proofs: %q", nonce, f)
		}
		tok := s.Requests("token")
		wantTok := 1
		if nonce {
			wantTok = 2 // refused for want of the nonce, then retried
		}
		if len(tok) != wantTok {
			t.Fatalf("nonce=%v: %d token requests, want %d", nonce, len(tok), wantTok)
		}
		for _, r := range tok {
			if r.Header.Get("DPoP") == "" {
				t.Fatalf("nonce=%v: a token request without a proof", nonce)
			}
		}
		var dpopCalls int
		for _, r := range s.Requests("mcp") {
			if strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
				t.Fatalf("nonce=%v: the token was sent as a Bearer token", nonce)
			}
			if strings.HasPrefix(r.Header.Get("Authorization"), "DPoP ") {
				dpopCalls++
			}
		}
		if want := 2; nonce && dpopCalls != want+1 || !nonce && dpopCalls != want {
			t.Fatalf("nonce=%v: %d requests with the DPoP scheme", nonce, dpopCalls)
		}
		// A restart: the stored token is bound to the stored key.
		c2 := newClient(t, s, oauth.Config{}, &oauth.Options{Store: store})
		mustOK(t, c2, s)
		if f := s.ProofFailures(); len(f) != 0 {
			t.Fatalf("nonce=%v: after a restart: refused proofs: %q", nonce, f)
		}
	}
}

// dpop: false keeps a server to Bearer tokens even when it challenges
// with DPoP (the server then refuses them).
func TestDPoPOff(t *testing.T) {
	s := oauthtest.New(t, oauthtest.Config{DPoP: true})
	off := false
	c := newClient(t, s, oauth.Config{DPoP: &off}, nil)
	mustNeedAuth(t, c, s)
	signIn(t, c)
	for _, r := range s.Requests("token") {
		if r.Header.Get("DPoP") != "" {
			t.Fatal("a proof was sent with dpop: false")
		}
	}
	mustNeedAuth(t, c, s)
}
