package oauth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// callbackPath is the path of the loopback redirect URI.
const callbackPath = "/callback"

// authorizationCode runs the authorization code grant with PKCE S256 and
// a loopback redirect (RFC 8252 §7.3): the listener lives for this sign-in
// only.
func (c *Client) authorizationCode(ctx context.Context, d *discovery, scopes []string, present PresentFunc) (*record, error) {
	state := rand.Text()
	redirectURI, results, stop, err := c.listen(ctx, state, d)
	if err != nil {
		return nil, c.fail(StepRedirect, fmt.Errorf("opening the loopback listener: %w", err))
	}
	defer stop()

	id, err := c.identify(ctx, d, []string{redirectURI}, []string{GrantAuthorizationCode, grantRefreshToken})
	if err != nil {
		return nil, err
	}
	verifier := oauth2.GenerateVerifier() // PKCE, RFC 7636: 32 random bytes, base64url
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {id.id},
		"redirect_uri":          {redirectURI},
		"state":                 {state},
		"code_challenge":        {oauth2.S256ChallengeFromVerifier(verifier)},
		"code_challenge_method": {"S256"},
		"resource":              {d.resource},
	}
	scopeForm(q, scopes)
	authURL, err := withQuery(d.as.AuthorizationEndpoint, q)
	if err != nil {
		return nil, c.fail(StepMetadata, fmt.Errorf("%w: authorization_endpoint: %w", ErrMetadata, err))
	}
	p := Prompt{Server: c.name, URL: authURL, ID: rand.Text()}
	c.opts.Logger.Info("waiting for sign-in", "server", c.name, "issuer", d.issuer, "prompt", p.ID)
	var res redirectResult
	err = c.await(ctx, p, present, func(wctx context.Context) error {
		select {
		case res = <-results:
			return res.err
		case <-wctx.Done():
			return wctx.Err()
		}
	})
	if err != nil {
		return nil, err
	}
	rec, err := c.newRecord(d, id)
	if err != nil {
		return nil, err
	}
	form := url.Values{
		"grant_type":    {GrantAuthorizationCode},
		"code":          {res.code},
		"redirect_uri":  {redirectURI},
		"code_verifier": {verifier},
		"resource":      {d.resource},
	}
	return c.grant(ctx, rec, form, scopes)
}

// listen opens the loopback listener of one sign-in on 127.0.0.1 (a
// random port) and returns its redirect URI, the channel its first
// redirect arrives on, and the function that closes it (and waits until
// it is closed).
func (c *Client) listen(ctx context.Context, state string, d *discovery) (string, <-chan redirectResult, func(), error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, nil, err
	}
	results := make(chan redirectResult, 1)
	srv := &http.Server{
		Handler:           c.callbackHandler(state, d, results),
		ReadHeaderTimeout: 10 * time.Second,
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(ln) // returns when closed below
	}()
	stop := func() {
		// Let the browser get its page, briefly; then close everything.
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = srv.Shutdown(sctx)
		cancel()
		_ = srv.Close()
		<-served
	}
	return "http://" + ln.Addr().String() + callbackPath, results, stop, nil
}

// await shows p and waits, at most Options.RedirectTimeout, for wait to
// return: the user's part of a sign-in. present runs alongside (it may
// return at once or when the user is done); its error ends the wait. It
// returns only once present has returned.
func (c *Client) await(ctx context.Context, p Prompt, present PresentFunc, wait func(context.Context) error) error {
	wctx, cancel := context.WithTimeout(ctx, c.opts.RedirectTimeout)
	defer cancel()
	presented := make(chan error, 1)
	go func() { presented <- present(wctx, p) }()
	waited := make(chan error, 1)
	go func() { waited <- wait(wctx) }()
	var err error
	select {
	case err = <-waited:
		cancel()
		<-presented
	case perr := <-presented:
		if perr != nil && wctx.Err() == nil {
			cancel()
			<-waited
			return c.fail(StepAuthorization, fmt.Errorf("presenting the sign-in: %w", perr))
		}
		err = <-waited
	}
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return c.fail(StepRedirect, ctx.Err())
	case errors.Is(err, context.DeadlineExceeded) && wctx.Err() != nil:
		return c.fail(StepRedirect, fmt.Errorf("%w: no answer within %s", ErrRedirectTimeout, c.opts.RedirectTimeout))
	}
	if te := (*TokenError)(nil); errors.As(err, &te) {
		return c.fail(StepToken, err)
	}
	return c.fail(StepRedirect, err)
}

// redirectResult is what the loopback redirect brought.
type redirectResult struct {
	code string
	err  error
}

// callbackHandler serves the loopback redirect: it checks state (first),
// iss (RFC 9207) and the error, sends the result to results (the first
// redirect only), and shows the user a short page.
func (c *Client) callbackHandler(state string, d *discovery, results chan<- redirectResult) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != callbackPath {
			http.NotFound(w, r)
			return
		}
		res := checkRedirect(r.URL.Query(), state, d)
		select {
		case results <- res:
		default: // a sign-in takes the first redirect only
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		msg := "Signed in to " + c.name + ". You can close this window."
		if res.err != nil {
			w.WriteHeader(http.StatusBadRequest)
			msg = "Sign-in to " + c.name + " failed: " + res.err.Error()
		}
		fmt.Fprintf(w, "<!doctype html><title>acpgate</title><p>%s</p>\n", html.EscapeString(msg))
	})
}

// checkRedirect checks an authorization response.
func checkRedirect(q url.Values, state string, d *discovery) redirectResult {
	if q.Get("state") != state {
		return redirectResult{err: ErrStateMismatch}
	}
	if iss, ok := q["iss"]; ok || d.as.IssParameterSupported {
		want := d.as.Issuer
		if want == "" {
			want = d.issuer
		}
		if !ok {
			return redirectResult{err: fmt.Errorf("%w: no iss, though %s says it sends one", ErrIssuerMismatch, want)}
		}
		// Compared exactly, as RFC 9207 §2.4 says: no normalisation.
		if len(iss) != 1 || iss[0] != want {
			return redirectResult{err: fmt.Errorf("%w: got %q, want %q", ErrIssuerMismatch, strings.Join(iss, ","), want)}
		}
	}
	if e := q.Get("error"); e != "" {
		kind := ErrAuthorization
		if e == "access_denied" {
			kind = ErrDeclined
		}
		if desc := q.Get("error_description"); desc != "" {
			return redirectResult{err: fmt.Errorf("%w: %s (%s)", kind, e, desc)}
		}
		return redirectResult{err: fmt.Errorf("%w: %s", kind, e)}
	}
	code := q.Get("code")
	if code == "" {
		return redirectResult{err: fmt.Errorf("%w: the redirect has no code", ErrAuthorization)}
	}
	return redirectResult{code: code}
}

// withQuery returns endpoint with q added to its query.
func withQuery(endpoint string, q url.Values) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", err
	}
	all := u.Query()
	for k, v := range q {
		all[k] = v
	}
	u.RawQuery = all.Encode()
	return u.String(), nil
}
