package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// maxBody bounds every metadata, registration and token response read.
const maxBody = 1 << 20

// protocolVersion is sent as MCP-Protocol-Version on metadata requests,
// which come before any initialize.
const protocolVersion = "2025-11-25"

// resourceMetadata is protected-resource metadata (RFC 9728).
type resourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// serverMetadata is authorization-server metadata (RFC 8414, or OpenID
// Connect Discovery).
type serverMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	DeviceAuthorizationEndpoint       string   `json:"device_authorization_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported"`
	IssParameterSupported             bool     `json:"authorization_response_iss_parameter_supported"`
}

// discovery is what discover found out about a server.
type discovery struct {
	// resource is the RFC 8707 resource indicator to send.
	resource string
	// prm is the protected-resource metadata; nil on the 2025-03-26 path.
	prm *resourceMetadata
	// issuer identifies the authorization server (the key of stored
	// tokens, the audience of assertions).
	issuer string
	as     serverMetadata
	// guessed: no metadata at all; the endpoints are the 2025-03-26
	// defaults at the server's origin.
	guessed bool
}

// discover finds the server's authorization server: protected-resource
// metadata from ch's resource_metadata or the well-known URIs (path-based
// first), then its authorization server's metadata (RFC 8414, then OpenID
// configuration). Without protected-resource metadata it follows the
// 2025-03-26 revision: metadata at the server's origin, else the default
// endpoints there. Errors wrap ErrMetadata.
func (c *Client) discover(ctx context.Context, ch challenge) (*discovery, error) {
	prm, err := c.fetchResourceMetadata(ctx, ch.ResourceMetadata)
	if err != nil {
		return nil, err
	}
	if prm == nil {
		return c.discoverLegacy(ctx)
	}
	d := &discovery{resource: prm.Resource, prm: prm, issuer: prm.AuthorizationServers[0]}
	if err := c.opts.CheckURL(d.issuer); err != nil {
		return nil, fmt.Errorf("%w: authorization server %q: %w", ErrMetadata, d.issuer, err)
	}
	var tried []string
	for _, u := range serverMetadataURLs(d.issuer) {
		var md serverMetadata
		found, err := c.getJSON(ctx, u, &md)
		if err != nil {
			return nil, err
		}
		if !found {
			tried = append(tried, u)
			continue
		}
		if strings.TrimSuffix(md.Issuer, "/") != strings.TrimSuffix(d.issuer, "/") {
			return nil, fmt.Errorf("%w: %s declares issuer %q, not %q", ErrMetadata, u, md.Issuer, d.issuer)
		}
		if err := c.checkServerMetadata(u, &md); err != nil {
			return nil, err
		}
		d.as = md
		return d, nil
	}
	return nil, fmt.Errorf("%w: no authorization server metadata for %s (tried %s)", ErrMetadata, d.issuer, strings.Join(tried, ", "))
}

// discoverLegacy is discovery per the 2025-03-26 revision: the server's
// origin is its authorization server.
func (c *Client) discoverLegacy(ctx context.Context) (*discovery, error) {
	u, _ := url.Parse(c.serverURL) // New checked it
	origin := u.Scheme + "://" + u.Host
	d := &discovery{resource: c.resource, issuer: origin}
	for _, mu := range []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"} {
		var md serverMetadata
		found, err := c.getJSON(ctx, mu, &md)
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		if err := c.checkServerMetadata(mu, &md); err != nil {
			return nil, err
		}
		if md.Issuer != "" {
			d.issuer = md.Issuer
		}
		d.as = md
		return d, nil
	}
	d.guessed = true
	d.as = serverMetadata{
		Issuer:                origin,
		AuthorizationEndpoint: origin + "/authorize",
		TokenEndpoint:         origin + "/token",
		RegistrationEndpoint:  origin + "/register",
	}
	return d, nil
}

// fetchResourceMetadata returns the server's protected-resource metadata:
// from advertised (the challenge's resource_metadata) if set, else from
// the well-known URIs, path-based first. Nil when none is found.
func (c *Client) fetchResourceMetadata(ctx context.Context, advertised string) (*resourceMetadata, error) {
	var candidates []string
	if advertised != "" {
		if err := c.opts.CheckURL(advertised); err != nil {
			return nil, fmt.Errorf("%w: resource_metadata %q: %w", ErrMetadata, advertised, err)
		}
		candidates = append(candidates, advertised)
	}
	candidates = append(candidates, resourceMetadataURLs(c.serverURL)...)
	for _, u := range candidates {
		var prm resourceMetadata
		found, err := c.getJSON(ctx, u, &prm)
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, fmt.Errorf("%w: %s names no authorization server", ErrMetadata, u)
		}
		if prm.Resource == "" {
			prm.Resource = c.resource
		}
		if !resourceCovers(prm.Resource, c.serverURL) {
			return nil, fmt.Errorf("%w: %s names %q, not %q", ErrResourceMismatch, u, prm.Resource, c.serverURL)
		}
		return &prm, nil
	}
	return nil, nil
}

// checkServerMetadata validates authorization-server metadata found at u:
// its endpoints pass Options.CheckURL and it supports PKCE S256 (the MCP
// specification requires clients to refuse an authorization server that
// does not say so).
func (c *Client) checkServerMetadata(u string, md *serverMetadata) error {
	if md.TokenEndpoint == "" {
		return fmt.Errorf("%w: %s has no token_endpoint", ErrMetadata, u)
	}
	for _, e := range []struct{ name, v string }{
		{"authorization_endpoint", md.AuthorizationEndpoint},
		{"token_endpoint", md.TokenEndpoint},
		{"registration_endpoint", md.RegistrationEndpoint},
		{"device_authorization_endpoint", md.DeviceAuthorizationEndpoint},
	} {
		if e.v == "" {
			continue
		}
		if err := c.opts.CheckURL(e.v); err != nil {
			return fmt.Errorf("%w: %s: %s %q: %w", ErrMetadata, u, e.name, e.v, err)
		}
	}
	if !c.cfg.machine() && !slices.Contains(md.CodeChallengeMethodsSupported, "S256") {
		return fmt.Errorf("%w: %s does not list S256 in code_challenge_methods_supported (PKCE is required)", ErrMetadata, u)
	}
	return c.checkTokenOrigin(u, md)
}

// checkTokenOrigin checks md's token endpoint, where the client's
// credentials go, against the origin of md's issuer: another origin is
// refused where Config.SameOriginTokenEndpoint says so, else logged
// naming both (RFC 8414 allows it, and real issuers do it).
func (c *Client) checkTokenOrigin(u string, md *serverMetadata) error {
	iu, err := url.Parse(md.Issuer)
	if md.Issuer == "" || err != nil {
		return nil // the 2025-03-26 layout: no issuer to compare with
	}
	tu, err := url.Parse(md.TokenEndpoint)
	if err != nil || origin(iu) == origin(tu) {
		return nil // CheckURL has refused an unparsable one
	}
	if c.cfg.SameOriginTokenEndpoint {
		return fmt.Errorf("%w: %s: issuer %s, token endpoint %s (oauth.sameOriginTokenEndpoint)", ErrTokenEndpointOrigin, u, origin(iu), origin(tu))
	}
	c.opts.Logger.Warn("token endpoint on another origin than its issuer: the client's credentials go there",
		"server", c.name, "issuer", origin(iu), "token_endpoint", origin(tu))
	return nil
}

// getJSON GETs u and decodes a 200 answer into v. found is false for any
// other status; an unreachable URL or a body that does not decode is an
// error wrapping ErrMetadata.
func (c *Client) getJSON(ctx context.Context, u string, v any) (found bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, fmt.Errorf("%w: %s: %w", ErrMetadata, u, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("MCP-Protocol-Version", protocolVersion)
	resp, err := c.send(req)
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrMetadata, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
		return false, nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxBody)).Decode(v); err != nil {
		return false, fmt.Errorf("%w: %s: invalid JSON: %w", ErrMetadata, u, err)
	}
	return true, nil
}

// resourceMetadataURLs returns the well-known URIs of serverURL's
// protected-resource metadata: path-based, then at the root (RFC 9728 §3.1).
func resourceMetadataURLs(serverURL string) []string {
	u, err := url.Parse(serverURL)
	if err != nil {
		return nil
	}
	root := u.Scheme + "://" + u.Host + "/.well-known/oauth-protected-resource"
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	if path == "" {
		return []string{root}
	}
	return []string{root + path, root}
}

// serverMetadataURLs returns the metadata URLs to try for an issuer: RFC
// 8414 with path insertion, then OpenID Connect Discovery with path
// insertion and appended (MCP 2025-11-25).
func serverMetadataURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" {
		return nil
	}
	base := u.Scheme + "://" + u.Host
	path := strings.Trim(u.EscapedPath(), "/")
	if path == "" {
		return []string{base + "/.well-known/oauth-authorization-server", base + "/.well-known/openid-configuration"}
	}
	return []string{
		base + "/.well-known/oauth-authorization-server/" + path,
		base + "/.well-known/openid-configuration/" + path,
		base + "/" + path + "/.well-known/openid-configuration",
	}
}

// resourceCovers reports whether the resource identifier resource names
// the server at serverURL: same scheme and host, no query or fragment of
// its own, and a path equal to or a segment prefix of the server's.
func resourceCovers(resource, serverURL string) bool {
	r, err1 := url.Parse(resource)
	s, err2 := url.Parse(serverURL)
	if err1 != nil || err2 != nil {
		return false
	}
	if !strings.EqualFold(r.Scheme, s.Scheme) || !strings.EqualFold(r.Host, s.Host) || r.Fragment != "" || r.User != nil {
		return false
	}
	if r.RawQuery != "" && r.RawQuery != s.RawQuery {
		return false
	}
	rp := strings.TrimSuffix(r.EscapedPath(), "/")
	sp := strings.TrimSuffix(s.EscapedPath(), "/")
	return rp == sp || strings.HasPrefix(sp, rp+"/")
}

// canonicalResource is serverURL as a resource indicator: lower-case
// scheme and host, no fragment.
func canonicalResource(serverURL string) (string, error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", err
	}
	if u.Host == "" {
		return "", errors.New("no host")
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	u.Fragment, u.RawFragment = "", ""
	return u.String(), nil
}

// issuerMoved returns, for r's token just refused by the server (with
// challenge ch), an error wrapping ErrAuthServerChanged when the protected
// resource metadata now names another authorization server than r's
// issuer; nil when it names the same, or cannot be read (the refusal then
// stands for itself).
func (c *Client) issuerMoved(ctx context.Context, r *record, ch challenge) error {
	if r == nil || r.Issuer == "" {
		return nil
	}
	prm, err := c.fetchResourceMetadata(ctx, ch.ResourceMetadata)
	if err != nil || prm == nil {
		return nil
	}
	if now := prm.AuthorizationServers[0]; now != r.Issuer {
		return fmt.Errorf("%w: from %s to %s", ErrAuthServerChanged, r.Issuer, now)
	}
	return nil
}
