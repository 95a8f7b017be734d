package acp_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/internal/testsupport/oauthtest"
	"github.com/acpgate/acpgate/mcpclient/oauth"
)

// elicitingClient is a fakeClient that also answers URL elicitations by
// calling onURL, and records the completions.
type elicitingClient struct {
	*fakeClient
	onURL     func(ctx context.Context, e *acpsdk.UnstableCreateElicitationUrl) acpsdk.UnstableCreateElicitationResponse
	completed chan acpsdk.UnstableElicitationId
}

func (c *elicitingClient) UnstableCreateElicitation(ctx context.Context, p acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
	if p.Url == nil {
		return acpsdk.UnstableCreateElicitationResponse{}, errNotSupported
	}
	return c.onURL(ctx, p.Url), nil
}

func (c *elicitingClient) UnstableCompleteElicitation(_ context.Context, p acpsdk.UnstableCompleteElicitationNotification) error {
	c.completed <- p.ElicitationId
	return nil
}

// httpServer is an mcpServers entry for a streamable HTTP server.
func httpServer(name, url string) acpsdk.McpServer {
	return acpsdk.McpServer{Http: &acpsdk.McpServerHttpInline{Type: "http", Name: name, Url: url, Headers: []acpsdk.HttpHeader{}}}
}

// urlCaps are client capabilities with URL-mode elicitation.
var urlCaps = acpsdk.ClientCapabilities{Elicitation: &acpsdk.ElicitationCapabilities{Url: &acpsdk.ElicitationUrlCapabilities{}}}

// TestSignInThroughURLElicitation: a server answering 401 is signed in to
// through a URL elicitation the client follows; its tools join the
// session, the elicitation is completed, a second session reuses the
// stored token without asking, /mcp logout removes it and the ACP logout
// method clears the store.
func TestSignInThroughURLElicitation(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Config{})
	asked := make(chan string, 4)
	fc := &elicitingClient{fakeClient: &fakeClient{}, completed: make(chan acpsdk.UnstableElicitationId, 4)}
	fc.onURL = func(ctx context.Context, e *acpsdk.UnstableCreateElicitationUrl) acpsdk.UnstableCreateElicitationResponse {
		asked <- string(e.ElicitationId)
		go func() {
			if err := oauthtest.Follow(context.Background(), e.Url); err != nil {
				t.Errorf("following the sign-in URL: %v", err)
			}
		}()
		return acpsdk.UnstableCreateElicitationResponse{Accept: &acpsdk.UnstableCreateElicitationAccept{Action: "accept"}}
	}
	store := oauth.NewStore(t.TempDir())
	opts := acp.Options{}
	opts.MCP.OAuthStore = store
	h := newHarnessWith(t, opts, fc.fakeClient, fc)
	if _, err := h.conn.Initialize(h.ctx(), acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber, ClientCapabilities: urlCaps}); err != nil {
		t.Fatal(err)
	}
	s1 := h.newSession(httpServer("prot", srv.MCPURL()))
	id := recv(t, asked)
	if got := recv(t, fc.completed); string(got) != id {
		t.Fatalf("completed elicitation %q, want %q", got, id)
	}
	if _, ups := h.prompt(s1.SessionId, "/tools"); !strings.Contains(agentText(ups), "mcp__prot__echo") {
		t.Fatalf("tools after sign-in: %s", agentText(ups))
	}
	files, _ := os.ReadDir(store.Dir())
	if len(files) == 0 {
		t.Fatal("no token stored")
	}
	if info, _ := os.Stat(store.Dir() + "/" + files[0].Name()); info.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", info.Mode().Perm())
	}

	s2 := h.newSession(httpServer("prot", srv.MCPURL()))
	if _, ups := h.prompt(s2.SessionId, "/tools"); !strings.Contains(agentText(ups), "mcp__prot__echo") {
		t.Fatalf("second session's tools: %s", agentText(ups))
	}
	select {
	case id := <-asked:
		t.Fatalf("the second session asked for a sign-in again (%s)", id)
	default:
	}

	if _, ups := h.prompt(s2.SessionId, "/mcp logout prot"); !strings.Contains(agentText(ups), "Signed out") {
		t.Fatalf("/mcp logout: %s", agentText(ups))
	}
	if files, _ := os.ReadDir(store.Dir()); len(files) != 0 {
		t.Fatalf("tokens left after logout: %v", files)
	}
	// Sign in again (the first session's server), then log out of all.
	if _, ups := h.prompt(s1.SessionId, "/mcp login prot"); !strings.Contains(agentText(ups), "Signed in") {
		t.Fatalf("/mcp login: %s", agentText(ups))
	}
	recv(t, asked)
	if _, err := h.conn.UnstableLogout(h.ctx(), acpsdk.UnstableLogoutRequest{}); err != nil {
		t.Fatalf("logout: %v", err)
	}
	if files, _ := os.ReadDir(store.Dir()); len(files) != 0 {
		t.Fatalf("tokens left after the ACP logout: %v", files)
	}
}

// recv receives from ch, bounded by the hang guard.
func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(hangGuard):
		t.Fatal("nothing received")
	}
	panic("unreachable")
}

// linkRe finds the sign-in link in a card.
var linkRe = regexp.MustCompile(`\]\((http://127\.0\.0\.1[^)]+)\)`)

// TestSignInCardWithoutElicitation: a client without elicitation gets a
// card with the sign-in link; following it signs in, the card completes
// and the tools join. A declined sign-in (the authorization server says
// access_denied) fails the card, and /mcp login repeats it.
func TestSignInCardWithoutElicitation(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Config{})
	opts := acp.Options{}
	opts.MCP.OAuthStore = oauth.NewStore(t.TempDir())
	h := newHarness(t, opts, nil)
	s := h.newSession(httpServer("prot", srv.MCPURL()))
	card := h.fc.rec.waitFor(t, 0, s.SessionId, "sign-in card", func(u acpsdk.SessionUpdate) bool {
		return u.ToolCall != nil && strings.HasPrefix(string(u.ToolCall.ToolCallId), "mcp-signin-prot-")
	})
	var text string
	for _, c := range card.ToolCall.Content {
		if c.Content != nil && c.Content.Content.Text != nil {
			text += c.Content.Content.Text.Text
		}
	}
	link := linkRe.FindStringSubmatch(text)
	if link == nil {
		t.Fatalf("no link in the card: %s", dump([]acpsdk.SessionUpdate{card}))
	}
	if _, ups := h.prompt(s.SessionId, "/mcp"); !strings.Contains(agentText(ups), "needs-auth") || !strings.Contains(agentText(ups), "sign in") {
		t.Errorf("/mcp while waiting: %s", agentText(ups))
	}
	if err := oauthtest.Follow(h.ctx(), link[1]); err != nil {
		t.Fatal(err)
	}
	h.fc.rec.waitFor(t, 0, s.SessionId, "completed sign-in card", func(u acpsdk.SessionUpdate) bool {
		return u.ToolCallUpdate != nil && u.ToolCallUpdate.ToolCallId == card.ToolCall.ToolCallId &&
			u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == acpsdk.ToolCallStatusCompleted
	})
	if _, ups := h.prompt(s.SessionId, "/tools"); !strings.Contains(agentText(ups), "mcp__prot__echo") {
		t.Fatalf("tools after sign-in: %s", agentText(ups))
	}

	// The user declines: the card fails, saying so; /mcp login repeats
	// the sign-in with a new card.
	srv.Set(func(c *oauthtest.Config) { c.Deny = true })
	h.prompt(s.SessionId, "/mcp logout prot")
	from := h.fc.rec.len()
	done := make(chan string, 1)
	go func() {
		_, ups := h.prompt(s.SessionId, "/mcp login prot")
		done <- agentText(ups)
	}()
	card = h.fc.rec.waitFor(t, from, s.SessionId, "second sign-in card", func(u acpsdk.SessionUpdate) bool {
		return u.ToolCall != nil && strings.HasPrefix(string(u.ToolCall.ToolCallId), "mcp-signin-prot-")
	})
	text = ""
	for _, c := range card.ToolCall.Content {
		if c.Content != nil && c.Content.Content.Text != nil {
			text += c.Content.Content.Text.Text
		}
	}
	if link = linkRe.FindStringSubmatch(text); link == nil {
		t.Fatalf("no link in the second card: %s", text)
	}
	_ = oauthtest.Follow(h.ctx(), link[1]) // the redirect carries error=access_denied
	if out := recv(t, done); !strings.Contains(out, "failed") {
		t.Errorf("/mcp login after a denial: %s", out)
	}
	h.fc.rec.waitFor(t, from, s.SessionId, "failed sign-in card", func(u acpsdk.SessionUpdate) bool {
		return u.ToolCallUpdate != nil && u.ToolCallUpdate.ToolCallId == card.ToolCall.ToolCallId &&
			u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == acpsdk.ToolCallStatusFailed
	})
}
