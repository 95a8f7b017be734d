package mcpclient

import (
	"errors"
	"fmt"
	"time"

	"github.com/acpgate/acpgate/mcpclient/oauth"
	"github.com/acpgate/acpgate/mcpclient/wire"
)

// State is where a server is in its life.
type State string

// The states of a server.
const (
	StateConnecting State = "connecting" // starting and handshaking
	StateReady      State = "ready"      // initialized, tools discovered
	StateRestarting State = "restarting" // crashed or lost; waiting to reconnect
	StateFailed     State = "failed"     // gave up; Status.Error says why
	// StateNeedsAuth: the server wants a sign-in (see Manager.Login);
	// Status.Err wraps ErrNeedsAuth, or says why the last sign-in failed.
	// It is settled, like ready and failed: no restart is counted and the
	// server reconnects once a sign-in succeeds.
	StateNeedsAuth State = "needs-auth"
	StateClosed    State = "closed" // closed by Close, or disabled
)

// Status is a snapshot of one server. It is a value: later changes to the
// server do not alter it.
type Status struct {
	Name      string
	Transport Transport // the transport in use (http may have fallen back to sse)
	State     State
	// Error says why the server failed or is restarting; empty otherwise.
	// Err is the same reason as an error value, for errors.Is: a server
	// that crashed too often wraps ErrGaveUp. Nil when Error is empty or
	// the reason was set without an error value (an invalid spec).
	Error string
	Err   error
	// WasReady is set once the server has been ready: a failure after it
	// is no failure to start.
	WasReady bool
	// Warning notes a problem that does not stop the server, such as tools
	// dropped by the tool limit.
	Warning string
	// Stderr is the last DefaultStderrTail bytes of a stdio server's stderr.
	Stderr string
	// Tools is the number of tools offered; Dropped how many of the
	// server's tools the tool limit left out.
	Tools   int
	Dropped int
	// Restarts counts the restarts within the spec's restart window as of
	// the last restart (the current attempt included); MaxRestarts is how
	// many the window allows.
	// NextAttempt is when the next restart attempt starts, while the
	// server waits for it (zero otherwise).
	Restarts    int
	MaxRestarts int
	NextAttempt time.Time
	// SignIn is the prompt of the sign-in under way, once it has been
	// presented (zero when none is). SignInErr is why the last sign-in
	// failed (nil after one that succeeded, and while one is under way).
	SignIn    oauth.Prompt
	SignInErr error
	// Sandbox is the sandbox of a stdio server: its policy from the
	// start (Pending until the server is first started), then how its
	// last start was confined. nil: off, or not a stdio server.
	Sandbox         *SandboxStatus
	ProtocolVersion string
	ServerName      string
	ServerVersion   string
	// Instructions is what the server's initialize result (or, on
	// 2026-07-28, its server/discover result) says about how to use it and
	// its features, as of its last connection; "" when it said nothing.
	// It is the server's own text, unchecked: frame it before a model sees
	// it (bridge.Options.Instructions).
	Instructions string
	Since        time.Time // when State was entered
}

// SandboxStatus is how a stdio server's last start was confined. It is
// plain data.
type SandboxStatus struct {
	// Policy describes the policy (sandbox.Policy.String).
	Policy string
	// Enforced is whether the server runs confined; Note says why not
	// (the policy allowed an unconfined start where it cannot be
	// enforced, or the start was refused).
	Enforced bool
	Note     string
	// Hint, on a failed server, says that the sandbox may be why and
	// which policy to change (see sandbox.Explain); "" otherwise.
	Hint string
	// Pending: the server has not been started yet, so whether the
	// policy is enforced is not known (Enforced is false).
	Pending bool
}

// EventKind says what an Event reports.
type EventKind int

// The kinds of Event.
const (
	// EventStatus: a server's state changed.
	EventStatus EventKind = iota + 1
	// EventToolsChanged: the set of tools offered changed (discovery,
	// list_changed, restart, failure, or the tool limit moving tools).
	EventToolsChanged
	// EventResourcesChanged: resources, resource templates or prompts changed.
	EventResourcesChanged
	// EventResourceUpdated: a subscribed resource changed (URI; see
	// Manager.Subscribe).
	EventResourceUpdated
)

// Event reports a change to one server. Status is the server's status right
// after the change.
type Event struct {
	Kind   EventKind
	Server string
	Status Status
	URI    string // EventResourceUpdated: the resource that changed
}

// Sentinel errors. Errors returned by the Manager wrap one of them, with text
// naming the server, the tool and the reason.
var (
	ErrUnknownServer = errors.New("unknown MCP server")
	ErrUnknownTool   = errors.New("unknown tool")
	ErrNotReady      = errors.New("MCP server not ready")
	// ErrRestarting: the server is restarting after a crash or a lost
	// connection. It wraps ErrNotReady.
	ErrRestarting = fmt.Errorf("MCP server restarting: %w", ErrNotReady)
	// ErrGaveUp: the server crashed or lost its connection more often than
	// its spec's MaxRestarts within RestartWindow and is not restarted
	// again.
	ErrGaveUp = errors.New("gave up restarting MCP server")
	// ErrResponseTooLarge: the server's answer to a request was larger
	// than Options.MaxMessageSize and was discarded. The server stays
	// usable.
	ErrResponseTooLarge = wire.ErrResponseTooLarge
	ErrServerExited     = errors.New("MCP server exited")
	ErrConnLost         = errors.New("MCP server connection lost")
	ErrCallTimeout      = errors.New("MCP call timed out")
	ErrRateLimited      = errors.New("MCP server rate limit exceeded")
	ErrClosed           = errors.New("MCP manager closed")
	ErrLimit            = errors.New("MCP limit exceeded")
	// ErrNeedsAuth is oauth.ErrNeedsAuth: the server wants a sign-in. A
	// server in StateNeedsAuth fails calls with an error wrapping it (and
	// ErrNotReady).
	ErrNeedsAuth = oauth.ErrNeedsAuth
	// ErrNoOAuth: Login or Logout named a server that does not sign in
	// with OAuth (stdio, or oauth disabled).
	ErrNoOAuth = errors.New("MCP server does not use OAuth sign-in")
)
