package main_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/internal/testsupport/oauthtest"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
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

// secretTo returns the token requests srv received at host that carry the
// client secret "s3cret" (basic or form).
func secretTo(srv *oauthtest.Server, host string) []oauthtest.Request {
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("cc:s3cret"))
	var out []oauthtest.Request
	for _, r := range srv.Requests("token") {
		if r.Host == host && (r.Header.Get("Authorization") == basic || r.Form.Get("client_secret") == "s3cret") {
			out = append(out, r)
		}
	}
	return out
}

// hostOf is u's host:port.
func hostOf(t *testing.T, u string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return p.Host
}

// TestIssuerMoveKeepsTheClientSecret (issue 34, item 8): a
// client-credentials server signs in at its authorization server; then its
// protected resource metadata names another one. The configured client's
// secret never reaches the second issuer's token endpoint — neither in the
// process that used the first, nor in a new process on the same state
// directory (the issuer is remembered with the stored client); the server
// waits for sign-in, and the status and the log name both issuers.
func TestIssuerMoveKeepsTheClientSecret(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t, oauthtest.Config{AuthMethods: []string{"client_secret_basic"}, Clients: map[string]string{"cc": "s3cret"}})
	first := srv.Issuer()
	state := t.TempDir()
	cfg := ccConfig(t, srv.MCPURL(), "4000")
	ups := testbin.NewUpdates()
	a := startAgentWith(t, state, agentSetup{session: []string{"notices"}, updates: ups}, "--config", cfg)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	prompt(t, a, resp.SessionId, "/call mcp__prot__echo {\"text\":\"hi\"}")
	if out := mustJSON(a.client.all()); !strings.Contains(out, "echo:hi") {
		t.Fatalf("call before the move: %s", out)
	}
	moved := srv.MoveAS()
	prompt(t, a, resp.SessionId, "/call mcp__prot__echo {\"text\":\"again\"}")
	if got := secretTo(srv, hostOf(t, moved)); len(got) > 0 {
		t.Fatalf("the second issuer's token endpoint received the client secret %d times", len(got))
	}
	meta := a.serversUntil(t, resp, "prot needs-auth", func(st map[string]string) bool { return st["prot"] == "needs-auth" })
	if !strings.Contains(meta, first) || !strings.Contains(meta, moved) {
		t.Errorf("the status does not name both issuers (%s, %s): %s", first, moved, meta)
	}
	ups.WaitFor(t, 0, string(resp.SessionId), "a notice naming both issuers", func(u testbin.Update) bool {
		var n acp.Notice
		return u.Kind == "notice" && json.Unmarshal(u.Raw, &n) == nil && n.Title == "MCP server prot needs sign-in" &&
			strings.Contains(n.Description, first) && strings.Contains(n.Description, moved)
	})
	testbin.WaitFor(t, "the log line naming both issuers", func() bool {
		log := a.stderr.String()
		return strings.Contains(log, "the configured client is not used at another authorization server") &&
			strings.Contains(log, first) && strings.Contains(log, moved)
	})

	b := startAgent(t, state, "--config", cfg)
	resp2, err := b.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	b.serversUntil(t, resp2, "prot needs-auth after a restart", func(st map[string]string) bool { return st["prot"] == "needs-auth" })
	if got := secretTo(srv, hostOf(t, moved)); len(got) > 0 {
		t.Fatalf("the second issuer's token endpoint received the client secret %d times", len(got))
	}
	t.Logf("token requests carrying the secret: %d to the first issuer, 0 to the second", len(secretTo(srv, hostOf(t, first))))
}

// TestTokenEndpointOnAnotherOrigin (issue 34, item 8): an authorization
// server whose token endpoint is on another origin than its issuer is
// used, and the log names both origins; with oauth.sameOriginTokenEndpoint
// it is refused: the client secret is never sent there, and the status
// names both origins.
func TestTokenEndpointOnAnotherOrigin(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t, oauthtest.Config{AuthMethods: []string{"client_secret_basic"}, Clients: map[string]string{"cc": "s3cret"}})
	elsewhere := httptest.NewServer(srv.Handler())
	t.Cleanup(elsewhere.Close)
	srv.Set(func(c *oauthtest.Config) { c.TokenEndpoint = elsewhere.URL + "/token" })

	a := startAgent(t, t.TempDir(), "--config", ccConfig(t, srv.MCPURL(), "4000"))
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	prompt(t, a, resp.SessionId, "/call mcp__prot__echo {\"text\":\"hi\"}")
	if out := mustJSON(a.client.all()); !strings.Contains(out, "echo:hi") {
		t.Fatalf("call with the token endpoint on another origin: %s", out)
	}
	testbin.WaitFor(t, "the log line naming both origins", func() bool {
		log := a.stderr.String()
		return strings.Contains(log, "token endpoint on another origin than its issuer") &&
			strings.Contains(log, srv.Issuer()) && strings.Contains(log, elsewhere.URL)
	})

	strict := writeConfig(t, `{"agents": {"defaults": {"mcp": {"servers": {
  "prot": {"transport": "http", "url": "`+srv.MCPURL()+`", "toolTimeout": 4000,
           "oauth": {"grantType": "client_credentials", "clientId": "cc", "clientSecret": "s3cret", "sameOriginTokenEndpoint": true}}}}}}}`)
	before := len(secretTo(srv, hostOf(t, elsewhere.URL)))
	b := startAgent(t, t.TempDir(), "--config", strict)
	resp2, err := b.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	meta := b.serversUntil(t, resp2, "prot refused", func(st map[string]string) bool { return st["prot"] == "needs-auth" || st["prot"] == "failed" })
	if !strings.Contains(meta, srv.Issuer()) || !strings.Contains(meta, elsewhere.URL) {
		t.Errorf("the status does not name both origins: %s", meta)
	}
	if got := len(secretTo(srv, hostOf(t, elsewhere.URL))); got != before {
		t.Fatalf("the refused token endpoint received the client secret (%d requests)", got-before)
	}
}
