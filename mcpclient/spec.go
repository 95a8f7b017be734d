package mcpclient

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/acpgate/acpgate/internal/base/sandbox"
	"github.com/acpgate/acpgate/mcpclient/oauth"
)

// Transport names how acpgate reaches an MCP server.
type Transport string

// The transports a ServerSpec may name.
const (
	// TransportStdio runs the server as a child process and speaks
	// newline-delimited JSON-RPC over its stdin and stdout.
	TransportStdio Transport = "stdio"
	// TransportHTTP is MCP streamable HTTP. A server that turns out to be a
	// legacy SSE server is reached over SSE instead, automatically.
	TransportHTTP Transport = "http"
	// TransportSSE is the legacy HTTP+SSE transport (protocol 2024-11-05).
	TransportSSE Transport = "sse"
	// TransportACP reaches a server that lives in the ACP client, through
	// the ACP connection (MCP over ACP): Options.Tunnel carries its
	// messages. Each connection, a reconnect included, is a new one.
	TransportACP Transport = "acp"
)

// Defaults applied to zero fields of ServerSpec and Options.
const (
	DefaultConnectTimeout = 30 * time.Second
	DefaultCallTimeout    = 60 * time.Second
	DefaultMaxRestarts    = 5
	// DefaultRestartWindow is the window MaxRestarts counts restarts in.
	DefaultRestartWindow  = 10 * time.Minute
	DefaultMaxServers     = 10
	DefaultMaxTools       = 2000
	DefaultCallsPerMinute = 100
	DefaultCloseGrace     = time.Second
	DefaultCloseTimeout   = 5 * time.Second
	// DefaultMaxMessageSize bounds one JSON-RPC line read from a stdio
	// server's stdout. Longer lines are discarded with a warning.
	DefaultMaxMessageSize = 16 << 20
	// DefaultStderrTail is how much of a server's most recent stderr output
	// its Status carries.
	DefaultStderrTail = 2048
)

// ProtocolVersion is the MCP protocol revision acpgate asks for. Servers that
// only speak an older revision (2025-06-18, 2025-03-26, 2024-11-05) answer
// with theirs and the connection uses it.
const ProtocolVersion = "2025-11-25"

// Unlimited, as ServerSpec.CallsPerMinute or Options.CallsPerMinute, turns the
// per-server rate limit off.
const Unlimited = -1

// ServerSpec describes one MCP server of a session.
//
// Zero values mean "the default": Transport defaults to stdio when Command is
// set, timeouts to DefaultConnectTimeout and DefaultCallTimeout, MaxRestarts to
// DefaultMaxRestarts, RestartWindow to DefaultRestartWindow, CallsPerMinute to the Manager's Options.CallsPerMinute.
type ServerSpec struct {
	// Name identifies the server within its Manager. Required and unique.
	Name string
	// Transport is stdio, http, sse or acp.
	Transport Transport

	// Command, Args, Env and Cwd describe a stdio server. Env is added to a
	// minimal inherited baseline (see BaselineEnv); Cwd defaults to the
	// Manager's Options.Cwd.
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string

	// URL and Headers describe an http or sse server. Plain http is only
	// allowed to a loopback host unless AllowInsecureHTTP is set.
	URL               string
	Headers           map[string]string
	AllowInsecureHTTP bool
	// OAuth configures sign-in for an http or sse server: nil signs in
	// with the defaults when the server answers 401; OAuth.Disabled never
	// signs in (a 401 is then an ordinary failure). Secrets in it are
	// resolved by Options.Prepare, like Headers.
	OAuth *oauth.Config

	// ServerID names an acp server to Options.Tunnel: the id the ACP
	// client declared it with (its serverId).
	ServerID string

	// ConnectTimeout bounds starting the server and the initialize handshake
	// plus discovery. CallTimeout bounds one call; each progress
	// notification from the server restarts it.
	ConnectTimeout time.Duration
	CallTimeout    time.Duration

	// NoRestart disables restarting after a crash or connection loss.
	// MaxRestarts bounds the restarts within any RestartWindow (0 means
	// DefaultMaxRestarts, and DefaultRestartWindow): a server that would
	// need one more is marked failed with an error wrapping ErrGaveUp. A
	// successful restart does not reset the count; only time does.
	NoRestart     bool
	MaxRestarts   int
	RestartWindow time.Duration

	// CallsPerMinute limits calls to this server; 0 means the Manager's
	// default, Unlimited (or any negative value) means no limit.
	CallsPerMinute int

	// Disabled keeps the server out of the session: it is listed with state
	// closed and never started. (It is the "enabled" flag, inverted so the
	// zero value is enabled.)
	Disabled bool

	// Sandbox is the policy a stdio server runs under (the zero value:
	// off), enforced by Options.Sandbox: a policy the system cannot
	// enforce fails the start with an error wrapping
	// sandbox.ErrUnavailable, unless it says failIfUnavailable: false
	// (then the server runs unconfined and Status.Sandbox says so).
	Sandbox sandbox.Policy

	// NoSampling withholds sampling from this server even when
	// Options.Sampler is set: the capability is not declared to it, and
	// its sampling requests are refused.
	NoSampling bool
}

// ErrInvalidSpec is wrapped by every error about a ServerSpec.
var ErrInvalidSpec = errors.New("invalid MCP server spec")

// ErrBadName is wrapped by the error of CheckName: a server name that is
// not one line of printable text.
var ErrBadName = errors.New("invalid MCP server name")

// CheckName returns an error wrapping ErrBadName when name is not a server name: a server name is data, one line of
// printable text, so it may not hold invalid UTF-8, control characters
// (C0, DEL, C1: newlines and escapes among them), format characters (bidi
// overrides and isolates, zero-width characters) or line and paragraph
// separators. It says which character and where (as a rune index).
// Empty names are the callers' to refuse, with the member they came in.
func CheckName(name string) error {
	if !utf8.ValidString(name) {
		return fmt.Errorf("%w %q: not valid UTF-8", ErrBadName, name)
	}
	for i, r := range []rune(name) {
		if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) {
			return fmt.Errorf("%w %q: character %d is %U (a name is one line of printable text)", ErrBadName, name, i+1, r)
		}
	}
	return nil
}

// transport returns the effective transport of s.
func (s *ServerSpec) transport() Transport {
	if s.Transport == "" {
		if s.Command == "" && s.URL != "" {
			return TransportHTTP
		}
		return TransportStdio
	}
	return s.Transport
}

// withDefaults returns a copy of s with its zero fields defaulted.
func (s ServerSpec) withDefaults(defaultCalls int) ServerSpec {
	s.Transport = s.transport()
	if s.ConnectTimeout <= 0 {
		s.ConnectTimeout = DefaultConnectTimeout
	}
	if s.CallTimeout <= 0 {
		s.CallTimeout = DefaultCallTimeout
	}
	if s.MaxRestarts <= 0 {
		s.MaxRestarts = DefaultMaxRestarts
	}
	if s.RestartWindow <= 0 {
		s.RestartWindow = DefaultRestartWindow
	}
	if s.CallsPerMinute == 0 {
		s.CallsPerMinute = defaultCalls
	}
	return s
}

// Validate reports what is wrong with s, naming the field: an error
// wrapping ErrInvalidSpec (and, for a URL, CheckURL's sentinel), or nil.
// A Manager starts no server whose spec is invalid (it shows as failed).
func (s *ServerSpec) Validate() error {
	if err := CheckName(s.Name); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidSpec, err)
	}
	switch s.transport() {
	case TransportStdio:
		if strings.TrimSpace(s.Command) == "" {
			return fmt.Errorf("%w: server %q: stdio transport requires a command", ErrInvalidSpec, s.Name)
		}
	case TransportHTTP, TransportSSE:
		if err := CheckURL(s.URL, s.AllowInsecureHTTP); err != nil {
			return fmt.Errorf("%w: server %q: %w", ErrInvalidSpec, s.Name, err)
		}
	case TransportACP:
		if strings.TrimSpace(s.ServerID) == "" {
			return fmt.Errorf("%w: server %q: acp transport requires a server id", ErrInvalidSpec, s.Name)
		}
	default:
		return fmt.Errorf("%w: server %q: unknown transport %q (want stdio, http, sse or acp)", ErrInvalidSpec, s.Name, s.Transport)
	}
	return nil
}
