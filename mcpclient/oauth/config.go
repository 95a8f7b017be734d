package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"
)

// The grant types Config.GrantType names.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
	// GrantJWTBearer is workload identity federation (SEP-1933): the JWT
	// bearer grant with the token of WorkloadTokenFile or
	// WorkloadTokenCommand as its assertion.
	GrantJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"
)

// The token endpoint authentication methods Config.TokenEndpointAuthMethod
// names.
const (
	AuthClientSecretBasic = "client_secret_basic"
	AuthClientSecretPost  = "client_secret_post"
	AuthNone              = "none"
	AuthPrivateKeyJWT     = "private_key_jwt"
)

// DefaultRedirectTimeout bounds one interactive sign-in: the wait for the
// redirect (or, for the device grant, for the user to enter the code).
const DefaultRedirectTimeout = 5 * time.Minute

// The defaults of Timeouts.
const (
	DefaultConnectTimeout = 10 * time.Second
	DefaultHeaderTimeout  = 30 * time.Second
	DefaultRequestTimeout = 60 * time.Second
	DefaultTokenTimeout   = 60 * time.Second
)

// Timeouts bound a Client's requests to authorization servers and its
// token flights. A zero (or negative) field means its default: none can be
// turned off.
type Timeouts struct {
	// Connect bounds connecting to an authorization server: the TCP
	// connection and the TLS handshake, each (default
	// DefaultConnectTimeout).
	Connect time.Duration
	// Header bounds the wait for an answer's headers once a request is
	// sent (default DefaultHeaderTimeout): a server that accepts a request
	// and never answers is given up on after it.
	Header time.Duration
	// Request bounds one whole request, its answer's body included
	// (default DefaultRequestTimeout).
	Request time.Duration
	// Token bounds one token flight: a refresh, or a new token by a
	// machine grant with the discovery it needs (default
	// DefaultTokenTimeout). The flight runs on a context of its own;
	// the requests that wait for its token leave when their own contexts
	// end, and it goes on, at most this long, so that a token the
	// authorization server does send (a rotated refresh token with it) is
	// kept.
	Token time.Duration
}

// withDefaults returns t with its zero fields defaulted.
func (t Timeouts) withDefaults() Timeouts {
	for _, f := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&t.Connect, DefaultConnectTimeout}, {&t.Header, DefaultHeaderTimeout}, {&t.Request, DefaultRequestTimeout}, {&t.Token, DefaultTokenTimeout}} {
		if *f.v <= 0 {
			*f.v = f.def
		}
	}
	return t
}

// newHTTPClient returns the client for requests to authorization servers,
// bounded by t (which has its defaults), with a transport of its own.
func newHTTPClient(t Timeouts) *http.Client {
	dialer := &net.Dialer{Timeout: t.Connect, KeepAlive: 30 * time.Second}
	return &http.Client{
		Timeout: t.Request,
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           dialer.DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          10,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   t.Connect,
			ResponseHeaderTimeout: t.Header,
			ExpectContinueTimeout: time.Second,
		},
	}
}

// Config is a server's `oauth` configuration. Every field is optional: the
// zero Config signs in with the authorization code grant, a dynamically
// registered client and the scopes the server asks for.
type Config struct {
	// Disabled turns sign-in off (`"oauth": false`): the server's 401 is
	// an ordinary failure. New refuses a disabled Config.
	Disabled bool
	// ClientID and ClientSecret identify a client registered beforehand
	// for this server. ClientSecret is the resolved value, never a
	// reference.
	ClientID, ClientSecret string
	// Scopes, when set, are requested instead of the scopes the server
	// suggests (a step-up still adds the scopes a 403 asks for).
	Scopes []string
	// ClientMetadataURL is the URL of this client's Client ID Metadata
	// Document, used as the client_id where the authorization server
	// supports it. "" turns CIMD off.
	ClientMetadataURL string
	// GrantType is GrantAuthorizationCode (default) or
	// GrantClientCredentials (machine to machine: no user involved).
	GrantType string
	// TokenEndpointAuthMethod is how the client authenticates at the token
	// endpoint (AuthClientSecretBasic, AuthClientSecretPost, AuthNone or
	// AuthPrivateKeyJWT). Default: what registration returned, else the
	// best the server supports for the credentials at hand.
	TokenEndpointAuthMethod string
	// PrivateKey is the PEM (PKCS#8, PKCS#1 or SEC 1) of the key that signs
	// private_key_jwt assertions; SigningAlgorithm is RS256 or ES256
	// (default: from the key's type).
	PrivateKey       []byte
	SigningAlgorithm string
	// DeviceCode uses the device authorization grant (RFC 8628) where the
	// authorization server supports it: the user enters a code on another
	// device instead of following a redirect.
	DeviceCode bool
	// IdentityAssertion, when set, selects cross-app access: the assertion
	// (an ID token from the enterprise identity provider) is exchanged at
	// IDPTokenEndpoint (or the token endpoint IDPIssuer's OpenID
	// configuration names) for an authorization grant, which the server's
	// authorization server turns into an access token. IDPClientID is this
	// client's id at the identity provider.
	IdentityAssertion, IDPClientID, IDPIssuer, IDPTokenEndpoint string
	// WorkloadTokenFile or WorkloadTokenCommand (argv, run without a
	// shell) is where GrantJWTBearer reads the workload token, afresh for
	// each grant (see workload.go).
	WorkloadTokenFile    string
	WorkloadTokenCommand []string
	// DPoP binds tokens to a key of the client's (RFC 9449, see dpop.go):
	// true always, false never; nil (default) once the server challenges
	// with the DPoP scheme.
	DPoP *bool
	// Issuer is the authorization server the configured client (ClientID
	// and its secret or key) belongs to. "" (default): the first one it is
	// used with, as the Store remembers it. At any other authorization
	// server the configured client is not used (see ErrClientIssuer).
	Issuer string
	// SameOriginTokenEndpoint refuses an authorization server whose
	// token endpoint is on another origin than its issuer
	// (ErrTokenEndpointOrigin). false (default): such an endpoint is used,
	// and logged naming both origins (RFC 8414 allows it).
	SameOriginTokenEndpoint bool
}

// machine reports whether the configuration obtains tokens without the
// user.
func (c *Config) machine() bool {
	return c.GrantType == GrantClientCredentials || c.GrantType == GrantJWTBearer || c.IdentityAssertion != ""
}

// validate checks what can be checked without the network.
func (c *Config) validate() error {
	switch c.GrantType {
	case "", GrantAuthorizationCode, GrantClientCredentials:
	case GrantJWTBearer:
		if (c.WorkloadTokenFile == "") == (len(c.WorkloadTokenCommand) == 0) {
			return fmt.Errorf("%w: grantType %s needs a workload token source: a file or a command (one of them)", ErrConfig, GrantJWTBearer)
		}
	default:
		return fmt.Errorf("%w: grantType %q (want %s, %s or %s)", ErrConfig, c.GrantType, GrantAuthorizationCode, GrantClientCredentials, GrantJWTBearer)
	}
	switch c.TokenEndpointAuthMethod {
	case "", AuthClientSecretBasic, AuthClientSecretPost, AuthNone:
	case AuthPrivateKeyJWT:
		if len(c.PrivateKey) == 0 {
			return fmt.Errorf("%w: tokenEndpointAuthMethod %s needs privateKey", ErrConfig, AuthPrivateKeyJWT)
		}
	default:
		return fmt.Errorf("%w: tokenEndpointAuthMethod %q", ErrConfig, c.TokenEndpointAuthMethod)
	}
	if c.machine() && c.GrantType != GrantJWTBearer && c.ClientID == "" {
		return fmt.Errorf("%w: %s and cross-app access need clientId", ErrConfig, GrantClientCredentials)
	}
	if c.IdentityAssertion != "" && c.IDPTokenEndpoint == "" && c.IDPIssuer == "" {
		return fmt.Errorf("%w: identityAssertion needs idpTokenEndpoint or idpIssuer", ErrConfig)
	}
	if len(c.PrivateKey) > 0 {
		if _, err := parseSigner(c.PrivateKey, c.SigningAlgorithm); err != nil {
			return fmt.Errorf("%w: privateKey: %w", ErrConfig, err)
		}
	}
	if c.ClientMetadataURL != "" {
		u, err := url.Parse(c.ClientMetadataURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" {
			return fmt.Errorf("%w: clientMetadataUrl %q must be an https URL with a path", ErrConfig, c.ClientMetadataURL)
		}
	}
	return nil
}

// Prompt is what the user must do to sign in: open URL (authorization code
// grant; the redirect comes back to a loopback listener), or, for the
// device grant, visit VerificationURI and enter UserCode (URL is then the
// verification URI with the code filled in, when the server gives one).
type Prompt struct {
	// Server names the server (Options.Name, else its URL).
	Server string
	URL    string
	// UserCode and VerificationURI are set for the device grant only.
	UserCode        string
	VerificationURI string
	// ID is unique per sign-in: a repeated sign-in has a new one.
	ID string
}

// Options configures a Client. The zero value is usable.
type Options struct {
	// Name names the server in prompts and errors (default: its URL).
	Name string
	// Store keeps tokens and registered clients across Clients and
	// processes. Nil: in memory only, for this Client.
	Store *Store
	// HTTP is the client for every request to authorization servers:
	// metadata, registration, token and device authorization. Default: a
	// client of the Client's own, bounded by Timeouts, whose idle
	// connections Close closes. A client given here is used as it is (its
	// own timeouts, or none). The Client never puts the server's token on
	// these requests.
	HTTP *http.Client
	// Timeouts bound those requests and the token flights (zero fields:
	// the defaults).
	Timeouts Timeouts
	// Secrets, if set, is told each token and secret the Client holds
	// (access and refresh tokens, client secrets, assertions), before it
	// is used, so that a redactor can hide them. It must be safe for
	// concurrent use.
	Secrets func(string)
	// RedirectTimeout bounds one interactive sign-in (default
	// DefaultRedirectTimeout).
	RedirectTimeout time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Logger receives the Client's logs (default: discard). No token or
	// secret is ever logged.
	Logger *slog.Logger
	// CheckURL, if set, is the rule each URL the sign-in contacts or sends
	// the user to must pass (the endpoints of the metadata); it returns
	// an error saying what is wrong. Default: an absolute http or https
	// URL with a host.
	CheckURL func(raw string) error
	// ClientName is the client_name of dynamic registration (default
	// "acpgate").
	ClientName string
	// RunCommand runs a command (no shell) and returns its standard
	// output, of which it keeps at most limit+1 bytes (an error once over
	// limit): how Config.WorkloadTokenCommand is run. New refuses a Config
	// with a workload token command when it is nil. acpgate passes
	// secrets.RunCommandLimit (bounded in output and time, its process
	// group killed once over, its error naming it and scrubbed of the
	// output).
	RunCommand func(ctx context.Context, limit int, name string, args ...string) ([]byte, error)
}

// withDefaults returns o with its zero fields defaulted.
func (o Options) withDefaults() Options {
	o.Timeouts = o.Timeouts.withDefaults()
	if o.HTTP == nil {
		o.HTTP = newHTTPClient(o.Timeouts)
	}
	if o.Secrets == nil {
		o.Secrets = func(string) {}
	}
	if o.RedirectTimeout <= 0 {
		o.RedirectTimeout = DefaultRedirectTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.CheckURL == nil {
		o.CheckURL = checkHTTPURL
	}
	if o.ClientName == "" {
		o.ClientName = "acpgate"
	}
	return o
}

// checkHTTPURL is the default Options.CheckURL.
func checkHTTPURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("not an absolute http or https URL")
	}
	return nil
}

// PresentFunc shows a Prompt to the user. It may return before the user
// acts (the sign-in goes on waiting for the redirect) or block until they
// have; an error ends the sign-in (wrap ErrDeclined when the user said
// no). ctx ends when the sign-in ends.
type PresentFunc func(ctx context.Context, p Prompt) error
