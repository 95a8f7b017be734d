package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// The grant and token types of the extension grants.
const (
	grantRefreshToken  = "refresh_token"
	grantDeviceCode    = "urn:ietf:params:oauth:grant-type:device_code"
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	grantJWTBearer     = GrantJWTBearer
	tokenTypeIDJAG     = "urn:ietf:params:oauth:token-type:id-jag"
	tokenTypeIDToken   = "urn:ietf:params:oauth:token-type:id_token"
)

// tokenResponse is a token endpoint's answer (RFC 6749 §5.1, RFC 8693
// §2.2.1).
type tokenResponse struct {
	AccessToken     string      `json:"access_token"`
	TokenType       string      `json:"token_type"`
	RefreshToken    string      `json:"refresh_token"`
	ExpiresIn       json.Number `json:"expires_in"`
	Scope           string      `json:"scope"`
	IssuedTokenType string      `json:"issued_token_type"`
}

// errorResponse is an OAuth error body (RFC 6749 §5.2).
type errorResponse struct {
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
}

// clientAuth is how a request authenticates the client at an endpoint.
type clientAuth struct {
	id, secret, method string
	signer             *signer
	audience           string // of private_key_jwt assertions: the issuer
	// dpop, when set, signs a DPoP proof for each token request (dpop.go).
	dpop *dpopKey
}

// apply adds the client's authentication to form and req (RFC 6749
// §2.3.1: basic credentials are form-encoded first).
func (a clientAuth) apply(form url.Values, req *http.Request, now time.Time, secrets func(string)) error {
	switch a.method {
	case AuthClientSecretBasic:
		req.SetBasicAuth(url.QueryEscape(a.id), url.QueryEscape(a.secret))
	case AuthClientSecretPost:
		form.Set("client_id", a.id)
		form.Set("client_secret", a.secret)
	case AuthPrivateKeyJWT:
		if a.signer == nil {
			return fmt.Errorf("%w: %s needs privateKey", ErrConfig, AuthPrivateKeyJWT)
		}
		assertion, err := a.signer.clientAssertion(a.id, a.audience, now)
		if err != nil {
			return fmt.Errorf("signing the client assertion: %w", err)
		}
		secrets(assertion)
		form.Set("client_id", a.id)
		form.Set("client_assertion_type", clientAssertionType)
		form.Set("client_assertion", assertion)
	default: // none
		if a.id != "" {
			form.Set("client_id", a.id)
		}
	}
	return nil
}

// chooseAuthMethod picks the token endpoint authentication method: the
// configured one, else the one registration returned, else the best the
// server supports for the credentials at hand (RFC 8414: no list means
// client_secret_basic).
func chooseAuthMethod(configured, registered string, hasSecret, hasKey bool, supported []string) string {
	switch {
	case configured != "":
		return configured
	case registered != "":
		return registered
	case hasKey && (!hasSecret || slices.Contains(supported, AuthPrivateKeyJWT)):
		return AuthPrivateKeyJWT
	case !hasSecret:
		return AuthNone
	case len(supported) == 0 || slices.Contains(supported, AuthClientSecretBasic):
		return AuthClientSecretBasic
	case slices.Contains(supported, AuthClientSecretPost):
		return AuthClientSecretPost
	default:
		return AuthClientSecretBasic
	}
}

// postToken POSTs form, authenticated by auth, to endpoint and returns the
// token response. An OAuth error answer is a *TokenError wrapping
// ErrTokenEndpoint. With a DPoP key, each attempt carries a fresh proof,
// and a use_dpop_nonce answer is tried once more with the nonce it gives.
func (c *Client) postToken(ctx context.Context, endpoint string, form url.Values, auth clientAuth) (*tokenResponse, error) {
	for attempt := 0; ; attempt++ {
		tr, err := c.postTokenOnce(ctx, endpoint, form, auth)
		var te *TokenError
		if attempt == 0 && auth.dpop != nil && errors.As(err, &te) && te.Status == http.StatusBadRequest && te.Code == errUseDPoPNonce && te.nonce != "" {
			continue // the nonce is noted (doJSON); a new proof carries it
		}
		return tr, err
	}
}

// postTokenOnce is one attempt of postToken.
func (c *Client) postTokenOnce(ctx context.Context, endpoint string, form url.Values, auth clientAuth) (*tokenResponse, error) {
	form = maps.Clone(form) // apply adds the client's credentials
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrTokenEndpoint, endpoint, err)
	}
	if err := auth.apply(form, req, c.opts.Now(), c.opts.Secrets); err != nil {
		return nil, err
	}
	if auth.dpop != nil {
		c.mu.Lock()
		nonce := c.asNonce
		c.mu.Unlock()
		p, err := auth.dpop.proof(http.MethodPost, req.URL, nonce, "", c.opts.Now())
		if err != nil {
			return nil, err
		}
		req.Header.Set(headerDPoP, p)
	}
	body := form.Encode()
	req.Body = io.NopCloser(strings.NewReader(body))
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	var tr tokenResponse
	if err := c.doJSON(req, ErrTokenEndpoint, &tr); err != nil {
		return nil, err
	}
	return &tr, nil
}

// doJSON sends req and decodes a 2xx JSON answer into v; anything else is
// a *TokenError of kind, or an error wrapping kind (and, for a timeout, an
// *UnansweredError).
func (c *Client) doJSON(req *http.Request, kind error, v any) error {
	resp, err := c.send(req)
	if err != nil {
		return fmt.Errorf("%w: %w", kind, err)
	}
	defer resp.Body.Close()
	c.noteNonce(resp.Header, false)
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return fmt.Errorf("%w: %s: reading the answer: %w", kind, req.URL.Redacted(), err)
	}
	if resp.StatusCode/100 != 2 {
		te := &TokenError{Endpoint: req.URL.Redacted(), Status: resp.StatusCode, kind: kind, nonce: resp.Header.Get(headerDPoPNonce)}
		var er errorResponse
		if json.Unmarshal(b, &er) == nil {
			te.Code, te.Description = er.Error, er.ErrorDescription
		}
		return te
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %s: invalid JSON answer: %w", kind, req.URL.Redacted(), err)
	}
	return nil
}

// grant posts form to rec's token endpoint and puts the answer into rec
// (see applyToken); a failure is a StepToken error.
func (c *Client) grant(ctx context.Context, rec *record, form url.Values, scopes []string) (*record, error) {
	tr, err := c.postToken(ctx, rec.TokenEndpoint, form, c.auth(rec))
	if err == nil {
		err = c.applyToken(rec, tr, scopes)
	}
	if err != nil {
		return nil, c.fail(StepToken, err)
	}
	return rec, nil
}

// applyToken puts a token response into r, keeping r's refresh token when
// the response brings none (RFC 6749 §6), and tells Options.Secrets.
func (c *Client) applyToken(r *record, tr *tokenResponse, requested []string) error {
	if tr.AccessToken == "" {
		return fmt.Errorf("%w: the answer has no access_token", ErrTokenEndpoint)
	}
	c.opts.Secrets(tr.AccessToken)
	if tr.RefreshToken != "" {
		c.opts.Secrets(tr.RefreshToken)
		r.RefreshToken = tr.RefreshToken
	}
	now := c.opts.Now()
	r.AccessToken, r.TokenType = tr.AccessToken, tr.TokenType
	r.Expiry = time.Time{}
	if n, err := tr.ExpiresIn.Int64(); err == nil && n > 0 {
		r.Expiry = now.Add(time.Duration(n) * time.Second)
	}
	r.Scope = tr.Scope
	if requested != nil {
		r.Requested = strings.Join(requested, " ")
	}
	r.Updated = now
	return nil
}

// auth returns the client authentication of r at its token endpoint, with
// r's DPoP key (an unreadable one is logged and left out: the request is
// then made without a proof).
func (c *Client) auth(r *record) clientAuth {
	k, err := c.dpopKeyOf(r)
	if err != nil {
		c.opts.Logger.Warn("DPoP key", "server", c.name, "err", err)
	}
	return clientAuth{id: r.ClientID, secret: r.ClientSecret, method: r.AuthMethod, signer: c.signer, audience: r.Issuer, dpop: k}
}

// send sends req with the HTTP client, noting its URL in the flight it is
// made for, if any. A failure names the URL; a timeout is an
// *UnansweredError.
func (c *Client) send(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	noteURL(ctx, req.URL.Redacted())
	start := time.Now()
	resp, err := c.opts.HTTP.Do(req)
	if err == nil {
		return resp, nil
	}
	if timedOut(ctx, err) {
		return nil, &UnansweredError{Endpoint: req.URL.Redacted(), Waited: time.Since(start), Err: err}
	}
	return nil, fmt.Errorf("%s: %w", req.URL.Redacted(), err)
}
