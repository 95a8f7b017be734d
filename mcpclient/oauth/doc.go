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
// One Client owns all of a sign-in's state, under its mu, and does all of
// the work through its own methods; its files split by grant and by step
// (the map below). It was once split into four roles (discoverer,
// registrar, grants, tokens), each a struct{ c *Client } with no state of
// its own that reached the Client's fields through the pointer. They fold
// back into the Client, rather than each taking the state it uses,
// because that state does not divide by role: the credentials record
// (rec) holds the client's identity (registration), its tokens (the grants
// write it, refresh replaces it) and the DPoP key (dkey, parsed from it),
// and is stored and replaced whole; the discovered metadata (disc) gives
// the registration endpoint, the grants' endpoints and the token
// endpoint; the last challenge (ch) and the step-ups decide the scopes a
// grant asks for and whether a refused token is dropped; a sign-in, a
// refresh and a drop each change several of these at once, and must not
// interleave. Owners per role would hand each other that state under each
// other's locks, which is the coupling the roles only hid.
//
// Read the Client's fields by concern: the configuration (serverURL,
// resource, name, cfg, opts, signer: set by New, never changed); the
// credentials record, the discovery, the challenge and step-ups, the
// reason of a drop, the token flight and DPoP's key and nonces (under
// mu); the flights' life (life, stop, flights); and signInMu, which lets
// one SignIn run at a time.
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
//	discovery.go  RFC 9728 and RFC 8414 metadata
//	register.go   the client's identity: configured, metadata document URL, RFC 7591
//	authcode.go   the authorization code grant with PKCE and a loopback redirect
//	device.go     the device authorization grant (RFC 8628)
//	machine.go    client credentials and the identity assertion exchange
//	workload.go   workload identity (SEP-1933): a platform's token for the JWT bearer grant
//	token.go      requests to the token endpoint, client authentication
//	flight.go     the one token flight, Close
//	transport.go  RoundTripper; the held token, refresh, step-up, drop
//	dpop.go       DPoP (RFC 9449): proofs, nonces, the key of the record
//	frames.go     FlightFrames: the flight's functions, for leak checks
//	challenge.go  WWW-Authenticate challenges
//	jwt.go        signer: private_key_jwt assertions (go-jose)
//	dpop.go       DPoP (RFC 9449): the key, proofs on token requests and MCP requests, nonces
//	store.go      Store: tokens and registrations on disk
//	errors.go     the errors and NeedsAuthError
//	frames.go     FlightFrames: the functions of a token flight, for leak checks
package oauth
