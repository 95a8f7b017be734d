package mcpclient_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/testsupport/oauthtest"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/acpgate/acpgate/mcpclient/oauth"
)

// signInHook is an Options.SignIn that hands each prompt to the test and
// returns at once (the user's browser does the rest).
type signInHook struct{ prompts chan oauth.Prompt }

func newSignInHook() *signInHook { return &signInHook{prompts: make(chan oauth.Prompt, 8)} }

func (h *signInHook) signIn(_ context.Context, server string, p oauth.Prompt) error {
	if p.Server != server {
		return errors.New("prompt names another server")
	}
	h.prompts <- p
	return nil
}

// next returns the next prompt.
func (h *signInHook) next(t *testing.T) oauth.Prompt {
	t.Helper()
	select {
	case p := <-h.prompts:
		return p
	case <-time.After(30 * time.Second):
		t.Fatal("no sign-in prompt")
		return oauth.Prompt{}
	}
}

// follow opens p's URL like the user's browser.
func follow(t *testing.T, p oauth.Prompt) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := oauthtest.Follow(ctx, p.URL); err != nil {
		t.Fatalf("following the sign-in URL: %v", err)
	}
}

// authOpts are fastOpts with a token store and hook.
func authOpts(t *testing.T, hook *signInHook) (*mcpclient.Options, *eventLog) {
	opts, _ := fastOpts(t)
	opts.OAuthStore = oauth.NewStore(t.TempDir())
	if hook != nil {
		opts.SignIn = hook.signIn
	}
	events := newEventLog()
	opts.OnEvent = events.add
	return opts, events
}

func inState(name string, state mcpclient.State) func(mcpclient.Event) bool {
	return func(e mcpclient.Event) bool { return e.Server == name && e.Status.State == state }
}

// A server that answers 401 waits in needs-auth (the others are not held
// up); the sign-in prompt reaches the hook, the user follows it, and the
// server becomes ready with its tools.
func TestServerNeedsAuthThenSignsIn(t *testing.T) {
	t.Parallel()
	s := oauthtest.New(t, oauthtest.Config{})
	hook := newSignInHook()
	opts, events := authOpts(t, hook)
	m := start(t, opts, mcpclient.ServerSpec{Name: "remote", URL: s.MCPURL()}, stdio("local"))
	mustReady(t, m, "local")
	e := events.wait(t, "needs-auth", inState("remote", mcpclient.StateNeedsAuth))
	if !errors.Is(e.Status.Err, mcpclient.ErrNeedsAuth) || e.Status.Restarts != 0 {
		t.Fatalf("needs-auth status %+v", e.Status)
	}
	if _, err := m.CallTool(context.Background(), "remote", "echo", nil); !errors.Is(err, mcpclient.ErrNeedsAuth) {
		t.Fatalf("call while waiting for sign-in: %v", err)
	}
	p := hook.next(t)
	if p.Server != "remote" || p.URL == "" {
		t.Fatalf("prompt %+v", p)
	}
	events.wait(t, "prompt in status", func(e mcpclient.Event) bool { return e.Status.SignIn.ID == p.ID })
	follow(t, p)
	events.wait(t, "ready", inState("remote", mcpclient.StateReady))
	if !hasTool(m, "remote", "echo") {
		t.Fatal("the signed-in server's tools are missing")
	}
	if got := text(t, call(t, m, "remote", "echo", map[string]any{"text": "hi"})); got != "echo:hi" {
		t.Fatalf("echo %q", got)
	}
	if st, _ := m.Status("remote"); st.SignIn != (oauth.Prompt{}) {
		t.Fatalf("a finished sign-in's prompt stays in the status: %+v", st.SignIn)
	}
}

// Without a sign-in hook the server waits; Login with a hook-less Manager
// fails, sign-in off makes the 401 an ordinary failure.
func TestNeedsAuthWithoutHookAndDisabled(t *testing.T) {
	t.Parallel()
	s := oauthtest.New(t, oauthtest.Config{})
	opts, events := authOpts(t, nil)
	m := start(t, opts, mcpclient.ServerSpec{Name: "remote", URL: s.MCPURL()},
		mcpclient.ServerSpec{Name: "off", URL: s.MCPURL(), OAuth: &oauth.Config{Disabled: true}})
	events.wait(t, "needs-auth", inState("remote", mcpclient.StateNeedsAuth))
	if st, _ := m.Status("off"); st.State != mcpclient.StateFailed || errors.Is(st.Err, mcpclient.ErrNeedsAuth) {
		t.Fatalf("server with sign-in off: %+v", st)
	}
	if err := m.Login(context.Background(), "remote"); !errors.Is(err, oauth.ErrNoSignIn) {
		t.Fatalf("Login without a hook: %v", err)
	}
	if err := m.Login(context.Background(), "off"); !errors.Is(err, mcpclient.ErrNoOAuth) {
		t.Fatalf("Login of a server with sign-in off: %v", err)
	}
	if n := len(s.Requests("authorize")); n != 0 {
		t.Fatalf("%d authorizations without a hook", n)
	}
}

// Logout removes the token and sends the server back to needs-auth
// without a new prompt; Login signs in again.
func TestLoginLogout(t *testing.T) {
	t.Parallel()
	s := oauthtest.New(t, oauthtest.Config{})
	hook := newSignInHook()
	opts, events := authOpts(t, hook)
	m := start(t, opts, mcpclient.ServerSpec{Name: "remote", URL: s.MCPURL()})
	follow(t, hook.next(t))
	events.wait(t, "ready", inState("remote", mcpclient.StateReady))
	if files, _ := os.ReadDir(opts.OAuthStore.Dir()); len(files) != 1 {
		t.Fatalf("store holds %d files", len(files))
	}

	before := len(events.snapshot())
	if err := m.Logout(context.Background(), "remote"); err != nil {
		t.Fatal(err)
	}
	events.waitFrom(t, before, "needs-auth after logout", inState("remote", mcpclient.StateNeedsAuth))
	if files, _ := os.ReadDir(opts.OAuthStore.Dir()); len(files) != 0 {
		t.Fatalf("Logout left %d files", len(files))
	}
	select {
	case p := <-hook.prompts:
		t.Fatalf("a sign-in started on its own after Logout: %+v", p)
	default:
	}

	before = len(events.snapshot())
	done := make(chan error, 1)
	go func() { done <- m.Login(context.Background(), "remote") }()
	follow(t, hook.next(t))
	if err := <-done; err != nil {
		t.Fatalf("Login: %v", err)
	}
	events.waitFrom(t, before, "ready after login", inState("remote", mcpclient.StateReady))
	if err := m.Logout(context.Background(), "local-none"); !errors.Is(err, mcpclient.ErrUnknownServer) {
		t.Fatalf("Logout of an unknown server: %v", err)
	}
}

// A call that needs more scope waits for a step-up sign-in and is made
// again.
func TestCallStepUp(t *testing.T) {
	t.Parallel()
	s := oauthtest.New(t, oauthtest.Config{ChallengeScope: "mcp:basic", ToolScopes: map[string]string{"admin": "mcp:admin"}})
	hook := newSignInHook()
	opts, events := authOpts(t, hook)
	m := start(t, opts, mcpclient.ServerSpec{Name: "remote", URL: s.MCPURL()})
	follow(t, hook.next(t))
	events.wait(t, "ready", inState("remote", mcpclient.StateReady))
	go func() { follow(t, hook.next(t)) }()
	if got := text(t, call(t, m, "remote", "admin", nil)); got != "admin:" {
		t.Fatalf("admin %q", got)
	}
	if scope := s.Requests("authorize")[1].Form.Get("scope"); scope != "mcp:basic mcp:admin" {
		t.Fatalf("step-up scope %q", scope)
	}
	mustReady(t, m, "remote")
}

// Close while a sign-in waits for the user ends it: the hook's context
// ends, the loopback listener closes, no goroutine is left.
func TestCloseDuringSignIn(t *testing.T) {
	s := oauthtest.New(t, oauthtest.Config{})
	before := settledGoroutines()
	presented := make(chan oauth.Prompt, 1)
	hookDone := make(chan struct{})
	opts, events := authOpts(t, nil)
	opts.SignIn = func(ctx context.Context, _ string, p oauth.Prompt) error {
		presented <- p
		<-ctx.Done()
		close(hookDone)
		return ctx.Err()
	}
	m, err := mcpclient.New([]mcpclient.ServerSpec{{Name: "remote", URL: s.MCPURL()}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	p := <-presented
	events.wait(t, "needs-auth", inState("remote", mcpclient.StateNeedsAuth))
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-hookDone
	if err := oauthtest.Follow(context.Background(), p.URL); err == nil {
		t.Fatal("the sign-in still completes after Close")
	}
	http.DefaultClient.CloseIdleConnections()
	if after := settledGoroutines(); after > before+2 {
		t.Fatalf("Close during a sign-in left %d goroutines", after-before)
	}
}

// The legacy SSE transport signs in the same way.
func TestSSEServerSignsIn(t *testing.T) {
	t.Parallel()
	s := oauthtest.New(t, oauthtest.Config{RootMetadata: true})
	hook := newSignInHook()
	opts, events := authOpts(t, hook)
	m := start(t, opts, mcpclient.ServerSpec{Name: "remote", Transport: mcpclient.TransportSSE, URL: s.SSEURL()})
	events.wait(t, "needs-auth", inState("remote", mcpclient.StateNeedsAuth))
	follow(t, hook.next(t))
	events.wait(t, "ready", inState("remote", mcpclient.StateReady))
	if got := text(t, call(t, m, "remote", "echo", map[string]any{"text": "sse"})); got != "echo:sse" {
		t.Fatalf("echo %q", got)
	}
	if st, _ := m.Status("remote"); st.Transport != mcpclient.TransportSSE {
		t.Fatalf("transport %s", st.Transport)
	}
}

// A token endpoint that accepts the refresh and never answers: the calls
// that need the token fail at their own timeout with an error that names
// the token endpoint (the request never reached the server), the server
// stays ready, another server answers meanwhile, the refresh gives up at
// its bound with nothing left blocked, and once the endpoint answers
// again the first call refreshes and succeeds.
func TestHungTokenEndpoint(t *testing.T) {
	s := oauthtest.New(t, oauthtest.Config{RefreshTokens: true})
	hook := newSignInHook()
	opts, events := authOpts(t, hook)
	opts.OAuthTimeouts = oauth.Timeouts{Token: 2 * time.Second}
	remote := mcpclient.ServerSpec{Name: "remote", URL: s.MCPURL(), CallTimeout: 300 * time.Millisecond}
	m := start(t, opts, remote, stdio("local"))
	follow(t, hook.next(t))
	events.wait(t, "ready", inState("remote", mcpclient.StateReady))
	call(t, m, "remote", "echo", nil)

	s.Revoke()
	hung, release := s.HangToken()
	defer release()
	first := make(chan error, 1)
	go func() {
		_, err := m.CallTool(context.Background(), "remote", "echo", nil)
		first <- err
	}()
	<-hung
	oauthtest.MustSeeFlight(t, oauth.FlightFrames())
	if got := text(t, call(t, m, "local", "echo", map[string]any{"text": "meanwhile"})); got != "meanwhile" {
		t.Fatalf("the other server answered %q while the token endpoint hangs", got)
	}
	_, second := m.CallTool(context.Background(), "remote", "echo", nil)
	for _, err := range []error{<-first, second} {
		var ue *oauth.UnansweredError
		want := s.Issuer() + "/token"
		if !errors.Is(err, mcpclient.ErrCallTimeout) || !errors.Is(err, oauth.ErrNoAnswer) || !errors.As(err, &ue) || ue.Endpoint != want {
			t.Fatalf("call while the token endpoint hangs: %v", err)
		}
		if msg := err.Error(); !strings.Contains(msg, want) || strings.Contains(msg, "no answer or progress") {
			t.Fatalf("the error does not blame the token endpoint: %v", err)
		}
	}
	mustReady(t, m, "remote")

	testbin.WaitFor(t, "the refresh's end", func() bool { return s.Hanging() == 0 && oauthtest.FlightGoroutines(oauth.FlightFrames()) == 0 })
	if n := len(s.Requests("token")); n != 2 {
		t.Fatalf("%d token requests, want the sign-in's and one refresh for both calls", n)
	}
	release()
	// A call waits for its token no longer than its own 300 ms: on a
	// loaded machine the refresh may take longer, and the call fails as
	// one that timed out (never otherwise); a later one gets the token.
	testbin.WaitFor(t, "a call once the token endpoint answers", func() bool {
		res, err := m.CallTool(context.Background(), "remote", "echo", map[string]any{"text": "back"})
		if errors.Is(err, mcpclient.ErrCallTimeout) {
			return false
		}
		if err != nil {
			t.Fatalf("call once the token endpoint answers: %v", err)
		}
		if got := text(t, res); got != "echo:back" {
			t.Fatalf("echo %q", got)
		}
		return true
	})
	reqs := s.Requests("token")
	if len(reqs) < 3 {
		t.Fatalf("%d token requests, want a refresh once the endpoint answers", len(reqs))
	}
	for _, r := range reqs[2:] {
		if g := r.Form.Get("grant_type"); g != "refresh_token" {
			t.Fatalf("a token request with grant %q once the endpoint answers, want refreshes only", g)
		}
	}
}
