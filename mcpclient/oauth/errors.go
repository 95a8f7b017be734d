package oauth

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors. A failed sign-in returns an *Error naming the step,
// which wraps one of them (errors.Is).
var (
	// ErrNeedsAuth: the server wants a sign-in the user must do. The
	// RoundTripper returns a *NeedsAuthError wrapping it instead of the
	// server's 401 (or 403 insufficient_scope).
	ErrNeedsAuth = errors.New("sign-in required")
	// ErrConfig: the oauth configuration is invalid.
	ErrConfig = errors.New("invalid oauth configuration")
	// ErrMetadata: the protected-resource or authorization-server metadata
	// is unreachable, invalid, or found nowhere.
	ErrMetadata = errors.New("authorization metadata unusable")
	// ErrResourceMismatch: the protected-resource metadata names another
	// resource than the server (it is not used).
	ErrResourceMismatch = fmt.Errorf("%w: resource does not match the server", ErrMetadata)
	// ErrRegistration: the client could not be registered (refused, or
	// the server offers no registration and no client is configured).
	ErrRegistration = errors.New("client registration failed")
	// ErrDeclined: the user (or the authorization server on their behalf)
	// declined the sign-in.
	ErrDeclined = errors.New("sign-in declined")
	// ErrAuthorization: the authorization response carried an error other
	// than access_denied.
	ErrAuthorization = errors.New("authorization failed")
	// ErrStateMismatch: the redirect carried another state than the one
	// sent (a forged or stale redirect).
	ErrStateMismatch = errors.New("state mismatch in authorization response")
	// ErrIssuerMismatch: the redirect's iss (RFC 9207) is not the
	// authorization server's issuer, or is missing where it must be sent.
	ErrIssuerMismatch = errors.New("issuer mismatch in authorization response")
	// ErrAuthServerChanged: the server refused a token, and its protected
	// resource metadata now names another authorization server than the
	// one that issued it (SEP-2352): a new sign-in there is needed, with a
	// registration of its own. The Reason of the NeedsAuthError.
	ErrAuthServerChanged = errors.New("the server's authorization server changed")
	// ErrClientIssuer: the server's authorization server is not the one
	// the configured client belongs to (Config.Issuer, else the first one
	// it was used with): the client's credentials are not sent there. A
	// user's sign-in registers a client of its own there instead, where
	// the server offers registration.
	ErrClientIssuer = errors.New("the configured client belongs to another authorization server")
	// ErrTokenEndpointOrigin: the authorization server's token endpoint is
	// on another origin than its issuer, and Config.SameOriginTokenEndpoint
	// refuses that.
	ErrTokenEndpointOrigin = fmt.Errorf("%w: token endpoint on another origin than its issuer", ErrMetadata)
	// ErrTokenEndpoint: the token endpoint (or the device authorization
	// endpoint) answered an error; a *TokenError carries its OAuth error.
	ErrTokenEndpoint = errors.New("token endpoint error")
	// ErrRedirectTimeout: the user did not complete the sign-in within
	// Options.RedirectTimeout.
	ErrRedirectTimeout = errors.New("sign-in timed out")
	// ErrInsufficientScope: the server keeps refusing for lack of scope
	// after the step-ups allowed; signing in again would not help.
	ErrInsufficientScope = errors.New("insufficient scope")
	// ErrNoSignIn: the sign-in needs the user and no way to reach them was
	// given (a nil PresentFunc).
	ErrNoSignIn = errors.New("no interactive sign-in possible")
	// ErrNoAnswer: an authorization server (its token endpoint, most
	// often) did not answer in time: a request gave up waiting for a
	// token, or a request of the Client's was timed out. An
	// *UnansweredError wraps it and names the endpoint.
	ErrNoAnswer = errors.New("no answer from the authorization server")
	// ErrClosed: the Client was closed, so it gets no new token.
	ErrClosed = errors.New("oauth client closed")
)

// Step names a step of a sign-in.
type Step string

// The steps of a sign-in, as Error names them.
const (
	StepMetadata      Step = "metadata"
	StepRegistration  Step = "registration"
	StepAuthorization Step = "authorization"
	StepRedirect      Step = "redirect"
	StepToken         Step = "token"
	StepRefresh       Step = "refresh"
)

// Error is a failed sign-in step. It wraps the cause, which wraps one of
// the sentinel errors.
type Error struct {
	Server string
	Step   Step
	Err    error
}

// Error implements error.
func (e *Error) Error() string {
	return fmt.Sprintf("sign-in to %s: %s: %v", e.Server, e.Step, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// NeedsAuthError is the RoundTripper's error for a response that needs the
// user to sign in (a 401, or a 403 insufficient_scope beyond what the
// Client can fix itself). It wraps ErrNeedsAuth.
type NeedsAuthError struct {
	Server string
	// Status is the HTTP status the server answered (401 or 403).
	Status int
	// ResourceMetadata and Scope are the WWW-Authenticate challenge's
	// parameters ("" when absent).
	ResourceMetadata string
	Scope            string
	// Reason says why a token the Client held did not do (nil when it had
	// none): the refresh it tried failed, for one.
	Reason error
}

// Error implements error.
func (e *NeedsAuthError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %v (HTTP %d", e.Server, ErrNeedsAuth, e.Status)
	if e.Scope != "" {
		fmt.Fprintf(&b, ", scope %q", e.Scope)
	}
	b.WriteString(")")
	if e.Reason != nil {
		fmt.Fprintf(&b, ": %v", e.Reason)
	}
	return b.String()
}

// Unwrap returns ErrNeedsAuth and the reason.
func (e *NeedsAuthError) Unwrap() []error {
	if e.Reason != nil {
		return []error{ErrNeedsAuth, e.Reason}
	}
	return []error{ErrNeedsAuth}
}

// UnansweredError says that an authorization server endpoint did not
// answer in time. The RoundTripper returns it (unwrapped) for a request
// whose context ended while it waited for a token flight: the request was
// never sent to the server. A request of the Client's own that timed out
// wraps it too (inside an *Error from a token flight or a sign-in). It
// wraps ErrNoAnswer and Err.
type UnansweredError struct {
	// Server names the server the token is for ("" inside an *Error,
	// which names it).
	Server string
	// Endpoint is the URL of the request that was not answered (the token
	// endpoint, or metadata a machine grant needs first); "" when the
	// flight had sent none yet.
	Endpoint string
	// Waited is how long the request waited.
	Waited time.Duration
	// Err is why the wait ended: the cause of the waiting request's
	// context, or the HTTP client's timeout error.
	Err error
}

// Error implements error.
func (e *UnansweredError) Error() string {
	var b strings.Builder
	if e.Server != "" {
		fmt.Fprintf(&b, "%s: no token: ", e.Server)
	}
	at := e.Endpoint
	if at == "" {
		at = "the authorization server"
	}
	fmt.Fprintf(&b, "%v: %s unanswered after %s", ErrNoAnswer, at, e.Waited.Round(time.Millisecond))
	if e.Err != nil {
		fmt.Fprintf(&b, " (%v)", e.Err)
	}
	return b.String()
}

// Unwrap returns ErrNoAnswer and Err.
func (e *UnansweredError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrNoAnswer, e.Err}
	}
	return []error{ErrNoAnswer}
}

// TokenError is an OAuth error response (RFC 6749 §5.2) from a token, device
// authorization or registration endpoint. It wraps ErrTokenEndpoint, or
// ErrRegistration for registration.
type TokenError struct {
	Endpoint    string
	Status      int
	Code        string // the OAuth "error"; "" if the body had none
	Description string // "error_description"
	kind        error
	nonce       string // the answer's DPoP-Nonce, if any
}

// Error implements error.
func (e *TokenError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v: %s answered HTTP %d", e.kind, e.Endpoint, e.Status)
	if e.Code != "" {
		fmt.Fprintf(&b, ": %s", e.Code)
	}
	if e.Description != "" {
		fmt.Fprintf(&b, " (%s)", e.Description)
	}
	return b.String()
}

// Unwrap returns ErrTokenEndpoint or ErrRegistration.
func (e *TokenError) Unwrap() error { return e.kind }
