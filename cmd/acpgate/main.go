// Command acpgate is an ACP agent: editors launch it and speak the Agent
// Client Protocol to it over stdin and stdout. The MCP servers a client
// passes to a session are connected for that session only, their tools are
// offered to the model, and every process is torn down when the session
// ends. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/hooks"
	"github.com/acpgate/acpgate/mcpclient/oauth"

	"github.com/lmittmann/tint"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/cmd/internal/tty"
	"github.com/acpgate/acpgate/gateway/sysprompt"
	"github.com/acpgate/acpgate/internal/base/nodump"
	"github.com/acpgate/acpgate/internal/base/sandbox"
	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/internal/inputs/secrets"
	"github.com/acpgate/acpgate/session"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// cliConfig is what the command line and environment say.
type cliConfig struct {
	stateDir, logLevel, logFile, logFormat string
	model, baseURL, apiKey                 string
	configPath, profile                    string
	workspaceTools                         config.WorkspaceTools // "": the file's
	startupBudget                          time.Duration
	// provider is --provider; apiKey is OPENAI_API_KEY, anthropicKey
	// ANTHROPIC_API_KEY.
	provider, anthropicKey string
	// graceSet: the retired --startup-grace was given (logged at start).
	graceSet    bool
	showVersion bool
	// setup: the arguments ended with `setup ...` (the terminal auth
	// method appends it to the editor's command line); setupArgs follow it.
	setup     bool
	setupArgs []string
}

func parseFlags(args []string, getenv func(string) string) (cliConfig, error) {
	var c cliConfig
	fs := flag.NewFlagSet("acpgate", flag.ContinueOnError)
	fs.StringVar(&c.stateDir, "state-dir", "", "where sessions are stored (default $XDG_STATE_HOME/acpgate, else ~/.local/state/acpgate)")
	fs.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.logFile, "log-file", "", "write logs to this file instead of stderr")
	fs.StringVar(&c.logFormat, "log-format", "text", "text or json")
	fs.StringVar(&c.model, "model", getenv("ACPGATE_MODEL"), "model name (env ACPGATE_MODEL); none: prompts explain how to configure one")
	fs.StringVar(&c.baseURL, "base-url", getenv("OPENAI_BASE_URL"), "model API base URL (env OPENAI_BASE_URL; default "+gateway.OpenAIBaseURL+", or "+gateway.AnthropicBaseURL+" for anthropic)")
	fs.Func("provider", "the API the model endpoint speaks: openai (OpenAI-compatible Chat Completions) or anthropic (Anthropic's Messages API); default: the configuration's, else anthropic for a base URL on api.anthropic.com, else openai", func(s string) error {
		if s != config.ProviderOpenAI && s != config.ProviderAnthropic {
			return fmt.Errorf("want %s or %s, not %q", config.ProviderOpenAI, config.ProviderAnthropic, s)
		}
		c.provider = s
		return nil
	})
	fs.DurationVar(&c.startupBudget, "startup-budget", 5*time.Second, "how long after a session opens its prompts and commands wait for MCP servers still connecting (they keep connecting)")
	fs.Func("startup-grace", "retired: no effect (session/new no longer waits for servers); accepted so that existing settings still start", func(s string) error {
		if _, err := time.ParseDuration(s); err != nil {
			return err
		}
		c.graceSet = true
		return nil
	})
	fs.StringVar(&c.configPath, "config", "", "configuration file (default $XDG_CONFIG_HOME/acpgate/config.json, else ~/.config/acpgate/config.json; a missing default file is fine)")
	fs.StringVar(&c.profile, "profile", "", "agent profile (agents.list[].id) for sessions that name none in _meta.profile")
	fs.Func("workspace-tools", "where the workspace tools work: client (through the editor, for what it offers), local (locally where the editor cannot) or off (default: the file's workspaceTools, else client)", func(s string) error {
		w, err := config.ParseWorkspaceTools(s)
		c.workspaceTools = w
		return err
	})
	fs.BoolVar(&c.showVersion, "version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.Arg(0) == setupArg {
		c.setup, c.setupArgs = true, fs.Args()[1:]
	} else if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	c.apiKey, c.anthropicKey = getenv("OPENAI_API_KEY"), getenv("ANTHROPIC_API_KEY")
	switch c.logFormat {
	case "text", "json":
	default:
		return c, fmt.Errorf("--log-format must be text or json, not %q", c.logFormat)
	}
	return c, nil
}

// newLogger builds the logger: tint on stderr (colour only on a terminal),
// or JSON, or a log file.
func newLogger(c cliConfig, red *secrets.Redactor) (*slog.Logger, io.Closer, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return nil, nil, fmt.Errorf("--log-level: %w", err)
	}
	var w io.Writer = os.Stderr
	var closer io.Closer = io.NopCloser(nil)
	color := tty.IsTerminal(os.Stderr)
	if c.logFile != "" {
		f, err := os.OpenFile(c.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("--log-file: %w", err)
		}
		w, closer, color = f, f, false
	}
	if c.logFormat == "json" {
		return slog.New(red.Handler(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))), closer, nil
	}
	return slog.New(red.Handler(tint.NewTextHandler(w, &tint.Options{Level: level, NoColor: !color}))), closer, nil
}

// watchdogArg is the hidden first argument that makes acpgate the
// watchdog of its parent (see package watchdog).
const watchdogArg = "__acpgate-watchdog"

func run(args []string) int {
	if sandbox.IsLaunch(args) {
		// The sandbox launcher: confine, then become the command (see
		// package sandbox). Nothing of the agent runs.
		return sandbox.Main(args[1:], os.Stderr)
	}
	// First of all: no process of the same user, the MCP servers and
	// commands acpgate starts included, may read its memory or its
	// environment (the API keys) through /proc (internal/base/nodump).
	nodumpErr := nodump.Protect()
	if len(args) > 0 && args[0] == "config" {
		return configCommand(args[1:], os.Stdout, os.Stderr)
	}
	if len(args) > 0 && args[0] == setupArg {
		return setupCommand(args[1:], "", os.Stdin, os.Stdout, os.Stderr)
	}
	if len(args) > 0 && args[0] == watchdogArg {
		return runWatchdog()
	}
	c, err := parseFlags(args, os.Getenv)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "acpgate:", err)
		return 2
	}
	if c.showVersion {
		fmt.Fprintln(os.Stdout, versionLine(version, commit, buildInfo()))
		return 0
	}
	if c.setup {
		return setupCommand(c.setupArgs, c.configPath, os.Stdin, os.Stdout, os.Stderr)
	}
	// Every secret resolved from here on is redacted from the logs and
	// from everything sent to the client.
	redactor := secrets.NewRedactor()
	logger, closer, err := newLogger(c, redactor)
	if err != nil {
		fmt.Fprintln(os.Stderr, "acpgate:", err)
		return 2
	}
	defer closer.Close()
	// Libraries that log through the default logger (mcp-go does) must
	// not reach stdout, which is the protocol.
	slog.SetDefault(logger)
	if nodumpErr != nil && !errors.Is(nodumpErr, nodump.ErrUnsupported) {
		logger.Warn("processes of the same user can read acpgate's environment", "err", nodumpErr)
	}
	if path := os.Getenv(cpuProfileEnv); path != "" {
		stop, err := startCPUProfile(path)
		if err != nil {
			logger.Error("CPU profile", "err", err)
		} else {
			defer func() {
				if err := stop(); err != nil {
					logger.Error("CPU profile", "err", err)
				}
			}()
		}
	}
	code := serve(c, redactor, logger)
	if path := os.Getenv(memProfileEnv); path != "" {
		if err := writeMemProfile(path); err != nil {
			logger.Error("memory profile", "err", err)
		}
	}
	return code
}

// serve loads the configuration and the store and runs the agent on
// stdin and stdout until the client leaves or a signal arrives.
func serve(c cliConfig, redactor *secrets.Redactor, logger *slog.Logger) int {
	// The watchdog starts in the background, first: it must be up before
	// the first MCP server starts, and the client's first request does
	// not wait for it.
	guard := startGuard(logger)
	defer guard.close(logger)
	cfg, warnings, cfgPath, err := loadConfig(c.configPath)
	if errors.Is(err, errNoDefaultConfig) {
		// initialize must succeed anyway (the ACP registry's check runs
		// agents in a bare environment).
		logger.Warn("no configuration file: give --config or set HOME", "err", err)
		cfg, err = &config.Config{}, nil
	}
	logWarnings(logger, warnings)
	if c.graceSet {
		logger.Warn("--startup-grace is retired and has no effect: session/new answers at once and prompts wait for connecting servers within --startup-budget")
	}
	if err != nil {
		logger.Error("configuration", "file", cfgPath, "err", err)
		return 1
	}
	eff, err := cfg.Effective(c.profile)
	if err != nil {
		logger.Error("configuration", "file", cfgPath, "err", err)
		return 1
	}
	live := newLiveConfig(cfg)
	resolver := &secrets.Resolver{Redactor: redactor}
	for _, key := range []string{c.apiKey, c.anthropicKey} {
		if key != "" {
			redactor.Register(key)
		}
	}
	models := newModels(c, resolver, logger)
	store, dir, temporary, err := openStore(c.stateDir, logger)
	if err != nil {
		logger.Error("opening the session store", "dir", dir, "err", err)
		return 1
	}
	if temporary {
		defer os.RemoveAll(dir)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	tel, stopTelemetry := startTelemetry(ctx, cfg.Telemetry, resolver, redactor, logger)
	defer stopTelemetry()
	if cfgPath != "" {
		go live.watch(ctx, cfgPath, logger)
	}
	// The model picker's list, in the background: building the provider
	// may resolve secrets (gcloud, vault, ...), which initialize must not
	// wait for.
	go models.prefetch(ctx, eff.Model)
	logger.Info("acpgate starting", "version", version, "state_dir", dir, "config", cfgPath, "profile", c.profile, "model", models.settings(eff.Model).Model)
	if !modelProviders {
		logger.Info("built without model providers (the nomodels tag, make demo's build): prompts for a model fail; make build builds them")
	}
	opts := acp.Options{
		Name: "acpgate", Version: version,
		Store: store, Models: models, Logger: logger,
		NoModelMessage: noModelMessage, StartupBudget: c.startupBudget,
		Config: live.get, ConfigChanged: live.changed, Profile: c.profile, Secrets: resolver,
		WorkspaceTools: c.workspaceTools, WorkspaceEnv: commandEnv(os.Environ()),
		TerminalAuth: setupMethod(), Telemetry: tel,
	}
	if dir, err := config.Dir(); err == nil {
		opts.UserInstructions = filepath.Join(dir, sysprompt.FileName)
		opts.UserSkills = []string{filepath.Join(dir, "skills")}
	}
	opts.MCP.Guard = guard
	opts.MCP.Sandbox = newLauncher(c.stateDir) // stdio servers and the local run tool
	opts.MCP.Telemetry = tel
	// Tokens of servers that need a sign-in live next to the sessions,
	// one file per server, authorization server and client (mode 0600),
	// and are redacted like every other secret.
	opts.MCP.OAuthStore = oauth.NewStore(filepath.Join(dir, "oauth"))
	// The user's answers about projects' hooks (docs/hooks.md).
	opts.HookTrust = hooks.NewTrustStore(filepath.Join(dir, "hooks-trust.json"))
	opts.MCP.OAuthSecret = func(v string) { redactor.Register(v) }
	opts.MCP.RunCommand = secrets.RunCommandLimit                     // workload identity tokens printed by a command
	if err := acp.Serve(ctx, os.Stdin, os.Stdout, opts); err != nil { // redacts every frame (Options.Secrets)
		logger.Error("shutting down", "err", err)
	}
	logger.Info("acpgate stopped")
	return 0
}

// commandEnv is the environment of the commands the local run_command
// runs: acpgate's own without the models' API keys and without the
// OTEL_* variables (acpgate's telemetry settings, the collector's headers
// among them, are not the commands'; claude-code#45644 is that leak).
func commandEnv(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return strings.HasPrefix(kv, "OPENAI_API_KEY=") || strings.HasPrefix(kv, "ANTHROPIC_API_KEY=") || strings.HasPrefix(kv, "OTEL_")
	})
}

// openStore opens the session store in dir, or in the default state
// directory when dir is "", and says which directory it used. When the
// default directory is unusable (no HOME, a read-only one), the store is
// a new temporary directory, which the caller removes at exit
// (temporary), with a warning: acpgate still serves (the ACP registry's
// check runs agents in a bare environment).
func openStore(dir string, logger *slog.Logger) (store *session.Store, used string, temporary bool, err error) {
	if dir != "" {
		store, err = session.Open(dir)
		return store, dir, false, err
	}
	if dir, err = session.DefaultDir(); err == nil {
		if store, err = session.Open(dir); err == nil {
			return store, dir, false, nil
		}
	}
	tmp, terr := os.MkdirTemp("", "acpgate-state-")
	if terr != nil {
		return nil, dir, false, errors.Join(err, terr)
	}
	logger.Warn("no usable state directory: sessions last until acpgate exits; give --state-dir or set HOME", "err", err, "dir", tmp)
	store, err = session.Open(tmp)
	return store, tmp, true, err
}

// setupMethodName is the name of the terminal auth method, which the
// no-model message points to.
const setupMethodName = "Set up a model provider"

// setupMethod is the terminal auth method offered to editors that can run
// one: `acpgate setup` in a terminal.
func setupMethod() *acp.TerminalAuth {
	exe, _ := os.Executable() // "": no legacy _meta form
	return &acp.TerminalAuth{
		ID:          "setup",
		Name:        setupMethodName,
		Description: "Choose a model provider (OpenAI, Anthropic, OpenRouter, Gemini, Ollama, LM Studio or any OpenAI-compatible URL), its API key and default model; acpgate needs no sign-in otherwise",
		Args:        []string{setupArg},
		Command:     exe,
	}
}

const noModelMessage = "No model is set up, so I cannot answer prompts. To set one up, run `acpgate setup` in a terminal once: " +
	"it asks for the provider (OpenAI, Anthropic, OpenRouter, Google Gemini, a local Ollama or LM Studio, or any OpenAI-compatible URL), " +
	"the API key and the model, and saves them. An editor with terminal sign-in runs it for you: choose \"" + setupMethodName + "\". " +
	"Or start acpgate with `--model NAME` (and `--base-url URL`, OPENAI_API_KEY; or `--provider anthropic` and ANTHROPIC_API_KEY). " +
	"Without a model the slash commands still work: /mcp shows the MCP servers, /tools lists their tools, " +
	"and /call <tool> <json-arguments> calls one."

func main() { os.Exit(run(os.Args[1:])) }
