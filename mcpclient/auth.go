package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/acpgate/acpgate/mcpclient/oauth"
)

// maxAutoSignIns bounds the sign-ins the Manager starts on its own while a
// server waits for sign-in: the first, and step-ups the server asks for
// right after it (403 insufficient_scope).
const maxAutoSignIns = 3

// errSuperseded ends a sign-in that Login replaced with a new one.
var errSuperseded = errors.New("sign-in replaced by a newer one")

// errLoggedOut is the reason of a server's needs-auth state after Logout.
var errLoggedOut = errors.New("signed out")

// auth is the OAuth side of one http or sse server: its oauth.Client and
// its sign-ins, one at a time. Safe for concurrent use.
type auth struct {
	env   roleEnv
	owner authOwner // the server: sign-ins' life, the prompt in its status

	mu      sync.Mutex
	client  *oauth.Client
	key     any           // what client was made for: URL and config
	cur     *signInRun    // the sign-in under way; nil if none
	started chan struct{} // closed and replaced when a sign-in starts
	autos   int           // sign-ins started on their own since the server was last ready
	noAuto  bool          // after Logout: no sign-in without Login
	closed  bool          // close was called: no new client
}

// signInRun is one sign-in; err is set before done closes.
type signInRun struct {
	done   chan struct{}
	err    error
	cancel context.CancelCauseFunc
}

func newAuth(env roleEnv, owner authOwner) *auth {
	return &auth{env: env, owner: owner, started: make(chan struct{})}
}

// oauthClient returns the oauth.Client of spec (as prepared for this
// connection), made on first use and again when the URL or the
// configuration changed; nil when sign-in is off for the server.
func (a *auth) oauthClient(spec *ServerSpec) (*oauth.Client, error) {
	cfg := oauth.Config{}
	if spec.OAuth != nil {
		cfg = *spec.OAuth
	}
	if cfg.Disabled {
		return nil, nil
	}
	key := struct {
		url string
		cfg oauth.Config
	}{spec.URL, cfg}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, fmt.Errorf("server %q: %w", spec.Name, ErrClosed)
	}
	if a.client != nil && reflect.DeepEqual(a.key, key) {
		return a.client, nil
	}
	o := a.env.opts
	allowInsecure := spec.AllowInsecureHTTP
	c, err := oauth.New(spec.URL, cfg, oauth.Options{
		Name:            spec.Name,
		Store:           o.OAuthStore,
		Secrets:         o.OAuthSecret,
		RunCommand:      o.RunCommand,
		RedirectTimeout: o.SignInTimeout,
		Timeouts:        o.OAuthTimeouts,
		Logger:          a.env.logger,
		CheckURL:        func(u string) error { return CheckURL(u, allowInsecure) },
		ClientName:      o.ClientName,
	})
	if err != nil {
		return nil, fmt.Errorf("server %q: %w", spec.Name, err)
	}
	if a.client != nil {
		// Quick: it cancels the old client's token flight and waits for
		// its goroutine to see it.
		_ = a.client.Close()
	}
	a.client, a.key = c, key
	return c, nil
}

// close closes the oauth.Client, ending its token flight, if any; no
// other is made after it. Idempotent.
func (a *auth) close() {
	a.mu.Lock()
	c := a.client
	a.client, a.key, a.closed = nil, nil, true
	a.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}

// current returns the oauth.Client made last (nil if none).
func (a *auth) current() *oauth.Client {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.client
}

// roundTripper is the base transport of an http or sse server's
// connection l: it authorizes requests with spec's oauth.Client, and a
// request outside a call that needs a sign-in ends the link with that
// error (so the server waits for sign-in).
func (a *auth) roundTripper(spec *ServerSpec, l *httpLink) (http.RoundTripper, error) {
	c, err := a.oauthClient(spec)
	if err != nil || c == nil {
		return http.DefaultTransport, err
	}
	return authWatch{rt: c.RoundTripper(http.DefaultTransport), link: l}, nil
}

// authWatch ends its link when a request outside a call needs a sign-in.
type authWatch struct {
	rt   http.RoundTripper
	link *httpLink
}

// RoundTrip implements http.RoundTripper.
func (w authWatch) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.rt.RoundTrip(req)
	if errors.Is(err, ErrNeedsAuth) && req.Context().Value(callKey{}) == nil {
		w.link.lost(err)
	}
	return resp, err
}

// signInMode says who starts a sign-in.
type signInMode int

const (
	signInAuto  signInMode = iota // the Manager, for a server that needs one
	signInCall                    // a call that needs one
	signInLogin                   // Login: replaces one under way
)

// signIn starts a sign-in unless one is under way (Login replaces it) and
// returns it. The sign-in runs under the server's life (the Manager's
// before Start), so Close, or a Reconfigure that stops the server, ends it;
// Close waits for it.
func (a *auth) signIn(mode signInMode) (*signInRun, error) {
	c := a.current()
	if c == nil {
		return nil, fmt.Errorf("%w: %q", ErrNoOAuth, a.env.spec.Name)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cur != nil && mode != signInLogin {
		return a.cur, nil
	}
	if a.cur != nil {
		a.cur.cancel(errSuperseded)
	}
	switch mode {
	case signInAuto:
		a.autos++
	case signInLogin:
		a.noAuto = false
	}
	life, release, err := a.owner.signInLife()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(life)
	run := &signInRun{done: make(chan struct{}), cancel: cancel}
	a.cur = run
	close(a.started)
	a.started = make(chan struct{})
	go a.run(ctx, c, run, release)
	return run, nil
}

// run performs one sign-in, and calls release when it is over.
func (a *auth) run(ctx context.Context, c *oauth.Client, run *signInRun, release func()) {
	defer release()
	var present oauth.PresentFunc
	var shown atomic.Pointer[string] // the last prompt this run presented
	if hook := a.env.opts.SignIn; hook != nil {
		present = func(pctx context.Context, p oauth.Prompt) error {
			shown.Store(&p.ID)
			a.owner.setPrompt(p)
			return hook(pctx, a.env.spec.Name, p)
		}
	}
	err := c.SignIn(ctx, present)
	if cause := context.Cause(ctx); err != nil && errors.Is(cause, errSuperseded) {
		err = fmt.Errorf("%w: %w", errSuperseded, err)
	}
	run.cancel(nil)
	promptID := ""
	if id := shown.Load(); id != nil {
		promptID = *id
	}
	a.owner.endPrompt(promptID, err)
	if err != nil {
		a.env.logger.Warn("sign-in failed", "err", err)
	} else {
		a.env.logger.Info("signed in")
	}
	a.mu.Lock()
	run.err = err
	if a.cur == run {
		a.cur = nil
	}
	a.mu.Unlock()
	close(run.done)
}

// wait waits for run, following the sign-ins that replace it, or for ctx.
func (a *auth) wait(ctx context.Context, run *signInRun) error {
	for {
		select {
		case <-run.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if !errors.Is(run.err, errSuperseded) {
			return run.err
		}
		a.mu.Lock()
		next := a.cur
		a.mu.Unlock()
		if next == nil {
			return run.err
		}
		run = next
	}
}

// mayAuto reports whether the Manager may start a sign-in on its own for
// a server that needs one because of err.
func (a *auth) mayAuto(err error) bool {
	if a.env.opts.SignIn == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.noAuto || a.autos >= maxAutoSignIns {
		return false
	}
	var na *oauth.NeedsAuthError
	if !errors.As(err, &na) {
		return a.autos == 0
	}
	stepUp := na.Status == http.StatusForbidden
	moved := errors.Is(na.Reason, oauth.ErrAuthServerChanged) // a new server: a new sign-in
	return a.autos == 0 || stepUp || moved
}

// pending returns the sign-in under way (nil if none) and a channel that
// closes when the next one starts.
func (a *auth) pending() (run *signInRun, started <-chan struct{}) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cur, a.started
}

// stopAuto keeps the Manager from starting sign-ins on its own until the
// next Login (after Logout).
func (a *auth) stopAuto() {
	a.mu.Lock()
	a.noAuto = true
	a.mu.Unlock()
}

// ready resets the count of automatic sign-ins: the server is ready.
func (a *auth) ready() {
	a.mu.Lock()
	a.autos = 0
	a.mu.Unlock()
}

// awaitSignIn keeps the server in needs-auth (err says why) until a
// sign-in succeeds, starting one on its own where allowed (once). It
// returns false when ctx ends first.
func (s *server) awaitSignIn(ctx context.Context, err error) (signedIn bool) {
	s.logger.Info("MCP server needs sign-in", "err", err)
	s.setState(StateNeedsAuth, err, nil, nil)
	sctx, span := s.m.opts.Telemetry.StartSignIn(ctx, s.spec.Name)
	defer func() {
		if signedIn {
			s.m.opts.Telemetry.ServerState(sctx, s.spec.Name, "signed-in")
		}
		span.End(sctx, context.Cause(ctx))
	}()
	a := s.auth
	tried := false
	for {
		run, started := a.pending()
		if run == nil && !tried && a.mayAuto(err) {
			tried = true
			if r, serr := a.signIn(signInAuto); serr == nil {
				run = r
			}
		}
		var done <-chan struct{}
		if run != nil {
			done = run.done
		}
		select {
		case <-ctx.Done():
			return false
		case <-started: // Login began one
		case <-done:
			if run.err == nil {
				return true
			}
			if !errors.Is(run.err, errSuperseded) {
				span.Fail("sign_in_failed", run.err.Error())
				s.setState(StateNeedsAuth, fmt.Errorf("%w: %w", ErrNeedsAuth, run.err), nil, nil)
			}
		}
	}
}

// signInLife returns the context a sign-in runs under (the server's life;
// the Manager's before Start) and counts the sign-in in the Manager's
// WaitGroup until release is called, so that Close waits for it. It fails
// with ErrClosed once Close has begun.
func (s *server) signInLife() (life context.Context, release func(), err error) {
	m := s.m
	m.mu.Lock()
	closing, life := m.closing, s.life
	if !closing {
		m.wg.Add(1)
	}
	m.mu.Unlock()
	if closing {
		return nil, nil, ErrClosed
	}
	if life == nil {
		life = m.ctx // not started yet (Login before Start)
	}
	return life, m.wg.Done, nil
}

// setPrompt records the prompt of the sign-in under way in the status,
// and says so.
func (s *server) setPrompt(p oauth.Prompt) {
	s.mu.Lock()
	s.st.SignIn, s.st.SignInErr = p, nil
	s.mu.Unlock()
	s.m.fleet.changed(s, EventStatus, false)
}

// endPrompt records the end of the sign-in whose last prompt was
// promptID ("": it presented none) in the status (err: why it failed, nil
// when it succeeded), and says so. A sign-in superseded by one whose
// prompt the status already shows changes nothing: that prompt stays,
// and its own end is the one recorded (a client told of the new prompt
// must not then see "no sign-in under way" from the old one's end). A
// sign-in that presented no prompt records its end only while the status
// shows none either (so a newer sign-in's prompt stays).
func (s *server) endPrompt(promptID string, err error) {
	s.mu.Lock()
	if s.st.SignIn.ID != promptID {
		s.mu.Unlock()
		return
	}
	s.st.SignIn, s.st.SignInErr = oauth.Prompt{}, err
	s.mu.Unlock()
	s.m.fleet.changed(s, EventStatus, false)
}

// Login signs in to the named server (an http or sse server with sign-in
// on), or repeats the sign-in under way with a fresh prompt, presenting it
// through Options.SignIn, and returns once it succeeded or failed (or ctx
// ended; the sign-in goes on). A server waiting for sign-in then
// reconnects; its tools join through the usual events. Errors wrap
// ErrUnknownServer, ErrNoOAuth, ErrClosed or the oauth errors of the
// failed step.
func (m *Manager) Login(ctx context.Context, name string) error {
	s, err := m.fleet.server(name)
	if err != nil {
		return err
	}
	if _, err := s.auth.clientFor(ctx); err != nil {
		return err
	}
	run, err := s.auth.signIn(signInLogin)
	if err != nil {
		return err
	}
	return s.auth.wait(ctx, run)
}

// Logout removes the named server's stored tokens. A connected server then
// waits for sign-in, without starting one on its own (see Login). Errors
// wrap ErrUnknownServer or ErrNoOAuth.
func (m *Manager) Logout(ctx context.Context, name string) error {
	s, err := m.fleet.server(name)
	if err != nil {
		return err
	}
	c, err := s.auth.clientFor(ctx)
	if err != nil {
		return err
	}
	s.auth.stopAuto()
	if err := c.Logout(ctx); err != nil {
		return fmt.Errorf("server %q: logout: %w", name, err)
	}
	s.mu.Lock()
	conn := s.conn
	s.mu.Unlock()
	if conn != nil {
		if hl, ok := conn.link.(*httpLink); ok {
			hl.lost(&oauth.NeedsAuthError{Server: name, Status: http.StatusUnauthorized, Reason: errLoggedOut})
		}
	}
	return nil
}

// clientFor returns the server's oauth.Client: the one its connections
// use, else one made from its spec as Options.Prepare prepares it. Errors
// wrap ErrNoOAuth for a server that does not sign in.
func (a *auth) clientFor(ctx context.Context) (*oauth.Client, error) {
	if c := a.current(); c != nil {
		return c, nil
	}
	if t := a.env.spec.Transport; t != TransportHTTP && t != TransportSSE {
		return nil, fmt.Errorf("%w: %q is reached over %s", ErrNoOAuth, a.env.spec.Name, t)
	}
	spec := a.env.spec
	if prepare := a.env.opts.Prepare; prepare != nil {
		var err error
		if spec, err = prepare(ctx, spec); err != nil {
			return nil, err
		}
	}
	c, err := a.oauthClient(&spec)
	if err == nil && c == nil {
		err = fmt.Errorf("%w: sign-in is off for %q", ErrNoOAuth, a.env.spec.Name)
	}
	return c, err
}
