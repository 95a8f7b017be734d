// Package oauth signs acpgate in to remote MCP servers that sit behind
// OAuth, following the MCP authorization specification (2025-11-25, with
// the 2025-03-26 fallbacks): protected-resource metadata (RFC 9728),
// authorization-server metadata (RFC 8414, then OpenID configuration),
// client identity (a configured client, a Client ID Metadata Document URL,
// or dynamic registration, RFC 7591), the authorization code grant with
// PKCE S256 and a loopback redirect (RFC 8252), resource indicators
// (RFC 8707), the iss check (RFC 9207), the device authorization grant
// (RFC 8628), client credentials with client_secret_basic/post or
// private_key_jwt (RFC 7523), and cross-app access (token exchange,
// RFC 8693, then a JWT bearer grant).
//
// One Client serves one server URL. Its RoundTripper puts the token on the
// server's requests, refreshes it, and turns a response that needs the user
// into an error wrapping ErrNeedsAuth; SignIn then does what the user must
// do, through a callback that presents a Prompt. Tokens are kept in a Store
// (one file per server, authorization server and client, mode 0600).
//
// The package knows nothing of MCP sessions or ACP; it never logs a token
// or a secret, and tells Options.Secrets about each one it holds.
//
// A Client is split by role, one type each, made by New and reaching the
// Client's state (under its mu) through it:
//
//   - Client: the API (SignIn, Logout, RoundTripper, Close), the scopes
//     asked for, the credentials record kept.
//   - discoverer: protected resource and authorization server metadata.
//   - registrar: the client's identity at an authorization server.
//   - grants: the grants that sign in (code, device, machine).
//   - tokens: the token endpoint, the token held, refresh and its one
//     flight, a refused token dropped.
//
// Maintained libraries where they do a piece fully: PKCE verifiers and
// S256 challenges come from golang.org/x/oauth2; JWTs (private_key_jwt
// client assertions) are signed by github.com/go-jose/go-jose/v4. The rest
// is written here because no maintained Go library does it as MCP needs:
// golang.org/x/oauth2's token requests cannot send the RFC 8707 resource
// on a refresh, do not check iss (RFC 9207) or the token's audience, and
// know nothing of protected resource metadata (RFC 9728), Client ID
// Metadata Documents, step-up on insufficient_scope, or the identity
// assertion exchange (ID-JAG, RFC 8693 then RFC 7523); and its
// TokenSource refreshes on the goroutine of the request that found the
// token stale, where this package runs one flight with a bound of its own
// (Timeouts.Token).
//
// Where things are:
//
//	doc.go        this map
//	config.go     Config, Options, Timeouts: what a server's sign-in is configured with
//	client.go     Client, New, SignIn, Logout: the API and the credentials record
//	discovery.go  discoverer: RFC 9728 and RFC 8414 metadata
//	register.go   registrar: configured client, metadata document URL, RFC 7591
//	authcode.go   grants: authorization code with PKCE and a loopback redirect
//	device.go     grants: device authorization (RFC 8628)
//	machine.go    grants: client credentials and the identity assertion exchange
//	token.go      tokens: requests to the token endpoint, client authentication
//	flight.go     tokens: the one token flight, Close
//	transport.go  RoundTripper; tokens: the held token, refresh, step-up, drop
//	challenge.go  WWW-Authenticate challenges
//	jwt.go        signer: private_key_jwt assertions (go-jose)
//	store.go      Store: tokens and registrations on disk
//	errors.go     the errors and NeedsAuthError
package oauth
