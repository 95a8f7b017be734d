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
// state, then, when then is set, in state then with a
// session_info_update, and then asking for a sign-in with a URL
// elicitation when url is set, completed once the client has answered
// it); any other method is not expected (the embedded nil Agent panics).
type fakeAgent struct {
	acp.Agent
	conn  *acp.AgentSideConnection
	state string
	then  string
	url   string
}

func (a *fakeAgent) Initialize(context.Context, acp.InitializeRequest) (acp.InitializeResponse, error) {
	return acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersionNumber}, nil
}

func (a *fakeAgent) NewSession(context.Context, acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	go func() {
		// As acpgate would: the server's new state and the sign-in follow
		// session/new's answer.
		if a.then != "" {
			_ = a.conn.SessionUpdate(context.Background(), acp.SessionNotification{SessionId: "s1", Update: acp.SessionUpdate{
				SessionInfoUpdate: &acp.SessionSessionInfoUpdate{Meta: serversMeta(a.then)},
			}})
		}
		if a.url != "" {
			req := acp.NewUnstableCreateElicitationRequestUrl("sign-in-1", a.url)
			if _, err := a.conn.UnstableCreateElicitation(context.Background(), req); err == nil {
				// The sign-in completed (open need not wait out its bound).
				_ = a.conn.UnstableCompleteElicitation(context.Background(), acp.UnstableCompleteElicitationNotification{ElicitationId: "sign-in-1"})
			}
		}
	}()
	return acp.NewSessionResponse{SessionId: "s1", Meta: serversMeta(a.state)}, nil
}

// serversMeta is acpgate's _meta reporting the scenario's server in state.
func serversMeta(state string) map[string]any {
	return map[string]any{"acpgate": map[string]any{
		"mcpServers": []any{map[string]any{"name": serverName, "state": state, "tools": 0}},
	}}
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
	for _, a := range []*fakeAgent{
		{state: "needs-auth", url: listener.URL + "/callback"},
		{state: "connecting", then: "needs-auth", url: listener.URL + "/callback"},
	} {
		if err := openWith(t, ctx, a, p); err != nil {
			t.Fatal(err)
		}
		select {
		case <-hit:
		default:
			t.Fatalf("open returned before the sign-in URL was followed (state %s, then %q)", a.state, a.then)
		}
	}
}

// TestOpenNoSignInWait: open does not wait for a sign-in when the server
// is ready (at once, or after connecting) or failed, nor for a scenario
// without an interactive sign-in.
func TestOpenNoSignInWait(t *testing.T) {
	auth, _ := planFor("auth/metadata-default", "")
	machine, _ := planFor("auth/client-credentials-basic", `{"name":"auth/client-credentials-basic","client_id":"c","client_secret":"s"}`)
	for _, tc := range []struct {
		state, then string
		p           plan
	}{{"ready", "", auth}, {"connecting", "ready", auth}, {"connecting", "failed", auth}, {"failed", "", auth}, {"needs-auth", "", machine}} {
		// Nothing will be followed: a wait would end with this context.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := openWith(t, ctx, &fakeAgent{state: tc.state, then: tc.then}, tc.p); err != nil {
			t.Errorf("state %s, signIn %v: %v", tc.state, tc.p.signIn, err)
		}
		cancel()
	}
}
