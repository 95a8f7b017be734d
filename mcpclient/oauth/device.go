package oauth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// deviceAuthorization is a device authorization response (RFC 8628 §3.2).
type deviceAuthorization struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code"`
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete"`
	ExpiresIn               int64  `json:"expires_in"`
	// Interval is the polling interval in seconds; nil means 5.
	Interval *int64 `json:"interval"`
}

// deviceGrant runs the device authorization grant (RFC 8628): present
// shows the user code and verification URI, and the token endpoint is
// polled until the user has approved, declined, or the code expired.
func (c *Client) deviceGrant(ctx context.Context, d *discovery, scopes []string, present PresentFunc) (*record, error) {
	id, err := c.identify(ctx, d, nil, []string{grantDeviceCode, grantRefreshToken})
	if err != nil {
		return nil, err
	}
	rec, err := c.newRecord(d, id)
	if err != nil {
		return nil, err
	}
	da, err := c.authorizeDevice(ctx, d, rec, scopes)
	if err != nil {
		return nil, c.fail(StepAuthorization, err)
	}
	for _, u := range []string{da.VerificationURI, da.VerificationURIComplete} {
		if u == "" {
			continue
		}
		if err := c.opts.CheckURL(u); err != nil {
			return nil, c.fail(StepAuthorization, fmt.Errorf("%w: verification URI %q: %w", ErrMetadata, u, err))
		}
	}
	p := Prompt{Server: c.name, URL: da.VerificationURIComplete, UserCode: da.UserCode, VerificationURI: da.VerificationURI, ID: rand.Text()}
	if p.URL == "" {
		p.URL = da.VerificationURI
	}
	var tr *tokenResponse
	err = c.await(ctx, p, present, func(wctx context.Context) error {
		var err error
		tr, err = c.pollDevice(wctx, rec, da)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := c.applyToken(rec, tr, scopes); err != nil {
		return nil, c.fail(StepToken, err)
	}
	return rec, nil
}

// authorizeDevice asks the device authorization endpoint for a user code.
func (c *Client) authorizeDevice(ctx context.Context, d *discovery, rec *record, scopes []string) (*deviceAuthorization, error) {
	form := url.Values{"resource": {d.resource}}
	scopeForm(form, scopes)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.as.DeviceAuthorizationEndpoint, nil)
	if err != nil {
		return nil, err
	}
	if err := c.auth(rec).apply(form, req, c.opts.Now(), c.opts.Secrets); err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	var da deviceAuthorization
	if err := c.doJSON(req, ErrTokenEndpoint, &da); err != nil {
		return nil, err
	}
	if da.DeviceCode == "" || da.UserCode == "" || da.VerificationURI == "" {
		return nil, fmt.Errorf("%w: %s: incomplete device authorization", ErrTokenEndpoint, d.as.DeviceAuthorizationEndpoint)
	}
	c.opts.Secrets(da.DeviceCode)
	return &da, nil
}

// pollDevice polls the token endpoint for the device code's token, at the
// server's interval (RFC 8628 §3.4, §3.5), until ctx ends.
func (c *Client) pollDevice(ctx context.Context, rec *record, da *deviceAuthorization) (*tokenResponse, error) {
	interval := 5 * time.Second
	if da.Interval != nil {
		interval = time.Duration(max(*da.Interval, 0)) * time.Second
	}
	if da.ExpiresIn > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, time.Duration(da.ExpiresIn)*time.Second, ErrRedirectTimeout)
		defer cancel()
	}
	timer := time.NewTimer(interval)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), ErrRedirectTimeout) {
				return nil, fmt.Errorf("%w: the user code expired", ErrRedirectTimeout)
			}
			return nil, ctx.Err()
		case <-timer.C:
		}
		form := url.Values{"grant_type": {grantDeviceCode}, "device_code": {da.DeviceCode}, "resource": {rec.Resource}}
		tr, err := c.postToken(ctx, rec.TokenEndpoint, form, c.auth(rec))
		var te *TokenError
		switch {
		case err == nil:
			return tr, nil
		case !errors.As(err, &te):
			if ctx.Err() != nil {
				continue // reported at the top
			}
			return nil, err
		case te.Code == "authorization_pending":
		case te.Code == "slow_down":
			interval += 5 * time.Second
		case te.Code == "access_denied":
			return nil, fmt.Errorf("%w: %w", ErrDeclined, err)
		case te.Code == "expired_token":
			return nil, fmt.Errorf("%w: %w", ErrRedirectTimeout, err)
		default:
			return nil, err
		}
		timer.Reset(interval)
	}
}
