package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// fakeAgent answers initialize and session/new (reporting the server in
// state, and then asking for a sign-in with a URL elicitation when url is
// set); any other method is not expected (the embedded nil Agent panics).
type fakeAgent struct {
	acp.Agent
	conn  *acp.AgentSideConnection
	state string
	url   string
}

func (a *fakeAgent) Initialize(context.Context, acp.InitializeRequest) (acp.InitializeResponse, error) {
	return acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersionNumber}, nil
}

func (a *fakeAgent) NewSession(context.Context, acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	if a.url != "" {
		// As acpgate would: the sign-in starts once the server is known to
		// need it, after session/new has answered.
		go func() {
			req := acp.NewUnstableCreateElicitationRequestUrl("sign-in-1", a.url)
			_, _ = a.conn.UnstableCreateElicitation(context.Background(), req)
		}()
	}
	return acp.NewSessionResponse{SessionId: "s1", Meta: map[string]any{"acpgate": map[string]any{
		"mcpServers": []any{map[string]any{"name": serverName, "state": a.state, "tools": 0}},
	}}}, nil
}

// openWith runs open against a fakeAgent and returns open's error.
func openWith(t *testing.T, ctx context.Context, a *fakeAgent, p plan) error {
	t.Helper()
	c2aR, c2aW := io.Pipe()
	a2cR, a2cW := io.Pipe()
	log := slog.New(slog.DiscardHandler)
	a.conn = acp.NewAgentSideConnection(a, a2cW, c2aR)
	a.conn.SetLogger(log)
	c := newClient(log, 10*time.Second)
	conn := acp.NewClientSideConnection(c, c2aW, a2cR)
	conn.SetLogger(log)
	defer func() {
		c2aW.Close()
		a2cW.Close()
		<-conn.Done()
		c.closeFollows()
	}()
	_, err := open(ctx, conn, c, options{serverURL: "http://localhost:1/mcp"}, p, t.TempDir(), log)
	return err
}

// TestOpenWaitsForSignIn: when session/new reports the server waiting for
// a sign-in, open returns only once the URL elicitation that follows has
// been followed to the redirect listener.
func TestOpenWaitsForSignIn(t *testing.T) {
	hit := make(chan struct{}, 1)
	listener := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hit <- struct{}{}
	}))
	defer listener.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, _ := planFor("auth/metadata-default", "")
	if err := openWith(t, ctx, &fakeAgent{state: "needs-auth", url: listener.URL + "/callback"}, p); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hit:
	default:
		t.Fatal("open returned before the sign-in URL was followed")
	}
}

// TestOpenNoSignInWait: open does not wait for a sign-in when the server
// is ready, connecting (a /call waits for it) or failed, nor for a
// scenario without an interactive sign-in.
func TestOpenNoSignInWait(t *testing.T) {
	auth, _ := planFor("auth/metadata-default", "")
	machine, _ := planFor("auth/client-credentials-basic", `{"name":"auth/client-credentials-basic","client_id":"c","client_secret":"s"}`)
	for _, tc := range []struct {
		state string
		p     plan
	}{{"ready", auth}, {"connecting", auth}, {"failed", auth}, {"needs-auth", machine}} {
		// Nothing will be followed: a wait would end with this context.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := openWith(t, ctx, &fakeAgent{state: tc.state}, tc.p); err != nil {
			t.Errorf("state %s, signIn %v: %v", tc.state, tc.p.signIn, err)
		}
		cancel()
	}
}
