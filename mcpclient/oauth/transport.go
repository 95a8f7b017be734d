package oauth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// RoundTripper returns a RoundTripper that authorizes requests to the
// server's origin with the Client's token, on top of base (nil:
// http.DefaultTransport). Requests to any other origin go to base as they
// are: the token never leaves the server's origin. A token about to expire
// is refreshed first. On a 401 it refreshes the token (or, for machine
// grants, obtains a new one) and retries once (a machine grant whose
// fresh token, stored by another session, is refused too obtains one of
// its own and retries a second time); on a 403 insufficient_scope
// a machine grant steps up its scopes and retries once. Where only the user
// can help it returns a *NeedsAuthError (wrapping ErrNeedsAuth) instead of
// the response, having recorded the challenge for SignIn; where nothing
// can help (the scope was asked for already, or the step-ups are used up),
// an error wrapping ErrInsufficientScope. A request that waits for a new
// token waits for the Client's token flight (one at a time, shared by
// every request that needs it) until its own context ends, then fails with
// an *UnansweredError naming the endpoint the flight waits on; it is not
// sent. A request body without GetBody is read into memory so that it can
// be sent again. Safe for concurrent use.
func (c *Client) RoundTripper(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &roundTripper{c: c, base: base}
}

// tokenAuthority is what a round tripper asks of its Client: whether a
// request goes to the server, the token to send and how to send it, what
// the answers teach (nonces, challenges) and how to get a better token.
type tokenAuthority interface {
	serves(u *url.URL) bool
	accessToken(ctx context.Context) (string, error)
	authorize(req *http.Request, tok string) error
	noteNonce(h http.Header, rs bool)
	noteChallenge(ch challenge)
	retries(status int) int
	dropToken(tok string, reason error)
	needsAuth(status int, ch challenge) error
	stepUp(ctx context.Context, ch challenge) (string, error)
	recoverToken(ctx context.Context, stale string, refusal *challenge) (string, error)
}

// roundTripper is the http.RoundTripper of [Client.RoundTripper].
type roundTripper struct {
	c    tokenAuthority
	base http.RoundTripper
}

// serves reports whether u is on the origin of the Client's server: only
// such requests carry its token.
func (c *Client) serves(u *url.URL) bool { return sameOrigin(u, c.serverURL) }

// RoundTrip implements http.RoundTripper.
func (t *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	c := t.c
	if !c.serves(req.URL) {
		return t.base.RoundTrip(req)
	}
	getBody, err := rewindable(req)
	if err != nil {
		return nil, err
	}
	ctx := req.Context()
	tok, err := c.accessToken(ctx)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	resp, err := t.sendNonced(req, nil, getBody, tok)
	for tries := 0; err == nil; tries++ {
		ch := parseChallenge(resp.Header)
		insufficient := resp.StatusCode == http.StatusForbidden && ch.Error == "insufficient_scope"
		if resp.StatusCode != http.StatusUnauthorized && !insufficient {
			return resp, nil
		}
		discard(resp)
		c.noteChallenge(ch)
		if tries >= c.retries(resp.StatusCode) {
			if resp.StatusCode == http.StatusUnauthorized {
				c.dropToken(tok, errors.New("the server refused a fresh token"))
			}
			return nil, c.needsAuth(resp.StatusCode, ch)
		}
		var fresh string
		if insufficient {
			fresh, err = c.stepUp(ctx, ch)
		} else {
			fresh, err = c.recoverToken(ctx, tok, &ch)
		}
		if err != nil {
			return nil, err
		}
		if fresh == "" {
			return nil, c.needsAuth(resp.StatusCode, ch)
		}
		tok = fresh
		resp, err = t.sendNonced(req, getBody, getBody, tok)
	}
	return nil, err
}

// retries is how often a request refused with status is sent again with
// a fresh token: once; for a machine grant twice on a 401, because the
// fresh token of the first retry may be one another session stored,
// refused as well, and the grant gets one of its own for the second.
func (c *Client) retries(status int) int {
	if status == http.StatusUnauthorized && c.cfg.machine() {
		return 2
	}
	return 1
}

// send sends a clone of req with tok (none if ""); with getBody, a fresh
// body from it (a retry).
func (t *roundTripper) send(req *http.Request, getBody func() (io.ReadCloser, error), tok string) (*http.Response, error) {
	r := req.Clone(req.Context())
	if getBody != nil && req.Body != nil && req.Body != http.NoBody {
		body, err := getBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	if tok != "" {
		if err := t.c.authorize(r, tok); err != nil {
			closeBody(r)
			return nil, err
		}
	}
	resp, err := t.base.RoundTrip(r)
	if err == nil {
		t.c.noteNonce(resp.Header, true)
	}
	return resp, err
}

// sendNonced is send, once more (with retryBody) when the server answers
// that a DPoP proof needs its nonce (RFC 9449 §9); every nonce it gives is
// kept for the proofs that follow.
func (t *roundTripper) sendNonced(req *http.Request, getBody, retryBody func() (io.ReadCloser, error), tok string) (*http.Response, error) {
	resp, err := t.send(req, getBody, tok)
	if err != nil {
		return nil, err
	}
	if !asksForNonce(resp) || tok == "" {
		return resp, nil
	}
	discard(resp)
	return t.send(req, retryBody, tok)
}

// rewindable makes sure req's body can be sent again: it returns
// req.GetBody, or, when there is none, reads the body into memory and
// returns a function that replays it (req.Body is then replaced by a
// replay too).
func rewindable(req *http.Request) (func() (io.ReadCloser, error), error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	if req.GetBody != nil {
		return req.GetBody, nil
	}
	b, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	get := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	req.Body, _ = get()
	return get, nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// discard drains (a little of) resp's body and closes it, so that the
// connection can be reused.
func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
}

// noteChallenge records the server's latest challenge for SignIn.
func (c *Client) noteChallenge(ch challenge) {
	if strings.EqualFold(ch.Scheme, tokenTypeDPoP) {
		c.dpopSeen.Store(true)
	}
	c.mu.Lock()
	c.ch = ch
	c.mu.Unlock()
}

// needsAuth is the error for a response that needs the user.
func (c *Client) needsAuth(status int, ch challenge) error {
	c.mu.Lock()
	reason := c.reason
	c.reason = nil
	c.mu.Unlock()
	return &NeedsAuthError{Server: c.name, Status: status, ResourceMetadata: ch.ResourceMetadata, Scope: ch.Scope, Reason: reason}
}

// accessToken returns the token to send ("" for none), refreshing one that
// is about to expire (or, for machine grants, obtaining a new one).
func (c *Client) accessToken(ctx context.Context) (string, error) {
	c.mu.Lock()
	r := c.rec
	c.mu.Unlock()
	if r == nil || r.AccessToken == "" {
		return "", nil
	}
	if r.Expiry.IsZero() || c.opts.Now().Add(refreshSkew).Before(r.Expiry) {
		return r.AccessToken, nil
	}
	return c.recoverToken(ctx, r.AccessToken, nil)
}

// recoverToken replaces stale, a token that is expiring (refusal nil) or
// was refused with the challenge *refusal: by one another request got
// meanwhile, one a refresh gets, or (machine grants) a new one; a refused
// token whose authorization server changed is dropped (issuerMoved). ""
// means only a sign-in can help; c.reason then says why the token went.
// The work is a token flight (see fly): when ctx ends first, the error is
// an *UnansweredError.
func (c *Client) recoverToken(ctx context.Context, stale string, refusal *challenge) (string, error) {
	c.mu.Lock()
	r := c.rec
	c.mu.Unlock()
	if r != nil && r.AccessToken != "" && r.AccessToken != stale && c.fresh(r) {
		return r.AccessToken, nil // refreshed meanwhile
	}
	return c.fly(ctx, false, func(ctx context.Context) (string, error) { return c.recoverNow(ctx, stale, refusal) })
}

// recoverNow is recoverToken's flight.
func (c *Client) recoverNow(ctx context.Context, stale string, refusal *challenge) (string, error) {
	c.mu.Lock()
	r := c.rec
	c.mu.Unlock()
	if r != nil && r.AccessToken != "" && r.AccessToken != stale && c.fresh(r) {
		return r.AccessToken, nil // refreshed meanwhile
	}
	if nr := c.storedNewer(r, stale); nr != nil {
		return nr.AccessToken, nil
	}
	var ch challenge
	if refusal != nil {
		ch = *refusal
		if moved := c.issuerMoved(ctx, r, ch); moved != nil {
			c.drop(r, moved) // a refresh at the old server would not help
			return "", nil
		}
	}
	if r != nil && r.RefreshToken != "" {
		return c.refresh(ctx, r)
	}
	if c.cfg.machine() {
		return c.machineToken(ctx, ch, false)
	}
	if r != nil && r.AccessToken != "" {
		c.drop(r, fmt.Errorf("the token was refused or expired and cannot be refreshed"))
	}
	return "", nil
}

// fresh reports whether r's token is good for a while yet.
func (c *Client) fresh(r *record) bool {
	return r.Expiry.IsZero() || c.opts.Now().Add(refreshSkew).Before(r.Expiry)
}

// storedNewer adopts a token that another Client stored after r: for r's
// client (it refreshed first: r's refresh token may be spent), or, when
// the Client has no token, any that fits the configuration (another
// session signed in).
func (c *Client) storedNewer(r *record, stale string) *record {
	if c.opts.Store == nil {
		return nil
	}
	recs, err := c.opts.Store.load(c.serverURL)
	if err != nil {
		return nil
	}
	for _, s := range recs {
		// Not expired is enough: a token close to its expiry is refreshed
		// on its next use, with its own (newer) refresh token.
		if s.AccessToken == "" || s.AccessToken == stale || (!s.Expiry.IsZero() && !c.opts.Now().Before(s.Expiry)) {
			continue
		}
		fits := r == nil && c.usable(s)
		if r != nil {
			fits = s.Issuer == r.Issuer && s.ClientID == r.ClientID && s.Updated.After(r.Updated)
		}
		if fits {
			for _, v := range s.secrets() {
				c.opts.Secrets(v)
			}
			c.mu.Lock()
			c.rec = s
			c.mu.Unlock()
			return s
		}
	}
	return nil
}

// refresh refreshes r's token. A refresh the server refuses drops the
// token (the next request needs a sign-in); other failures are errors.
// Called in a flight.
func (c *Client) refresh(ctx context.Context, r *record) (string, error) {
	form := url.Values{"grant_type": {grantRefreshToken}, "refresh_token": {r.RefreshToken}, "resource": {r.Resource}}
	tr, err := c.postToken(ctx, r.TokenEndpoint, form, c.auth(r))
	nr := *r
	if err == nil {
		err = c.applyToken(&nr, tr, nil)
	}
	var te *TokenError
	if errors.As(err, &te) && te.Status/100 == 4 && te.Status != http.StatusTooManyRequests {
		// Another Client of the Store (another session) may have
		// refreshed with the same refresh token meanwhile: a server that
		// rotates them refuses the spent one. Its token is as good.
		if nr := c.storedNewer(r, r.AccessToken); nr != nil {
			c.opts.Logger.Debug("refresh refused; another session's token is used", "server", c.name)
			return nr.AccessToken, nil
		}
		c.opts.Logger.Info("refresh refused; a sign-in is needed", "server", c.name, "err", err)
		c.drop(r, &Error{Server: c.name, Step: StepRefresh, Err: err})
		return "", nil
	}
	if err != nil {
		return "", c.fail(StepRefresh, err)
	}
	c.opts.Logger.Debug("token refreshed", "server", c.name)
	return nr.AccessToken, c.keep(&nr)
}

// dropToken drops the current token if it is tok.
func (c *Client) dropToken(tok string, reason error) {
	c.mu.Lock()
	r := c.rec
	c.mu.Unlock()
	if r != nil && tok != "" && r.AccessToken == tok {
		c.drop(r, reason)
	}
}

// drop forgets r's tokens (keeping its client) because of reason, which
// the next NeedsAuthError carries.
func (c *Client) drop(r *record, reason error) {
	nr := *r
	nr.AccessToken, nr.RefreshToken, nr.Expiry = "", "", time.Time{}
	nr.Updated = c.opts.Now()
	c.mu.Lock()
	c.reason = reason
	c.mu.Unlock()
	_ = c.keep(&nr)
}

// stepUp handles a 403 insufficient_scope: a machine grant asks for the
// scopes; a user's sign-in is needed otherwise (""), unless it cannot
// help (an error wrapping ErrInsufficientScope).
func (c *Client) stepUp(ctx context.Context, ch challenge) (string, error) {
	if c.stepUpHopeless(ch.Scope) {
		return "", fmt.Errorf("%s: %w: the server still asks for scope %q after the step-ups allowed", c.name, ErrInsufficientScope, ch.Scope)
	}
	if !c.cfg.machine() {
		return "", nil
	}
	return c.fly(ctx, true, func(ctx context.Context) (string, error) { return c.machineToken(ctx, ch, true) })
}

// machineToken obtains a token by the configured machine grant. Called in
// a flight.
func (c *Client) machineToken(ctx context.Context, ch challenge, stepUp bool) (string, error) {
	c.mu.Lock()
	d := c.disc
	c.mu.Unlock()
	if d == nil || ch.ResourceMetadata != "" {
		var err error
		if d, err = c.discover(ctx, ch); err != nil {
			return "", c.fail(StepMetadata, err)
		}
		c.mu.Lock()
		c.disc = d
		c.mu.Unlock()
	}
	rec, err := c.machineGrant(ctx, d, c.scopesFor(d, ch, stepUp))
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	if stepUp {
		c.stepUps++
	}
	c.mu.Unlock()
	return rec.AccessToken, c.keep(rec)
}

// sameOrigin reports whether u has the origin (scheme, host, port) of
// serverURL.
func sameOrigin(u *url.URL, serverURL string) bool {
	s, err := url.Parse(serverURL)
	if err != nil {
		return false
	}
	return origin(u) == origin(s)
}

// origin is u's scheme://host:port, lower case, with the default port
// made explicit.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}
