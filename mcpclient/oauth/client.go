package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// refreshSkew is how long before its expiry a token is refreshed.
const refreshSkew = 30 * time.Second

// maxStepUps bounds the step-up sign-ins of one Client: with the sign-in
// that came before, at most three authorizations for one resource.
const maxStepUps = 2

// Client signs in to one server URL and authorizes its requests. Create it
// with New; Close it to end its token flight, if one runs. All methods are
// safe for concurrent use; one SignIn runs at a time (a second waits for
// the first, then signs in again), and one token flight (see
// Timeouts.Token).
type Client struct {
	serverURL string // canonical: the store key and default resource
	resource  string
	name      string
	cfg       Config
	opts      Options
	signer    *signer // nil without a private key

	mu      sync.Mutex
	rec     *record    // current credentials; nil: none
	disc    *discovery // last discovery; nil: none yet
	ch      challenge  // last challenge the server sent
	stepUps int        // step-up sign-ins so far
	reason  error      // why the token was dropped, for the next NeedsAuthError
	flight  *flight    // the token flight under way; nil: none
	closed  bool       // Close was called: no new flight

	life    context.Context // the flights' parent; ends at Close
	stop    context.CancelFunc
	flights sync.WaitGroup // the flight goroutine
	ownHTTP bool           // opts.HTTP is the Client's own

	signInMu sync.Mutex // one sign-in at a time

	// DPoP (dpop.go): the server challenged with the DPoP scheme; the
	// parsed key of the current record; the latest nonces (under mu).
	dpopSeen         atomic.Bool
	dkey             *dpopKey
	dkeyDER          []byte
	asNonce, rsNonce string
}

// New returns a Client for the server at serverURL, with the token the
// Store holds for it, if any. It fails (wrapping ErrConfig) on a disabled
// or invalid Config or a URL without a host.
func New(serverURL string, cfg Config, opts Options) (*Client, error) {
	if cfg.Disabled {
		return nil, fmt.Errorf("%w: sign-in is disabled for %s", ErrConfig, serverURL)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if len(cfg.WorkloadTokenCommand) > 0 && opts.RunCommand == nil {
		return nil, fmt.Errorf("%w: workloadToken.command needs a command runner (Options.RunCommand)", ErrConfig)
	}
	res, err := canonicalResource(serverURL)
	if err != nil {
		return nil, fmt.Errorf("%w: server URL %q: %w", ErrConfig, serverURL, err)
	}
	c := &Client{serverURL: res, resource: res, cfg: cfg, opts: opts.withDefaults(), ownHTTP: opts.HTTP == nil}
	c.life, c.stop = context.WithCancel(context.Background())
	c.name = c.opts.Name
	if c.name == "" {
		c.name = res
	}
	if len(cfg.PrivateKey) > 0 {
		c.signer, _ = parseSigner(cfg.PrivateKey, cfg.SigningAlgorithm) // validate checked it
	}
	for _, s := range []string{cfg.ClientSecret, cfg.IdentityAssertion} {
		if s != "" {
			c.opts.Secrets(s)
		}
	}
	if c.opts.Store != nil {
		recs, err := c.opts.Store.load(c.serverURL)
		if err != nil {
			c.opts.Logger.Warn("reading stored tokens", "server", c.name, "err", err)
		}
		for _, r := range recs {
			if c.usable(r) {
				for _, s := range r.secrets() {
					c.opts.Secrets(s)
				}
				c.rec = r
				break
			}
		}
	}
	return c, nil
}

// usable reports whether a stored record fits the configuration: the
// configured client (or CIMD URL) if one is set.
func (c *Client) usable(r *record) bool {
	switch {
	case c.cfg.ClientID != "":
		return r.ClientID == c.cfg.ClientID
	case c.cfg.ClientMetadataURL != "" && !r.Registered:
		return r.ClientID == c.cfg.ClientMetadataURL
	default:
		return r.Registered
	}
}

// SignedIn reports whether the Client holds a token it can use (or
// refresh).
func (c *Client) SignedIn() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.rec
	return r != nil && r.AccessToken != "" && (r.RefreshToken != "" || r.Expiry.IsZero() || c.opts.Now().Before(r.Expiry))
}

// Logout forgets the server's tokens and registrations, here and in the
// Store.
func (c *Client) Logout(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.rec = nil
	c.stepUps = 0
	c.mu.Unlock()
	if c.opts.Store != nil {
		return c.opts.Store.Remove(c.serverURL)
	}
	return nil
}

// SignIn signs in to the server: it discovers the authorization server,
// establishes the client's identity, and obtains a token. For the
// authorization code grant it opens a loopback listener on 127.0.0.1 (a
// random port, for this sign-in only), calls present with the URL to open,
// and waits for the redirect, at most Options.RedirectTimeout; for the
// device grant present gets the user code. Machine grants (client
// credentials, cross-app access) never call present: their sign-in is a
// token flight, shared with the requests waiting for a token, which ctx
// bounds (see machineSignIn). The token is stored.
// Errors are an *Error naming the step, wrapping one of the sentinel
// errors. A nil present fails with ErrNoSignIn where the user is needed.
func (c *Client) SignIn(ctx context.Context, present PresentFunc) error {
	if c.cfg.machine() {
		return c.machineSignIn(ctx)
	}
	c.signInMu.Lock()
	defer c.signInMu.Unlock()
	c.mu.Lock()
	ch := c.ch
	stepUp := ch.Error == "insufficient_scope"
	c.mu.Unlock()
	d, err := c.discover(ctx, ch)
	if err != nil {
		return c.fail(StepMetadata, err)
	}
	c.mu.Lock()
	c.disc = d
	c.mu.Unlock()
	scopes := c.scopesFor(d, ch, stepUp)
	var rec *record
	switch {
	case c.cfg.machine():
		rec, err = c.machineGrant(ctx, d, scopes)
	case present == nil:
		return c.fail(StepAuthorization, ErrNoSignIn)
	case c.cfg.DeviceCode && d.as.DeviceAuthorizationEndpoint != "":
		rec, err = c.deviceGrant(ctx, d, scopes, present)
	default:
		if c.cfg.DeviceCode {
			c.opts.Logger.Info("authorization server offers no device grant; using a redirect", "server", c.name)
		}
		rec, err = c.authorizationCode(ctx, d, scopes, present)
	}
	if err != nil {
		return err
	}
	c.mu.Lock()
	if stepUp {
		c.stepUps++
	}
	c.ch = challenge{}
	c.mu.Unlock()
	c.opts.Logger.Info("signed in", "server", c.name, "issuer", d.issuer)
	return c.keep(rec)
}

// machineSignIn is SignIn for a machine grant: a token flight (see fly),
// shared with the requests that wait for a token, so that it waits at
// most until ctx ends (then with an *UnansweredError naming the endpoint
// the flight waits on) while the flight goes on, on its own bound. It
// discovers afresh: the server may name another authorization server.
func (c *Client) machineSignIn(ctx context.Context) error {
	c.mu.Lock()
	ch := c.ch
	stepUp := ch.Error == "insufficient_scope"
	c.mu.Unlock()
	grant := func(ctx context.Context) (string, error) {
		c.mu.Lock()
		c.disc = nil
		c.mu.Unlock()
		tok, err := c.machineToken(ctx, ch, stepUp)
		if err == nil {
			c.mu.Lock()
			c.ch = challenge{}
			c.mu.Unlock()
			c.opts.Logger.Info("signed in", "server", c.name, "grant", c.cfg.GrantType)
		}
		return tok, err
	}
	// A flight under way may be a recovery that ends without a token (it
	// dropped one the server refused): then this sign-in flies its own.
	for range 2 {
		tok, err := c.fly(ctx, stepUp, grant)
		if err != nil || tok != "" {
			return err
		}
	}
	return c.fail(StepToken, fmt.Errorf("%w: no token after two token flights", ErrTokenEndpoint))
}

// Machine reports whether the Client signs in with a machine grant (client
// credentials, cross-app access, workload identity): without the user, so
// that a sign-in is bounded by its caller's context (see SignIn).
func (c *Client) Machine() bool { return c.cfg.machine() }

// fail wraps err as the failure of step.
func (c *Client) fail(step Step, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Server: c.name, Step: step, Err: err}
}

// keep makes r the current record and stores it.
func (c *Client) keep(r *record) error {
	c.mu.Lock()
	c.rec = r
	c.mu.Unlock()
	if c.opts.Store == nil {
		return nil
	}
	if err := c.opts.Store.save(r); err != nil {
		// The token works for this Client; later ones will sign in again.
		c.opts.Logger.Warn("storing the token", "server", c.name, "err", err)
	}
	return nil
}

// newRecord starts the record of a sign-in with client identity id, with
// a fresh DPoP key where the Client uses DPoP.
func (c *Client) newRecord(d *discovery, id identity) (*record, error) {
	r := &record{
		ServerURL:     c.serverURL,
		Issuer:        d.issuer,
		Resource:      d.resource,
		ClientID:      id.id,
		ClientSecret:  id.secret,
		AuthMethod:    id.method,
		Registered:    id.registered,
		TokenEndpoint: d.as.TokenEndpoint,
	}
	if c.usesDPoP() {
		k, err := newDPoPKey()
		if err == nil {
			r.DPoPKey, err = k.der()
		}
		if err != nil {
			return nil, c.fail(StepToken, err)
		}
	}
	return r, nil
}

// scopesFor picks the scopes to request (MCP scope selection): the
// configured ones, else the challenge's, else the protected resource's
// scopes_supported, else none. A step-up adds the scopes requested before
// and the challenge's. offline_access is added to a non-empty request for
// a user's sign-in where the authorization server supports it.
func (c *Client) scopesFor(d *discovery, ch challenge, stepUp bool) []string {
	var s []string
	switch {
	case len(c.cfg.Scopes) > 0:
		s = slices.Clone(c.cfg.Scopes)
	case ch.Scope != "":
		s = strings.Fields(ch.Scope)
	case d.prm != nil:
		s = slices.Clone(d.prm.ScopesSupported)
	}
	if stepUp {
		c.mu.Lock()
		if c.rec != nil {
			s = union(strings.Fields(c.rec.Requested), s)
		}
		c.mu.Unlock()
		s = union(s, strings.Fields(ch.Scope))
	}
	if len(s) > 0 && !c.cfg.machine() && slices.Contains(d.as.ScopesSupported, "offline_access") {
		s = union(s, []string{"offline_access"})
	}
	return s
}

// union returns a followed by the elements of b not in a.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// scopeForm sets the scope parameter of form, if there are scopes.
func scopeForm(form url.Values, scopes []string) {
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
}

// stepUpHopeless reports whether a sign-in for a 403 insufficient_scope
// asking for scope cannot help: the token was granted for a request of
// all of it already, or the step-ups allowed are used up.
func (c *Client) stepUpHopeless(scope string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stepUps >= maxStepUps {
		return true
	}
	if c.rec == nil || c.rec.AccessToken == "" {
		return false
	}
	asked := strings.Fields(c.rec.Requested)
	for _, s := range strings.Fields(scope) {
		if !slices.Contains(asked, s) {
			return false
		}
	}
	return true
}
