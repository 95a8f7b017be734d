package main_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/mcpclient/oauth/oauthtest"
)

// ccConfig is an acpgate configuration with one server, prot at url, that
// signs in with client credentials (client "cc", secret "s3cret") for
// every session, with the tool timeout given (ms).
func ccConfig(t *testing.T, url, toolTimeout string) string {
	t.Helper()
	return writeConfig(t, `{"agents": {"defaults": {"mcp": {"servers": {
  "prot": {"transport": "http", "url": "`+url+`", "toolTimeout": `+toolTimeout+`,
           "oauth": {"grantType": "client_credentials", "clientId": "cc", "clientSecret": "s3cret"}}}},
  "tools": {"autoApprove": ["mcp__prot__echo"]}}}}`)
}

// sessionOut is the JSON of the notifications of sid in ns.
func sessionOut(ns []acpsdk.SessionNotification, sid acpsdk.SessionId) string {
	var mine []acpsdk.SessionNotification
	for _, n := range ns {
		if n.SessionId == sid {
			mine = append(mine, n)
		}
	}
	return mustJSON(mine)
}

// TestHungTokenEndpointClientCredentialsTwoSessions (issue 34, item 2):
// one client-credentials server in two sessions, tool timeout 4 s, each
// session with a token of its own (the second's is the newer in the
// store); the tokens are revoked and the token endpoint accepts and never answers; one
// call in each session, the second once the first one's token request
// hangs (the calls were 0.5 s apart). Each call fails at its own deadline
// (well under the 30 s an unbounded sign-in would wait) naming the token
// endpoint; neither blames the MCP server ("refused a fresh token") nor
// sends it to needs-auth.
func TestHungTokenEndpointClientCredentialsTwoSessions(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t, oauthtest.Config{AuthMethods: []string{"client_secret_basic"}, Clients: map[string]string{"cc": "s3cret"}})
	a := startAgent(t, t.TempDir(), "--config", ccConfig(t, srv.MCPURL(), "4000"))
	var sids []acpsdk.SessionId
	for i := range 2 {
		if i == 1 {
			// The first session's token is revoked before the second
			// starts: the second gets a token of its own, which the store
			// holds as newer than the first session's.
			srv.Revoke()
		}
		resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
		if err != nil {
			t.Fatal(err)
		}
		prompt(t, a, resp.SessionId, "/call mcp__prot__echo {\"text\":\"hi\"}")
		if out := sessionOut(a.client.all(), resp.SessionId); !strings.Contains(out, "echo:hi") {
			t.Fatalf("call before the revocation: %s", out)
		}
		sids = append(sids, resp.SessionId)
	}
	srv.Revoke()
	hung, release := srv.HangToken()
	defer release()
	before := len(a.client.all())
	var wg sync.WaitGroup
	took := make([]time.Duration, 2)
	for i, sid := range sids {
		if i == 1 {
			<-hung // the second call starts once the first one's token request hangs
		}
		wg.Go(func() {
			start := time.Now()
			prompt(t, a, sid, "/call mcp__prot__echo {\"text\":\"again\"}")
			took[i] = time.Since(start)
		})
	}
	wg.Wait()
	t.Logf("the calls ended after %s and %s (tool timeout 4 s)", took[0], took[1])
	all := a.client.all()[before:]
	for i, sid := range sids {
		out := sessionOut(all, sid)
		if took[i] > 8*time.Second {
			t.Errorf("session %d: the call took %s, past its 4 s deadline", i, took[i])
		}
		if !strings.Contains(out, srv.Issuer()+"/token") || strings.Contains(out, "refused a fresh token") {
			t.Errorf("session %d: the call's result does not name the token endpoint:\n%s", i, out)
		}
		if strings.Contains(out, "needs-auth") {
			t.Errorf("session %d: the server went needs-auth:\n%s", i, out)
		}
	}
}
