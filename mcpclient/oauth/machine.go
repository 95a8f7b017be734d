package oauth

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// machineGrant obtains a token without the user: client credentials,
// cross-app access when an identity assertion is configured, or the JWT
// bearer grant with a workload token. A configured client is used at the
// authorization server it belongs to only (see configuredAt).
func (c *Client) machineGrant(ctx context.Context, d *discovery, scopes []string) (*record, error) {
	if c.cfg.ClientID != "" {
		// Its credentials go to its own authorization server only.
		if err := c.configuredAt(d.issuer); err != nil {
			return nil, c.fail(StepRegistration, err)
		}
	}
	method := chooseAuthMethod(c.cfg.TokenEndpointAuthMethod, "", c.cfg.ClientSecret != "", c.signer != nil, d.as.TokenEndpointAuthMethodsSupported)
	rec, err := c.newRecord(d, identity{id: c.cfg.ClientID, secret: c.cfg.ClientSecret, method: method})
	if err != nil {
		return nil, err
	}
	form := url.Values{"resource": {d.resource}}
	scopeForm(form, scopes)
	switch {
	case c.cfg.GrantType == GrantJWTBearer:
		tok, err := c.workloadToken(ctx)
		if err != nil {
			return nil, c.fail(StepToken, err)
		}
		form.Set("grant_type", grantJWTBearer)
		form.Set("assertion", tok)
	case c.cfg.IdentityAssertion != "":
		grant, err := c.exchangeIdentity(ctx, d, scopes)
		if err != nil {
			return nil, err
		}
		form.Set("grant_type", grantJWTBearer)
		form.Set("assertion", grant)
	default:
		form.Set("grant_type", GrantClientCredentials)
	}
	return c.grant(ctx, rec, form, scopes)
}

// exchangeIdentity trades the configured identity assertion at the
// identity provider for an identity assertion authorization grant
// (ID-JAG) for d's authorization server and resource (token exchange, RFC
// 8693, as cross-app access uses it).
func (c *Client) exchangeIdentity(ctx context.Context, d *discovery, scopes []string) (string, error) {
	endpoint := c.cfg.IDPTokenEndpoint
	if endpoint == "" {
		var err error
		if endpoint, err = c.idpTokenEndpoint(ctx); err != nil {
			return "", c.fail(StepMetadata, err)
		}
	}
	form := url.Values{
		"grant_type":           {grantTokenExchange},
		"requested_token_type": {tokenTypeIDJAG},
		"audience":             {d.issuer},
		"resource":             {d.resource},
		"subject_token":        {c.cfg.IdentityAssertion},
		"subject_token_type":   {tokenTypeIDToken},
	}
	scopeForm(form, scopes)
	tr, err := c.postToken(ctx, endpoint, form, clientAuth{id: c.cfg.IDPClientID, method: AuthNone})
	if err != nil {
		return "", c.fail(StepToken, err)
	}
	if tr.AccessToken == "" || (tr.IssuedTokenType != "" && tr.IssuedTokenType != tokenTypeIDJAG) {
		return "", c.fail(StepToken, fmt.Errorf("%w: %s issued no identity assertion grant (issued_token_type %q)", ErrTokenEndpoint, endpoint, tr.IssuedTokenType))
	}
	c.opts.Secrets(tr.AccessToken)
	return tr.AccessToken, nil
}

// idpTokenEndpoint finds the identity provider's token endpoint from its
// issuer's metadata.
func (c *Client) idpTokenEndpoint(ctx context.Context) (string, error) {
	issuer := c.cfg.IDPIssuer
	if err := c.opts.CheckURL(issuer); err != nil {
		return "", fmt.Errorf("%w: idpIssuer %q: %w", ErrMetadata, issuer, err)
	}
	for _, u := range serverMetadataURLs(issuer) {
		var md serverMetadata
		found, err := c.getJSON(ctx, u, &md)
		if err != nil {
			return "", err
		}
		if !found {
			continue
		}
		if strings.TrimSuffix(md.Issuer, "/") != strings.TrimSuffix(issuer, "/") || md.TokenEndpoint == "" {
			return "", fmt.Errorf("%w: %s: issuer %q, token_endpoint %q", ErrMetadata, u, md.Issuer, md.TokenEndpoint)
		}
		if err := c.opts.CheckURL(md.TokenEndpoint); err != nil {
			return "", fmt.Errorf("%w: %s: token_endpoint: %w", ErrMetadata, u, err)
		}
		return md.TokenEndpoint, nil
	}
	return "", fmt.Errorf("%w: no metadata for the identity provider %s", ErrMetadata, issuer)
}
