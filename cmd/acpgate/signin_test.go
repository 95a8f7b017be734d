package main_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/oauthtest"
)

// signInLink finds the sign-in link of a card.
var signInLink = regexp.MustCompile(`\]\((http://127\.0\.0\.1[^)]+)\)`)

// TestSignInThroughTheBinary: a client without elicitation gets a card
// with the sign-in link; following it (as a browser would) brings the
// server's tools; the token is stored under the state dir (0600) and a
// new acpgate process on the same state dir uses it without asking;
// /mcp logout removes it.
func TestSignInThroughTheBinary(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t, oauthtest.Config{})
	state := t.TempDir()
	server := acpsdk.McpServer{Http: &acpsdk.McpServerHttpInline{Type: "http", Name: "prot", Url: srv.MCPURL(), Headers: []acpsdk.HttpHeader{}}}
	a := startAgent(t, state)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{server}})
	if err != nil {
		t.Fatal(err)
	}
	followSignInCard(t, a, "prot")
	prompt(t, a, resp.SessionId, "/call mcp__prot__echo {\"text\":\"hi\"}")
	if out := agentText(a.client.all()); strings.Contains(out, "Cannot call") {
		t.Fatalf("call after sign-in: %s", out)
	}
	files, _ := filepath.Glob(filepath.Join(state, "oauth", "*.json"))
	if len(files) != 1 {
		t.Fatalf("token files %v, want one", files)
	}
	if info, err := os.Stat(files[0]); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode: %v %v", info.Mode(), err)
	}

	b := startAgent(t, state)
	resp2, err := b.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{server}})
	if err != nil {
		t.Fatal(err)
	}
	prompt(t, b, resp2.SessionId, "/tools")
	if out := agentText(b.client.all()); !strings.Contains(out, "mcp__prot__echo") {
		t.Fatalf("a new process did not reuse the token: %s", out)
	}
	for _, n := range b.client.all() {
		if n.Update.ToolCall != nil && strings.HasPrefix(string(n.Update.ToolCall.ToolCallId), "mcp-signin-") {
			t.Fatal("the second process asked for a sign-in")
		}
	}
	prompt(t, b, resp2.SessionId, "/mcp logout prot")
	if files, _ := filepath.Glob(filepath.Join(state, "oauth", "*.json")); len(files) != 0 {
		t.Fatalf("token files after logout: %v", files)
	}
}

// followSignInCard waits for the sign-in card of server, follows its link
// as a browser would, and waits for the card to complete.
func followSignInCard(t *testing.T, a *agent, server string) {
	t.Helper()
	card := a.client.waitUpdate(t, "sign-in card", func(u acpsdk.SessionUpdate) bool {
		return u.ToolCall != nil && strings.HasPrefix(string(u.ToolCall.ToolCallId), "mcp-signin-"+server+"-")
	})
	var text string
	for _, c := range card.ToolCall.Content {
		if c.Content != nil && c.Content.Content.Text != nil {
			text += c.Content.Content.Text.Text
		}
	}
	link := signInLink.FindStringSubmatch(text)
	if link == nil {
		t.Fatalf("no link in the card: %q", text)
	}
	if err := oauthtest.Follow(ctx30(t), link[1]); err != nil {
		t.Fatal(err)
	}
	a.client.waitUpdate(t, "completed sign-in card", func(u acpsdk.SessionUpdate) bool {
		return u.ToolCallUpdate != nil && u.ToolCallUpdate.ToolCallId == card.ToolCall.ToolCallId &&
			u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == acpsdk.ToolCallStatusCompleted
	})
}

// TestHungTokenEndpointThroughTheBinary: when the token endpoint accepts
// the refresh and never answers, /call fails at the server's tool timeout
// with a result that names the token endpoint, not the MCP server; the
// agent still exits promptly (the refresh is ended, not waited for).
func TestHungTokenEndpointThroughTheBinary(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t, oauthtest.Config{RefreshTokens: true})
	cfg := writeConfig(t, `{"agents": {"defaults": {"mcp": {"servers": {
  "prot": {"transport": "http", "url": "`+srv.MCPURL()+`", "toolTimeout": 500}}},
  "tools": {"autoApprove": ["mcp__prot__echo"]}}}}`)
	a := startAgent(t, t.TempDir(), "--config", cfg)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	followSignInCard(t, a, "prot")
	prompt(t, a, resp.SessionId, "/call mcp__prot__echo {\"text\":\"hi\"}")
	if out := mustJSON(a.client.all()); !strings.Contains(out, "echo:hi") {
		t.Fatalf("call after sign-in: %s", out)
	}

	srv.Revoke()
	_, release := srv.HangToken()
	defer release()
	before := len(a.client.all())
	prompt(t, a, resp.SessionId, "/call mcp__prot__echo {\"text\":\"again\"}")
	out := mustJSON(a.client.all()[before:]) // the card and the result
	if !strings.Contains(out, srv.Issuer()+"/token") || strings.Contains(out, "no answer or progress") {
		t.Fatalf("the call's result does not name the token endpoint:\n%s", out)
	}
}

// TestHungTokenEndpointTwoSessions: the same server in two sessions (two
// clients of one token store), its token endpoint accepting refreshes and
// never answering. Each session's /call fails at its own deadline naming
// the token endpoint; neither blames the MCP server, and neither server
// leaves ready because its authorization server is slow.
func TestHungTokenEndpointTwoSessions(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t, oauthtest.Config{RefreshTokens: true})
	cfg := writeConfig(t, `{"agents": {"defaults": {"mcp": {"servers": {
  "prot": {"transport": "http", "url": "`+srv.MCPURL()+`", "toolTimeout": 1000}}},
  "tools": {"autoApprove": ["mcp__prot__echo"]}}}}`)
	a := startAgent(t, t.TempDir(), "--config", cfg)
	open := func() acpsdk.SessionId {
		resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.SessionId
	}
	s1 := open()
	followSignInCard(t, a, "prot")
	s2 := open() // signed in from the stored token
	for _, sid := range []acpsdk.SessionId{s1, s2} {
		prompt(t, a, sid, "/call mcp__prot__echo {\"text\":\"hi\"}")
	}
	srv.Revoke()
	_, release := srv.HangToken()
	defer release()
	before := len(a.client.all())
	var wg sync.WaitGroup
	took := make([]time.Duration, 2)
	for i, sid := range []acpsdk.SessionId{s1, s2} {
		wg.Go(func() {
			start := time.Now()
			prompt(t, a, sid, "/call mcp__prot__echo {\"text\":\"again\"}")
			took[i] = time.Since(start)
		})
	}
	wg.Wait()
	t.Logf("the calls ended after %s and %s (call timeout 1 s)", took[0], took[1]) // docs/benchmarks.md
	all := a.client.all()[before:]
	for _, sid := range []acpsdk.SessionId{s1, s2} {
		var mine []acpsdk.SessionNotification
		for _, n := range all {
			if n.SessionId == sid {
				mine = append(mine, n)
			}
		}
		out := mustJSON(mine)
		if !strings.Contains(out, srv.Issuer()+"/token") || strings.Contains(out, "refused a fresh token") {
			t.Errorf("session %s: the call's result does not name the token endpoint:\n%s", sid, out)
		}
		if strings.Contains(out, "needs-auth") {
			t.Errorf("session %s: the server went needs-auth:\n%s", sid, out)
		}
	}
}
