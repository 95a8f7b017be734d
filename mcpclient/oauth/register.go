package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// identity is who the client is at an authorization server.
type identity struct {
	id, secret, method string
	registered         bool // from dynamic registration
}

// registration is a dynamic client registration request (RFC 7591 §2).
type registration struct {
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris,omitempty"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types,omitempty"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	// ApplicationType is "native" for a client whose redirect is a
	// loopback listener (SEP-837; OpenID Connect Registration §2).
	ApplicationType string `json:"application_type,omitempty"`
}

// registered is a registration response (RFC 7591 §3.2.1).
type registered struct {
	ClientID                string `json:"client_id"`
	ClientSecret            string `json:"client_secret"`
	TokenEndpointAuthMethod string `json:"token_endpoint_auth_method"`
}

// identify establishes the client's identity for a user's sign-in, in the
// order of the MCP specification: a client configured for the server (at
// the authorization server it belongs to: see configuredAt), a
// Client ID Metadata Document URL where the server supports it, a client
// this Client registered there before, then dynamic registration (with
// redirectURIs and grants).
func (c *Client) identify(ctx context.Context, d *discovery, redirectURIs, grants []string) (identity, error) {
	hasKey := c.signer != nil
	supported := d.as.TokenEndpointAuthMethodsSupported
	var tieErr error // the configured client belongs to another issuer
	if c.cfg.ClientID != "" {
		if tieErr = c.configuredAt(d.issuer); tieErr == nil {
			method := chooseAuthMethod(c.cfg.TokenEndpointAuthMethod, "", c.cfg.ClientSecret != "", hasKey, supported)
			return identity{id: c.cfg.ClientID, secret: c.cfg.ClientSecret, method: method}, nil
		}
	}
	if c.cfg.ClientMetadataURL != "" && d.as.ClientIDMetadataDocumentSupported {
		method := chooseAuthMethod(c.cfg.TokenEndpointAuthMethod, "", false, hasKey, supported)
		return identity{id: c.cfg.ClientMetadataURL, method: method}, nil
	}
	if id, ok := c.registeredBefore(d); ok {
		return id, nil
	}
	if d.as.RegistrationEndpoint == "" {
		if tieErr != nil {
			return identity{}, c.fail(StepRegistration, fmt.Errorf("%w; %s offers no dynamic registration", tieErr, d.issuer))
		}
		return identity{}, c.fail(StepRegistration, fmt.Errorf("%w: %s offers no dynamic registration and no clientId is configured for the server", ErrRegistration, d.issuer))
	}
	id, err := c.register(ctx, d, redirectURIs, grants)
	if err != nil {
		var te *TokenError
		if d.guessed && (!errors.As(err, &te) || te.Status == http.StatusNotFound || te.Status == http.StatusMethodNotAllowed) {
			// No metadata anywhere, and the 2025-03-26 default endpoint
			// is not there either: say that the metadata is missing.
			err = fmt.Errorf("%w: no protected-resource or authorization-server metadata found for %s, and the default registration endpoint failed: %w", ErrMetadata, c.serverURL, err)
			return identity{}, c.fail(StepMetadata, err)
		}
		return identity{}, c.fail(StepRegistration, err)
	}
	return id, nil
}

// known returns the records of the server's clients: the Client's own,
// then the Store's.
func (c *Client) known() []*record {
	c.mu.Lock()
	cands := []*record{}
	if c.rec != nil {
		cands = append(cands, c.rec)
	}
	c.mu.Unlock()
	if c.opts.Store != nil {
		if recs, err := c.opts.Store.load(c.serverURL); err == nil {
			cands = append(cands, recs...)
		}
	}
	return cands
}

// configuredAt returns nil when the configured client may be used at
// issuer: the one it belongs to (Config.Issuer, else the issuer of a
// record of it, held or stored: the first it was used with), or any
// before its first use. Otherwise it logs, and returns an error wrapping
// ErrClientIssuer, naming both issuers.
func (c *Client) configuredAt(issuer string) error {
	tied := c.cfg.Issuer
	if tied == "" {
		for _, r := range c.known() {
			if r.Registered || r.ClientID != c.cfg.ClientID || r.Issuer == "" {
				continue
			}
			if sameIssuer(r.Issuer, issuer) {
				return nil
			}
			tied = r.Issuer
		}
	}
	if tied == "" || sameIssuer(tied, issuer) {
		return nil
	}
	c.opts.Logger.Warn("the configured client is not used at another authorization server",
		"server", c.name, "client_id", c.cfg.ClientID, "client_issuer", tied, "issuer", issuer)
	return fmt.Errorf("%w: client %q of %s belongs to %s, and the server now names %s: its credentials are not sent there (set oauth.issuer, or sign out of the server, to use it there)",
		ErrClientIssuer, c.cfg.ClientID, c.name, tied, issuer)
}

// sameIssuer reports whether issuers a and b are the same (a trailing
// slash aside, as discovery compares them).
func sameIssuer(a, b string) bool { return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/") }

// registeredBefore returns a client this Client (or an earlier one, through
// the Store) registered at d's authorization server.
func (c *Client) registeredBefore(d *discovery) (identity, bool) {
	for _, r := range c.known() {
		if r.Registered && r.Issuer == d.issuer && r.ClientID != "" {
			return identity{id: r.ClientID, secret: r.ClientSecret, method: r.AuthMethod, registered: true}, true
		}
	}
	return identity{}, false
}

// register registers a client (RFC 7591). It asks to be a public client
// (token_endpoint_auth_method none) and uses whatever the server decides.
func (c *Client) register(ctx context.Context, d *discovery, redirectURIs, grants []string) (identity, error) {
	reg := registration{
		ClientName:              c.opts.ClientName,
		RedirectURIs:            redirectURIs,
		GrantTypes:              grants,
		TokenEndpointAuthMethod: AuthNone,
	}
	if len(redirectURIs) > 0 {
		reg.ResponseTypes = []string{"code"}
		reg.ApplicationType = "native" // every redirect is acpgate's loopback listener
	}
	body, err := json.Marshal(reg)
	if err != nil {
		return identity{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.as.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return identity{}, fmt.Errorf("%w: %w", ErrRegistration, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	var out registered
	if err := c.doJSON(req, ErrRegistration, &out); err != nil {
		return identity{}, err
	}
	if out.ClientID == "" {
		return identity{}, fmt.Errorf("%w: %s returned no client_id", ErrRegistration, d.as.RegistrationEndpoint)
	}
	if out.ClientSecret != "" {
		c.opts.Secrets(out.ClientSecret)
	}
	method := chooseAuthMethod("", out.TokenEndpointAuthMethod, out.ClientSecret != "", false, d.as.TokenEndpointAuthMethodsSupported)
	c.opts.Logger.Info("registered a client", "server", c.name, "issuer", d.issuer, "auth_method", method)
	return identity{id: out.ClientID, secret: out.ClientSecret, method: method, registered: true}, nil
}
