// Command harness is the client command the MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in ../package-lock.json) runs
// for each client scenario. The suite starts the scenario's servers and
// runs `harness <server-url>` with MCP_CONFORMANCE_SCENARIO (and, for some
// scenarios, MCP_CONFORMANCE_CONTEXT) in the environment; the scenario's
// checks are what its servers saw.
//
// The harness tests acpgate as an editor uses it: it starts acpgate (the
// binary given with -acpgate or $ACPGATE_BIN), speaks ACP to it with the
// SDK's ClientSideConnection, advertises form and URL elicitation, opens a
// session with the scenario's server (in session/new, or in acpgate's
// configuration file when the scenario needs `oauth` keys, see plan.go),
// lists the tools with `/tools` and calls the scenario's tools with
// `/call` (or, where the argument is a tool's schema as a model sees it,
// asks a fake model that acpgate is given, see model.go), then closes the
// session and acpgate. URL elicitations (sign-in)
// are followed like a browser would, with redirects, to acpgate's loopback
// listener; form elicitations are accepted.
//
// It exits 0 when the session opened and every call completed, 1 otherwise
// (some scenarios expect the client to fail), 2 on usage errors. Its own
// log and acpgate's go to stderr. It only contacts loopback hosts.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/base/agentproc"
	"github.com/acpgate/acpgate/mcpclient"
)

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

// stopGrace is how long acpgate gets to exit after its stdin closes.
const stopGrace = 10 * time.Second

// startupBudget is acpgate's --startup-budget: how long a /call waits for
// the server (and the harness for its state after session/new). Longer than acpgate's default, because the
// suite runs every scenario at once: on a loaded machine a local server
// can take seconds to connect.
const startupBudget = 15 * time.Second

// options is the parsed command line and environment.
type options struct {
	acpgate   string
	timeout   time.Duration
	logLevel  string
	serverURL string
	scenario  string
	context   string
}

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

// run is main without the os.Exit.
func run(args []string, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("harness", true)
	opts, err := parseOptions(args)
	if err != nil {
		log.Error("usage", "err", err)
		return exitUsage
	}
	p, err := planFor(opts.scenario, opts.context)
	if err != nil {
		log.Error("scenario context", "err", err)
		return exitUsage
	}
	// The suite kills a client that overruns its --timeout with SIGTERM:
	// close acpgate and clean up then too.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, opts.timeout)
	defer cancel()
	if err := session(ctx, opts, p, log, stderr); err != nil {
		log.Error("scenario failed", "scenario", opts.scenario, "err", err)
		return exitFailed
	}
	log.Info("scenario done", "scenario", opts.scenario)
	return exitOK
}

// parseOptions reads the flags, the server URL (the last argument, added
// by the suite) and the suite's environment variables.
func parseOptions(args []string) (options, error) {
	fs := flag.NewFlagSet("harness", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	opts := options{scenario: os.Getenv("MCP_CONFORMANCE_SCENARIO"), context: os.Getenv("MCP_CONFORMANCE_CONTEXT")}
	fs.StringVar(&opts.acpgate, "acpgate", os.Getenv("ACPGATE_BIN"), "the acpgate binary (default $ACPGATE_BIN)")
	fs.DurationVar(&opts.timeout, "timeout", 20*time.Second, "time limit for the whole scenario (keep it under the suite's --timeout)")
	fs.StringVar(&opts.logLevel, "log-level", "debug", "acpgate's --log-level")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() != 1 {
		return options{}, fmt.Errorf("want exactly one argument, the server URL; got %q", fs.Args())
	}
	opts.serverURL = fs.Arg(0)
	if opts.acpgate == "" {
		return options{}, errors.New("no acpgate binary: pass -acpgate or set ACPGATE_BIN")
	}
	if opts.scenario == "" {
		return options{}, errors.New("MCP_CONFORMANCE_SCENARIO is not set (the suite sets it)")
	}
	return opts, nil
}

// session runs plan p against a fresh acpgate and returns why it failed.
func session(ctx context.Context, opts options, p plan, log *slog.Logger, stderr io.Writer) error {
	dir, err := os.MkdirTemp("", "acpgate-conformance-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg, err := p.configFile(opts.serverURL)
	if err != nil {
		return err
	}
	cfgPath := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		return err
	}
	// An explicit --config, so the user's own configuration never applies.
	args := []string{"--state-dir", filepath.Join(dir, "state"), "--config", cfgPath,
		"--log-level", opts.logLevel, "--startup-budget", startupBudget.String()}
	env := append(os.Environ(), p.env...)
	if p.model != nil {
		llm := p.model.start()
		defer llm.Close()
		args = append(args, "--model", modelName, "--base-url", llm.URL)
		env = append(env, "OPENAI_API_KEY=sk-conformance-fake")
	}
	cmd := exec.Command(opts.acpgate, args...)
	cmd.Env = env
	cmd.Stderr = stderr
	agent, err := agentproc.Start(cmd)
	if err != nil {
		return err
	}
	defer stopAgent(agent, log)

	c := newClient(log, opts.timeout)
	conn := acp.NewClientSideConnection(c, agent.Stdin, agent.Stdout)
	conn.SetLogger(log)
	sid, err := open(ctx, conn, c, opts, p, dir, log)
	if err != nil {
		return err
	}
	err = turns(ctx, conn, c, sid, p, log)
	if _, cerr := conn.CloseSession(ctx, acp.CloseSessionRequest{SessionId: sid}); cerr != nil && err == nil {
		err = fmt.Errorf("session/close: %w", cerr)
	}
	c.closeFollows()
	return err
}

// completeBound bounds the wait for a sign-in's completion after its URL
// was followed.
const completeBound = 5 * time.Second

// open initializes the connection and opens the session; when the plan
// needs an interactive sign-in and the server waits for one, it waits
// until a URL elicitation has been followed.
func open(ctx context.Context, conn *acp.ClientSideConnection, c *client, opts options, p plan, dir string, log *slog.Logger) (acp.SessionId, error) {
	_, err := conn.Initialize(ctx, acp.InitializeRequest{
		ProtocolVersion: acp.ProtocolVersionNumber,
		ClientInfo:      &acp.Implementation{Name: "acpgate-conformance-harness", Version: "1"},
		ClientCapabilities: acp.ClientCapabilities{Elicitation: &acp.ElicitationCapabilities{
			Form: &acp.ElicitationFormCapabilities{}, Url: &acp.ElicitationUrlCapabilities{},
		}},
	})
	if err != nil {
		return "", fmt.Errorf("initialize: %w", err)
	}
	servers := []acp.McpServer{}
	if p.oauth == nil {
		servers = append(servers, acp.McpServer{Http: &acp.McpServerHttpInline{
			Name: serverName, Url: opts.serverURL, Headers: []acp.HttpHeader{}, Type: "http",
		}})
	}
	resp, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: dir, McpServers: servers})
	if err != nil {
		return "", fmt.Errorf("session/new: %w", err)
	}
	// session/new answers while the server connects; its state follows
	// in session_info_updates (within the startup budget).
	sctx, cancel := context.WithTimeout(ctx, startupBudget)
	state := c.settledState(sctx, serverState(resp.Meta))
	cancel()
	log.Info("session opened", "session", resp.SessionId, "server_state", state, "meta", resp.Meta)
	if p.signIn && awaitsSignIn(state) {
		if _, err := c.waitFollowed(ctx, 1); err != nil {
			return "", err
		}
		// The server joins once the token is exchanged and it has
		// reconnected: acpgate then completes the elicitation. A sign-in
		// that fails (on purpose, in some scenarios) never does, hence
		// the bound.
		wctx, cancel := context.WithTimeout(ctx, completeBound)
		ok := c.waitCompleted(wctx, 1)
		cancel()
		log.Info("sign-in completed", "completed", ok)
	}
	return resp.SessionId, nil
}

// turns lists the tools and makes the plan's calls, one prompt each; it
// fails when a call does not complete (unless it may fail).
func turns(ctx context.Context, conn *acp.ClientSideConnection, c *client, sid acp.SessionId, p plan, log *slog.Logger) error {
	if err := prompt(ctx, conn, sid, "/tools"); err != nil {
		return err
	}
	c.turnDone()
	var failed error
	for _, call := range p.calls {
		text, err := call.promptText()
		if err != nil {
			return err
		}
		err = prompt(ctx, conn, sid, text)
		if err == nil {
			err = callOutcome(call.label(), c.turnDone())
		}
		switch {
		case err != nil && call.mayFail:
			log.Info("a prompt that may fail failed", "prompt", call.label(), "err", err)
		case err != nil && ctx.Err() != nil:
			return err
		case err != nil && failed == nil:
			failed = err
		}
	}
	return failed
}

// promptText is the prompt that makes call.
func (c call) promptText() (string, error) {
	if c.text != "" {
		return c.text, nil
	}
	args, err := jsonText(c.args)
	if err != nil {
		return "", err
	}
	name := c.tool
	if !c.builtin {
		name = bridgedName(c.tool)
	}
	return "/call " + name + " " + args, nil
}

// prompt sends one text prompt and waits for the turn to end.
func prompt(ctx context.Context, conn *acp.ClientSideConnection, sid acp.SessionId, text string) error {
	resp, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sid, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
	if err != nil {
		return fmt.Errorf("prompt %q: %w", text, err)
	}
	if resp.StopReason != acp.StopReasonEndTurn {
		return fmt.Errorf("prompt %q: stop reason %q", text, resp.StopReason)
	}
	return nil
}

// callOutcome says whether the turn that called tool made a tool call
// that completed, and no tool call of it failed. (A turn may also show a
// card, such as "still connecting", that another turn closes.)
func callOutcome(label string, calls map[acp.ToolCallId]acp.ToolCallStatus) error {
	completed := false
	for id, st := range calls {
		switch st {
		case acp.ToolCallStatusFailed:
			return fmt.Errorf("%s: tool call %s failed", label, id)
		case acp.ToolCallStatusCompleted:
			completed = true
		}
	}
	if !completed {
		return fmt.Errorf("%s: no tool call completed (is the server connected?)", label)
	}
	return nil
}

// serverState is the state acpgate reports for the scenario's server in
// the session/new response's _meta.acpgate.mcpServers ("" if absent).
func serverState(meta map[string]any) mcpclient.State {
	a, _ := meta["acpgate"].(map[string]any)
	list, _ := a["mcpServers"].([]any)
	for _, e := range list {
		m, _ := e.(map[string]any)
		if name, _ := m["name"].(string); name == serverName {
			st, _ := m["state"].(string)
			return mcpclient.State(st)
		}
	}
	return ""
}

// awaitsSignIn reports whether a server in state st waits for the user:
// it is neither ready, connecting (a /call waits for it), restarting nor
// given up on.
func awaitsSignIn(st mcpclient.State) bool {
	switch st {
	case mcpclient.StateReady, mcpclient.StateConnecting, mcpclient.StateRestarting, mcpclient.StateFailed, mcpclient.StateClosed, "":
		return false
	}
	return true
}
