package mcpclient_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/testsupport/oauthtest"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/acpgate/acpgate/mcpclient/oauth"
)

// Two Managers (two sessions) of one token store, a client-credentials
// server, each with a token of its own (the second's the newer in the
// store); both revoked, the token endpoint hung. The first session's call,
// whose stored replacement is refused too, fails at its own deadline
// naming the token endpoint, and its server stays ready: it is not sent
// to wait for a sign-in that an unanswering authorization server holds.
func TestMachineCallStopsAtItsDeadline(t *testing.T) {
	s := oauthtest.New(t, oauthtest.Config{AuthMethods: []string{oauth.AuthClientSecretBasic}, Clients: map[string]string{"cc": "s3cret"}})
	store := oauth.NewStore(t.TempDir())
	spec := mcpclient.ServerSpec{Name: "remote", URL: s.MCPURL(), CallTimeout: 300 * time.Millisecond,
		OAuth: &oauth.Config{GrantType: oauth.GrantClientCredentials, ClientID: "cc", ClientSecret: "s3cret"}}
	open := func() *mcpclient.Manager {
		opts, events := authOpts(t, newSignInHook())
		opts.OAuthStore = store
		m := start(t, opts, spec)
		events.wait(t, "ready", inState("remote", mcpclient.StateReady))
		call(t, m, "remote", "echo", nil)
		return m
	}
	m1 := open()
	s.Revoke()
	open()
	s.Revoke()
	_, release := s.HangToken()
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err := m1.CallTool(ctx, "remote", "echo", nil)
	took := time.Since(start)
	t.Logf("the call ended after %s (its timeout 300 ms)", took)
	var ue *oauth.UnansweredError
	want := s.Issuer() + "/token"
	if !errors.Is(err, mcpclient.ErrCallTimeout) || !errors.Is(err, oauth.ErrNoAnswer) || !errors.As(err, &ue) || ue.Endpoint != want {
		t.Fatalf("call while the token endpoint hangs: %v", err)
	}
	if errors.Is(err, mcpclient.ErrNeedsAuth) || strings.Contains(err.Error(), "refused a fresh token") {
		t.Fatalf("the error blames the MCP server: %v", err)
	}
	if took > 5*time.Second {
		t.Fatalf("the call took %s, past its deadline", took)
	}
	mustReady(t, m1, "remote")
}
