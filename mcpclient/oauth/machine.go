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
func (gr *grants) machineGrant(ctx context.Context, d *discovery, scopes []string) (*record, error) {
	if gr.c.cfg.ClientID != "" {
		// Its credentials go to its own authorization server only.
		if err := gr.c.registrar.configuredAt(d.issuer); err != nil {
			return nil, gr.c.fail(StepRegistration, err)
		}
	}
	method := chooseAuthMethod(gr.c.cfg.TokenEndpointAuthMethod, "", gr.c.cfg.ClientSecret != "", gr.c.signer != nil, d.as.TokenEndpointAuthMethodsSupported)
	rec, err := gr.c.newRecord(d, identity{id: gr.c.cfg.ClientID, secret: gr.c.cfg.ClientSecret, method: method})
	if err != nil {
		return nil, err
	}
	form := url.Values{"resource": {d.resource}}
	scopeForm(form, scopes)
	switch {
	case gr.c.cfg.GrantType == GrantJWTBearer:
		tok, err := gr.workloadToken(ctx)
		if err != nil {
			return nil, gr.c.fail(StepToken, err)
		}
		form.Set("grant_type", grantJWTBearer)
		form.Set("assertion", tok)
	case gr.c.cfg.IdentityAssertion != "":
		grant, err := gr.exchangeIdentity(ctx, d, scopes)
		if err != nil {
			return nil, err
		}
		form.Set("grant_type", grantJWTBearer)
		form.Set("assertion", grant)
	default:
		form.Set("grant_type", GrantClientCredentials)
	}
	return gr.c.tokens.grant(ctx, rec, form, scopes)
}

// exchangeIdentity trades the configured identity assertion at the
// identity provider for an identity assertion authorization grant
// (ID-JAG) for d's authorization server and resource (token exchange, RFC
// 8693, as cross-app access uses it).
func (gr *grants) exchangeIdentity(ctx context.Context, d *discovery, scopes []string) (string, error) {
	endpoint := gr.c.cfg.IDPTokenEndpoint
	if endpoint == "" {
		var err error
		if endpoint, err = gr.idpTokenEndpoint(ctx); err != nil {
			return "", gr.c.fail(StepMetadata, err)
		}
	}
	form := url.Values{
		"grant_type":           {grantTokenExchange},
		"requested_token_type": {tokenTypeIDJAG},
		"audience":             {d.issuer},
		"resource":             {d.resource},
		"subject_token":        {gr.c.cfg.IdentityAssertion},
		"subject_token_type":   {tokenTypeIDToken},
	}
	scopeForm(form, scopes)
	tr, err := gr.c.tokens.postToken(ctx, endpoint, form, clientAuth{id: gr.c.cfg.IDPClientID, method: AuthNone})
	if err != nil {
		return "", gr.c.fail(StepToken, err)
	}
	if tr.AccessToken == "" || (tr.IssuedTokenType != "" && tr.IssuedTokenType != tokenTypeIDJAG) {
		return "", gr.c.fail(StepToken, fmt.Errorf("%w: %s issued no identity assertion grant (issued_token_type %q)", ErrTokenEndpoint, endpoint, tr.IssuedTokenType))
	}
	gr.c.opts.Secrets(tr.AccessToken)
	return tr.AccessToken, nil
}

// idpTokenEndpoint finds the identity provider's token endpoint from its
// issuer's metadata.
func (gr *grants) idpTokenEndpoint(ctx context.Context) (string, error) {
	issuer := gr.c.cfg.IDPIssuer
	if err := gr.c.opts.CheckURL(issuer); err != nil {
		return "", fmt.Errorf("%w: idpIssuer %q: %w", ErrMetadata, issuer, err)
	}
	for _, u := range serverMetadataURLs(issuer) {
		var md serverMetadata
		found, err := gr.c.disco.getJSON(ctx, u, &md)
		if err != nil {
			return "", err
		}
		if !found {
			continue
		}
		if strings.TrimSuffix(md.Issuer, "/") != strings.TrimSuffix(issuer, "/") || md.TokenEndpoint == "" {
			return "", fmt.Errorf("%w: %s: issuer %q, token_endpoint %q", ErrMetadata, u, md.Issuer, md.TokenEndpoint)
		}
		if err := gr.c.opts.CheckURL(md.TokenEndpoint); err != nil {
			return "", fmt.Errorf("%w: %s: token_endpoint: %w", ErrMetadata, u, err)
		}
		return md.TokenEndpoint, nil
	}
	return "", fmt.Errorf("%w: no metadata for the identity provider %s", ErrMetadata, issuer)
}
