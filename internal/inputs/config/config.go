package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/acpgate/acpgate/internal/base/safefile"
	"github.com/acpgate/acpgate/internal/base/sandbox"
	"github.com/acpgate/acpgate/internal/inputs/mcpservers"
)

// Config is a parsed and validated configuration file. Its zero value is an
// empty configuration. The package never modifies a Config it returned: it is
// safe for concurrent reads as long as callers do not modify it either (use
// [Config.Effective], which returns copies, or [Config.Redacted]).
type Config struct {
	// Model holds the default model settings.
	Model Model `json:"model,omitzero"`
	// Sampling is what happens when an MCP server asks the session's model
	// (sampling/createMessage): SamplingAsk (the default, also for ""),
	// SamplingAllow or SamplingDeny. A server's own Sampling wins.
	Sampling SamplingMode `json:"sampling,omitzero"`
	// Limits holds the limits of every session, whatever the profile.
	Limits Limits `json:"limits,omitzero"`
	// WorkspaceTools says where the workspace tools (read_file,
	// write_file, edit_file, run_command) of every session work; "" means
	// WorkspaceClient.
	WorkspaceTools WorkspaceTools `json:"workspaceTools,omitzero"`
	// Instructions are instructions for the model, put in every session's
	// system prompt ("": none).
	Instructions string `json:"instructions,omitzero"`
	// Hooks are hooks of every session, in Claude Code's format (the
	// value of its settings' "hooks" member; see gateway/hooks). Nil:
	// none.
	Hooks json.RawMessage `json:"hooks,omitzero"`
	// Agents holds the default agent settings and the profiles.
	Agents Agents `json:"agents,omitzero"`
	// MCPServers are default servers in the Claude Desktop / Cursor format
	// (the top-level "mcpServers" object).
	MCPServers map[string]Server `json:"mcpServers,omitzero"`
	// Servers are default servers in the VS Code format (the top-level
	// "servers" object).
	Servers map[string]Server `json:"servers,omitzero"`
	// Skills holds where the user's skills are, besides the configuration
	// folder's skills/.
	Skills Skills `json:"skills,omitzero"`
	// Telemetry configures OpenTelemetry export (docs/telemetry.md); the
	// standard OTEL_* environment variables win over it.
	Telemetry Telemetry `json:"telemetry,omitzero"`
}

// Skills holds the top-level "skills" object. It is plain data: not safe
// for concurrent modification.
type Skills struct {
	// Dirs are more folders of the user's skills (absolute paths), after
	// the configuration folder's skills/.
	Dirs []string `json:"dirs,omitzero"`
}

// Telemetry is the "telemetry" object: OpenTelemetry traces and metrics
// over OTLP. Off unless Enabled is true or OTEL_EXPORTER_OTLP_ENDPOINT is
// set. Headers values may be secret references.
type Telemetry struct {
	// Enabled turns telemetry on or off whatever the environment says
	// (nil: on when OTEL_EXPORTER_OTLP_ENDPOINT is set).
	Enabled *bool `json:"enabled,omitempty"`
	// Endpoint is the collector's base URL (http or https).
	Endpoint string `json:"endpoint,omitzero"`
	// Protocol is TelemetryHTTP (the default) or TelemetryGRPC.
	Protocol string `json:"protocol,omitzero"`
	// Headers are sent with every export; their values are secrets.
	Headers map[string]string `json:"headers,omitzero"`
	// ServiceName is service.name (default "acpgate").
	ServiceName string `json:"serviceName,omitzero"`
	// ResourceAttributes are added to every span's and metric's resource.
	ResourceAttributes map[string]string `json:"resourceAttributes,omitzero"`
	// Traces and Metrics are "otlp" (the default) or "none".
	Traces  string `json:"traces,omitzero"`
	Metrics string `json:"metrics,omitzero"`
	// LogContent opts in to prompts, model output, tool arguments and
	// results in span attributes (off: none of them leave).
	LogContent bool `json:"logContent,omitzero"`
	// MetricInterval is how often metrics are exported, in milliseconds
	// (0: 60000).
	MetricInterval int `json:"metricInterval,omitzero"`
}

// The telemetry protocols.
const (
	TelemetryHTTP = "http/protobuf"
	TelemetryGRPC = "grpc"
)

// Model holds the settings of the model endpoint. Empty fields are unset.
// APIKey and Headers values may be secret references, which this package
// keeps verbatim. A Model value is plain data: not safe for concurrent
// modification.
type Model struct {
	// Provider is the API the endpoint speaks, ProviderOpenAI or
	// ProviderAnthropic; "" infers it from BaseURL (see
	// ResolvedProvider).
	Provider string `json:"provider,omitzero"`
	// BaseURL is the endpoint, as http://127.0.0.1:11434/v1.
	BaseURL string `json:"baseUrl,omitzero"`
	// Model is the model name.
	Model string `json:"model,omitzero"`
	// APIKey is the API key or a reference to it.
	APIKey string `json:"apiKey,omitzero"`
	// Headers are extra HTTP headers sent with every request.
	Headers map[string]string `json:"headers,omitzero"`
	// ContextWindow is the model's context window in tokens (0: unknown).
	ContextWindow int `json:"contextWindow,omitzero"`
	// Choices are the other models of the same endpoint that a session's
	// model picker offers (next to Model and the endpoint's own list).
	Choices []ModelChoice `json:"choices,omitzero"`
	// Pricing is the price of Model's tokens; nil: unknown (no cost is
	// reported).
	Pricing *Pricing `json:"pricing,omitzero"`
	// PromptCacheKey says whether requests carry prompt_cache_key, the
	// session id (nil: only to OpenAI's API, api.openai.com).
	PromptCacheKey *bool `json:"promptCacheKey,omitempty"`
	// Thinking ("adaptive", "off"; "": the model's default) and
	// ThinkingBudget (>= 1024: extended thinking with this budget; 0:
	// unset) say how an Anthropic model thinks; other providers ignore
	// them.
	Thinking       string `json:"thinking,omitzero"`
	ThinkingBudget int    `json:"thinkingBudget,omitzero"`
	// Vision says whether the model takes images (nil: it does); Audio
	// whether it takes audio (nil: it does not; the anthropic provider
	// takes none). What the model does not take reaches it as a note.
	Vision *bool `json:"vision,omitempty"`
	Audio  *bool `json:"audio,omitempty"`
}

// Limits bounds what a session may use. A nil field is not set (the caller
// applies its default); 0 means off and is accepted for CallsPerMinute,
// ToolSearchThreshold, CompactAt (and the retired StartupGrace) only; the other fields are positive. Durations are in milliseconds. A
// Limits value is plain data: not safe for concurrent modification.
type Limits struct {
	// MaxServers bounds the MCP servers started per session (> 0).
	MaxServers *int `json:"maxServers,omitempty"`
	// MaxTools bounds the tools offered per session (> 0).
	MaxTools *int `json:"maxTools,omitempty"`
	// ToolSearchThreshold is how many tools the model sees before tool
	// search takes over (>= 0; 0: never).
	ToolSearchThreshold *int `json:"toolSearchThreshold,omitempty"`
	// CompactAt is the percentage of the model's context window a request
	// may fill before the conversation is compacted (0 to 100; 0: only
	// when the endpoint refuses a request as too long, or on demand).
	CompactAt *int `json:"compactAt,omitempty"`
	// CallsPerMinute limits the tool calls per server and minute (>= 0);
	// 0 disables the rate limit.
	CallsPerMinute *int `json:"callsPerMinute,omitempty"`
	// MaxResultBytes caps what the model sees of one tool result (> 0).
	MaxResultBytes *int `json:"maxResultBytes,omitempty"`
	// MaxStoredResultBytes bounds the copy of one tool result kept in the
	// session log (> 0); the client still sees the whole result live.
	MaxStoredResultBytes *int `json:"maxStoredResultBytes,omitempty"`
	// MaxInstructionsBytes bounds the instructions in a session's system
	// prompt (> 0): the configuration's and the AGENTS.md files',
	// together.
	MaxInstructionsBytes *int `json:"maxInstructionsBytes,omitempty"`
	// MaxSkillsBytes bounds the list of skills in a session's system
	// prompt (> 0): a longer list is not enumerated, and the model
	// searches it with load_skill instead.
	MaxSkillsBytes *int `json:"maxSkillsBytes,omitempty"`
	// MaxAnswerBytes bounds the text and thinking of one model answer
	// (> 0); MaxToolArgumentBytes the arguments of one tool call the model
	// makes (> 0).
	MaxAnswerBytes       *int `json:"maxAnswerBytes,omitempty"`
	MaxToolArgumentBytes *int `json:"maxToolArgumentBytes,omitempty"`
	// StartupBudget is how long, from a session's opening, its prompts and
	// commands wait for servers still connecting (> 0 ms).
	StartupBudget *int `json:"startupBudget,omitempty"`
	// StartupGrace is retired: it has no effect since session/new stopped
	// waiting for servers. It is still accepted (with a warning) so that
	// existing files load.
	StartupGrace *int `json:"startupGrace,omitempty"`
	// ConnectTimeout is the default connect timeout of a server (> 0 ms).
	ConnectTimeout *int `json:"connectTimeout,omitempty"`
	// CallTimeout is the default timeout of one tool call (> 0 ms).
	CallTimeout *int `json:"callTimeout,omitempty"`
	// SamplingMaxTokens caps the maxTokens of one sampling request of a
	// server (> 0); SamplingPerMinute bounds a server's sampling requests
	// per minute (>= 0; 0: no limit). A server's own settings win.
	SamplingMaxTokens *int `json:"samplingMaxTokens,omitempty"`
	SamplingPerMinute *int `json:"samplingPerMinute,omitempty"`
	// MaxImageBytes bounds one image or audio clip sent to the model, in
	// bytes of its decoded data (> 0; unset: the provider's documented
	// bound); MaxImages the images and audio clips of one model request
	// (> 0; unset: the provider's), the newest kept. Neither raises the
	// provider's bound.
	MaxImageBytes *int `json:"maxImageBytes,omitempty"`
	MaxImages     *int `json:"maxImages,omitempty"`
}

// SamplingMode says whether an MCP server may use the session's model.
type SamplingMode string

// The sampling modes.
const (
	// SamplingAsk asks the user each time (also in auto mode), unless the
	// server is trusted.
	SamplingAsk SamplingMode = "ask"
	// SamplingAllow answers without asking.
	SamplingAllow SamplingMode = "allow"
	// SamplingDeny refuses: the capability is not even declared.
	SamplingDeny SamplingMode = "deny"
)

// WorkspaceTools says where a session's workspace tools work.
type WorkspaceTools string

// The places workspace tools work.
const (
	// WorkspaceClient: through the ACP client, for what it advertises
	// (fs.readTextFile and fs.writeTextFile, terminal); a client that
	// advertises nothing gets no workspace tool.
	WorkspaceClient WorkspaceTools = "client"
	// WorkspaceLocal: through the client where it can, on the local file
	// system and os/exec where it cannot.
	WorkspaceLocal WorkspaceTools = "local"
	// WorkspaceOff: no workspace tool.
	WorkspaceOff WorkspaceTools = "off"
)

// ParseWorkspaceTools checks a workspace tools setting (as the
// --workspace-tools flag gives it): client, local or off.
func ParseWorkspaceTools(s string) (WorkspaceTools, error) {
	switch w := WorkspaceTools(s); w {
	case WorkspaceClient, WorkspaceLocal, WorkspaceOff:
		return w, nil
	}
	return "", fmt.Errorf("workspace tools must be client, local or off, not %q", s)
}

// Agents holds the "agents" object: the defaults and the profiles. It is
// plain data: not safe for concurrent modification.
type Agents struct {
	// Defaults apply to every profile, and alone to the "" profile.
	Defaults Defaults `json:"defaults,omitzero"`
	// List holds the profiles, in file order; their IDs are unique.
	List []Profile `json:"list,omitzero"`
}

// Defaults holds "agents.defaults": the default servers and tool policy. It
// is plain data: not safe for concurrent modification.
type Defaults struct {
	// MCP holds the default servers.
	MCP MCP `json:"mcp,omitzero"`
	// Tools is the default tool policy.
	Tools ToolPolicy `json:"tools,omitzero"`
	// Skills is the default skill policy.
	Skills SkillPolicy `json:"skills,omitzero"`
	// Sandboxes are the default sandbox policies.
	Sandboxes
}

// Sandboxes are the sandbox policies of a profile (or the defaults): nil
// is not set. A Sandboxes value is plain data.
type Sandboxes struct {
	// Sandbox is the policy of configured stdio servers that set none
	// (default off: the user chose them).
	Sandbox *sandbox.Policy `json:"sandbox,omitempty"`
	// ClientServerSandbox is the policy of the stdio servers a client
	// passes in session/new or session/load (default
	// DefaultClientServerSandbox).
	ClientServerSandbox *sandbox.Policy `json:"clientServerSandbox,omitempty"`
	// CommandSandbox is the policy of the local run tool's commands and
	// of hooks (default DefaultCommandSandbox).
	CommandSandbox *sandbox.Policy `json:"commandSandbox,omitempty"`
}

// MCP holds an "mcp" object: servers by name. It is plain data: not safe for
// concurrent modification.
type MCP struct {
	// Servers maps a server name to its settings.
	Servers map[string]Server `json:"servers,omitzero"`
}

// Profile is one entry of "agents.list". Its settings are merged over the
// defaults by [Config.Effective]. It is plain data: not safe for concurrent
// modification.
type Profile struct {
	// ID names the profile; it is non-empty and unique.
	ID string `json:"id"`
	// Model overrides the top-level model settings field by field.
	Model Model `json:"model,omitzero"`
	// MCP adds servers, replacing defaults of the same name.
	MCP MCP `json:"mcp,omitzero"`
	// Tools replaces the default tool policy list by list.
	Tools ToolPolicy `json:"tools,omitzero"`
	// Skills replaces the default skill policy list by list.
	Skills SkillPolicy `json:"skills,omitzero"`
	// Instructions are instructions for the model of the profile's
	// sessions, after the top-level ones ("": none).
	Instructions string `json:"instructions,omitzero"`
	// Sandboxes override the defaults' policies, each one it sets.
	Sandboxes
	// Hooks are hooks of the profile's sessions, after the top-level
	// ones (as Config.Hooks).
	Hooks json.RawMessage `json:"hooks,omitzero"`
}

// Transport names how acpgate reaches an MCP server.
type Transport string

// The transports a server may use.
const (
	// TransportStdio runs the server as a child process.
	TransportStdio Transport = "stdio"
	// TransportHTTP is MCP streamable HTTP.
	TransportHTTP Transport = "http"
	// TransportSSE is the legacy HTTP+SSE transport.
	TransportSSE Transport = "sse"
)

// DefaultMaxRestarts is the restart bound of a server that sets none.
const DefaultMaxRestarts = 5

// Server is one MCP server's settings. In a [Config], unset fields are zero
// or nil, and Transport is "" unless the file names one ("type" is folded
// into Transport). [Config.Effective] fills in Transport, Enabled,
// RestartOnCrash and MaxRestarts. Env and Headers values may be secret
// references, which this package keeps verbatim. A Server value is plain
// data: not safe for concurrent modification.
type Server struct {
	// Enabled is false for a server kept out of sessions; nil means true.
	Enabled *bool `json:"enabled,omitempty"`
	// Transport is stdio, http or sse; "" means inferred (see ResolvedTransport).
	Transport Transport `json:"transport,omitzero"`
	// Command, Args, Env and Cwd describe a stdio server.
	Command string            `json:"command,omitzero"`
	Args    []string          `json:"args,omitzero"`
	Env     map[string]string `json:"env,omitzero"`
	Cwd     string            `json:"cwd,omitzero"`
	// URL and Headers describe an http or sse server.
	URL     string            `json:"url,omitzero"`
	Headers map[string]string `json:"headers,omitzero"`
	// Timeout is the connect timeout in milliseconds; 0 means unset.
	Timeout int `json:"timeout,omitzero"`
	// ToolTimeout is the tool-call timeout in milliseconds; 0 means unset.
	ToolTimeout int `json:"toolTimeout,omitzero"`
	// RestartOnCrash is false for a server never restarted; nil means true.
	RestartOnCrash *bool `json:"restartOnCrash,omitempty"`
	// MaxRestarts bounds consecutive restarts (>= 0); nil means
	// DefaultMaxRestarts and 0 never restarts.
	MaxRestarts *int `json:"maxRestarts,omitempty"`
	// ToolPrefix replaces the server name in the names of its tools.
	ToolPrefix string `json:"toolPrefix,omitzero"`
	// Trusted marks a server whose tools run without asking.
	Trusted bool `json:"trusted,omitzero"`
	// Shared runs one instance per agent process instead of one per session.
	Shared bool `json:"shared,omitzero"`
	// AllowInsecureHTTP allows plain http to a host other than loopback.
	AllowInsecureHTTP bool `json:"allowInsecureHttp,omitzero"`
	// Sampling overrides the top-level sampling mode for this server ("":
	// not set).
	Sampling SamplingMode `json:"sampling,omitzero"`
	// SamplingMaxTokens (> 0) and SamplingPerMinute (>= 0; 0: no limit)
	// override the limits of the same names for this server; nil: not set.
	SamplingMaxTokens *int `json:"samplingMaxTokens,omitempty"`
	SamplingPerMinute *int `json:"samplingPerMinute,omitempty"`
	// OAuth configures sign-in to an http or sse server; nil means sign-in
	// with the defaults when the server asks for it (a 401).
	OAuth *OAuth `json:"oauth,omitempty"`
	// Sandbox is the sandbox policy of a stdio server; nil means the
	// profile's "sandbox".
	Sandbox *sandbox.Policy `json:"sandbox,omitempty"`
}

// OAuth is a server's "oauth" key: false (Disabled) keeps the server to
// its static headers; an object configures how acpgate signs in. Every
// field is optional. ClientSecret, PrivateKey and IdentityAssertion are
// secret references (a literal value draws a warning).
type OAuth struct {
	// Disabled is "oauth": false ("oauth": true is the defaults).
	Disabled bool `json:"-"`
	// ClientID and ClientSecret identify a client registered for this
	// server by hand (else CIMD or dynamic registration are used).
	ClientID     string `json:"clientId,omitzero"`
	ClientSecret string `json:"clientSecret,omitzero"`
	// Scopes are asked for instead of what the server advertises.
	Scopes []string `json:"scopes,omitzero"`
	// ClientMetadataURL is this client's Client ID Metadata Document URL.
	ClientMetadataURL string `json:"clientMetadataUrl,omitzero"`
	// GrantType is authorization_code (default) or client_credentials.
	GrantType string `json:"grantType,omitzero"`
	// TokenEndpointAuthMethod is client_secret_basic, client_secret_post,
	// none or private_key_jwt.
	TokenEndpointAuthMethod string `json:"tokenEndpointAuthMethod,omitzero"`
	// PrivateKey (a PEM) and SigningAlgorithm are for private_key_jwt.
	PrivateKey       string `json:"privateKey,omitzero"`
	SigningAlgorithm string `json:"signingAlgorithm,omitzero"`
	// DeviceCode asks for the device authorization grant where the
	// authorization server supports it.
	DeviceCode bool `json:"deviceCode,omitzero"`
	// IdentityAssertion, IDPClientID, IDPIssuer and IDPTokenEndpoint
	// configure cross-app access (token exchange, then a JWT bearer grant).
	IdentityAssertion string `json:"identityAssertion,omitzero"`
	IDPClientID       string `json:"idpClientId,omitzero"`
	IDPIssuer         string `json:"idpIssuer,omitzero"`
	IDPTokenEndpoint  string `json:"idpTokenEndpoint,omitzero"`
	// WorkloadToken is where grantType
	// "urn:ietf:params:oauth:grant-type:jwt-bearer" (workload identity
	// federation) reads the workload's token, afresh for each grant.
	WorkloadToken *WorkloadToken `json:"workloadToken,omitempty"`
	// DPoP binds tokens to a key of acpgate's (RFC 9449): true always,
	// false never; absent, once the server challenges with the DPoP
	// scheme.
	DPoP *bool `json:"dpop,omitempty"`
	// Issuer is the authorization server the configured client belongs
	// to (default: the first one it is used with); it is never used at
	// another.
	Issuer string `json:"issuer,omitzero"`
	// SameOriginTokenEndpoint refuses a token endpoint on another origin
	// than its issuer (default false: used, with a warning in the log).
	SameOriginTokenEndpoint bool `json:"sameOriginTokenEndpoint,omitzero"`
}

// WorkloadToken is the source of a workload identity token: a file (as a
// platform mounts one) or a command that prints it (argv, run without a
// shell). Exactly one is set.
type WorkloadToken struct {
	File    string   `json:"file,omitzero"`
	Command []string `json:"command,omitzero"`
}

// oauthFields is OAuth without its methods, for encoding/json.
type oauthFields OAuth

// UnmarshalJSON decodes false as Disabled, true as the defaults and an
// object as the settings. Like encoding/json for plain fields, it keeps
// what fits and goes on past a value of the wrong type (the schema reports
// those): an error here would stop decoding the rest of the file.
func (o *OAuth) UnmarshalJSON(data []byte) error {
	var on bool
	if err := json.Unmarshal(data, &on); err == nil {
		*o = OAuth{Disabled: !on}
		return nil
	}
	var te *json.UnmarshalTypeError
	if err := json.Unmarshal(data, (*oauthFields)(o)); err != nil && !errors.As(err, &te) {
		return err
	}
	return nil
}

// MarshalJSON encodes Disabled as false.
func (o OAuth) MarshalJSON() ([]byte, error) {
	if o.Disabled {
		return []byte("false"), nil
	}
	return json.Marshal(oauthFields(o))
}

// IsEnabled reports whether the server is enabled (Enabled nil or true).
func (s Server) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

// ResolvedTransport returns Transport, or, when it is empty, http for a
// server with a URL and no command and stdio otherwise.
func (s Server) ResolvedTransport() Transport {
	if s.Transport != "" {
		return s.Transport
	}
	if t := mcpservers.Infer(s.Command != "", s.URL != ""); t != "" {
		return Transport(t)
	}
	return TransportStdio
}

// Warning is a problem of a configuration file that does not prevent its
// use, such as an unknown key. It is plain data.
type Warning struct {
	// Path is the JSON path of the offending value, as mcpServers.fs.env.TOKEN.
	Path string
	// Message says what is wrong.
	Message string
}

// String returns "path: message" (only the message when Path is empty).
func (w Warning) String() string {
	if w.Path == "" {
		return w.Message
	}
	return w.Path + ": " + w.Message
}

// FieldError is one validation error, at a JSON path. Err, when set, is the
// underlying error (such as path.ErrBadPattern), returned by Unwrap. It is
// plain data.
type FieldError struct {
	// Path is the JSON path of the offending value, as agents.list[0].id.
	Path string
	// Message says what is wrong, as `missing`.
	Message string
	// Err is the underlying error, or nil.
	Err error
}

// Error returns "path: message" (only the message when Path is empty).
func (e *FieldError) Error() string {
	if e.Path == "" {
		return e.Message
	}
	return e.Path + ": " + e.Message
}

// Unwrap returns the underlying error, or nil.
func (e *FieldError) Unwrap() error { return e.Err }

// DefaultPath returns the default location of the configuration file:
// config.json in [Dir]. It reads the environment and is safe for
// concurrent use.
func DefaultPath() (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", fmt.Errorf("locating the configuration file: %w", err)
	}
	return filepath.Join(dir, "config.json"), nil
}

// Dir returns acpgate's configuration directory, where the default
// configuration file and the user's AGENTS.md live:
// $XDG_CONFIG_HOME/acpgate when XDG_CONFIG_HOME is an absolute path, else
// ~/.config/acpgate. It reads the environment and is safe for concurrent
// use.
func Dir() (string, error) {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "acpgate"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".config", "acpgate"), nil
}

// MaxFileBytes bounds the configuration file's size.
const MaxFileBytes = 16 << 20

// ReadFile reads the configuration file at path: a regular file (a named
// pipe, a device or a socket is refused with an error wrapping
// safefile.ErrNotRegular, without waiting on it) of at most MaxFileBytes
// (safefile.ErrTooLarge). Every reader of the configuration file reads it
// with ReadFile.
func ReadFile(path string) ([]byte, error) { return safefile.ReadFile(path, MaxFileBytes, true) }

// Load reads and parses the configuration file at path (see [Parse]; the
// path is the source named by syntax errors). A missing file yields an empty
// configuration when mustExist is false, and an error naming the path
// otherwise. On a validation error the warnings found are still returned.
// Load is safe for concurrent use.
func Load(path string, mustExist bool) (*Config, []Warning, error) {
	data, err := ReadFile(path)
	if err != nil {
		if !mustExist && errors.Is(err, fs.ErrNotExist) {
			return &Config{}, nil, nil
		}
		return nil, nil, fmt.Errorf("reading the configuration: %w", err)
	}
	return Parse(data, path)
}
