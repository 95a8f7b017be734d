// Command acpcli is a command-line Agent Client Protocol (ACP) client for
// testing ACP agents. It spawns an agent, speaks ACP with it over the
// agent's stdin and stdout, opens a session (passing it MCP servers) and
// sends prompts: the positional arguments as one prompt, or else each line
// of stdin.
//
// Usage:
//
//	acpcli [flags] [prompt words...]
//
// Agent text streams to stdout; tool calls are shown there too. Thoughts,
// plans, commands, modes, permission decisions and "[stop: <reason>]" go to
// stderr, as does the agent's own stderr. With --json, stdout carries each
// session/update notification's params as one JSON line and a
// {"stopReason": "..."} line at the end of each turn.
//
// Exit codes: 0 when every turn ended normally (end_turn, max_tokens,
// max_turn_requests, refusal), 1 when a request failed or timed out, 2 for
// usage errors, 3 when the agent died or the connection closed
// unexpectedly, 130 on SIGINT (the first one cancels the turn and waits for
// it to end; a second one quits at once).
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
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/cmd/internal/tty"
	"github.com/acpgate/acpgate/internal/inputs/mcpservers"
	"github.com/acpgate/acpgate/mcpclient"
)

// Exit codes.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitAgentDied   = 3
	exitInterrupted = 130
)

// agentShutdownGrace is how long the agent gets to exit after its stdin is
// closed before it is killed.
const agentShutdownGrace = 10 * time.Second

// options is the parsed command line.
type options struct {
	agent   []string
	servers []mcpservers.Server
	cwd     string
	yes     bool
	load    string
	json    bool
	timeout time.Duration
	// waitServers: how long to wait for the MCP servers acpgate reports
	// as connecting before the first prompt (0: not at all).
	waitServers time.Duration
	prompt      string // the positional arguments joined; "" means read stdin
	stdinTTY    bool
}

func main() {
	os.Exit(run(os.Args[1:]))
}

// run is main without the os.Exit.
func run(args []string) int {
	opts, err := parseOptions(args, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "acpcli: %v\nRun 'acpcli -h' for usage.\n", err)
		return exitUsage
	}
	opts.stdinTTY = tty.IsTerminal(os.Stdin)
	r := newRenderer(os.Stdout, os.Stderr, opts.json, tty.IsTerminal(os.Stderr))

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if opts.timeout > 0 {
		ctx, cancel = context.WithTimeout(context.Background(), opts.timeout)
	}
	defer cancel()

	proc, err := startAgent(opts.agent, os.Stderr)
	if err != nil {
		r.Notef("acpcli: %v", err)
		return exitFailed
	}
	a := newApp(opts, r, proc, sigs, os.Stdin)
	code := exitCode(a.main(ctx), r)
	proc.shutdown(agentShutdownGrace, sigs, r.Notef)
	return code
}

// newApp wires the client, the connection and the agent together.
func newApp(opts options, r *renderer, proc *agentProc, sigs <-chan os.Signal, stdin io.Reader) *app {
	lines := &lineReader{r: stdin}
	mode := permReject
	switch {
	case opts.yes:
		mode = permAllow
	case opts.stdinTTY:
		mode = permAsk
	}
	barrier := newUpdateBarrier()
	client := newCLIClient(r, mode, lines, barrier)
	gate := make(chan struct{})
	tap := &lineTap{r: proc.Stdout, gate: gate, onLine: func(line []byte) {
		if params := sessionUpdateParams(line); params != nil {
			barrier.saw()
			if opts.json {
				r.JSONLine(params)
			}
		}
	}}
	conn := acp.NewClientSideConnection(client, proc.Stdin, tap)
	// The SDK logs every disconnect at Info level; keep warnings and errors
	// (such as undecodable messages) only.
	conn.SetLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{
		Level: slog.LevelWarn,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	})))
	close(gate) // SetLogger is not synchronised with the reader: start reading only now

	dead := make(chan struct{})
	go func() {
		select {
		case <-conn.Done():
		case <-proc.Exited():
		}
		close(dead)
	}()
	return &app{opts: opts, r: r, client: client, conn: conn, proc: proc, dead: dead, sigs: sigs, lines: lines}
}

// main runs the session: one prompt from the arguments, or stdin's lines.
func (a *app) main(ctx context.Context) error {
	if err := a.start(ctx); err != nil {
		return err
	}
	if a.opts.prompt != "" {
		return a.turn(ctx, a.opts.prompt)
	}
	return a.interactive(ctx)
}

// exitCode reports err (unless already reported) and maps it to an exit code.
func exitCode(err error, r *renderer) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if !errors.As(err, &ee) {
		r.Notef("acpcli: %v", err)
		return exitFailed
	}
	if !ee.quiet {
		r.Notef("acpcli: %v", ee)
	}
	return ee.code
}

// parseOptions parses the command line. Errors are usage errors.
func parseOptions(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("acpcli", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var servers []mcpservers.Server
	agentCmd := fs.String("agent", "", "agent command `line`, split like a shell would (default: acpgate next to acpcli, else on PATH)")
	cwd := fs.String("cwd", "", "session working `dir`ectory (default: the current directory)")
	yes := fs.Bool("yes", false, "grant every permission request (allow_once, else allow_always)")
	load := fs.String("load", "", "session/load the session with this `id` instead of session/new")
	jsonOut := fs.Bool("json", false, "print each session/update's params as a JSON line, then {\"stopReason\": ...} per turn")
	timeout := fs.Duration("timeout", 0, "overall time limit, e.g. 2m (0: none)")
	waitServers := fs.Duration("wait-servers", 30*time.Second, "before the first prompt, wait this long for the MCP servers acpgate reports as connecting, then print their states (0: do not wait)")
	fs.Func("mcp", "stdio MCP server `name='command args'` (repeatable)", func(v string) error {
		s, err := parseStdioFlag(v)
		if err == nil {
			servers = append(servers, s)
		}
		return err
	})
	fs.Func("mcp-http", "streamable HTTP MCP server `name=url` (repeatable)", func(v string) error {
		s, err := parseURLFlag(mcpclient.TransportHTTP, v)
		if err == nil {
			servers = append(servers, s)
		}
		return err
	})
	fs.Func("mcp-sse", "SSE MCP server `name=url` (repeatable)", func(v string) error {
		s, err := parseURLFlag(mcpclient.TransportSSE, v)
		if err == nil {
			servers = append(servers, s)
		}
		return err
	})
	fs.Func("mcp-config", "MCP servers from a JSON `file`: an ACP mcpServers list, or {\"mcpServers\"|\"servers\": {...}} (repeatable)", func(v string) error {
		list, err := loadMCPConfig(v)
		servers = append(servers, list...)
		return err
	})
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(fs, stderr)
		}
		return options{}, err
	}
	opts := options{servers: servers, yes: *yes, load: *load, json: *jsonOut, timeout: *timeout, waitServers: *waitServers}
	if opts.servers == nil {
		opts.servers = []mcpservers.Server{}
	}
	if err := finishOptions(&opts, *agentCmd, *cwd, fs.Args()); err != nil {
		return options{}, err
	}
	return opts, nil
}

// finishOptions validates and completes what the flags alone do not give.
func finishOptions(opts *options, agentCmd, cwd string, rest []string) error {
	if err := mcpservers.CheckNames(opts.servers); err != nil {
		return err
	}
	if opts.timeout < 0 {
		return errors.New("--timeout must not be negative")
	}
	if opts.waitServers < 0 {
		return errors.New("--wait-servers must not be negative")
	}
	if len(rest) > 0 {
		opts.prompt = strings.TrimSpace(strings.Join(rest, " "))
		if opts.prompt == "" {
			return errors.New("the prompt is empty")
		}
	}
	var err error
	if agentCmd != "" {
		opts.agent, err = mcpservers.SplitCommand(agentCmd)
		if err != nil {
			return fmt.Errorf("--agent: %w", err)
		}
	} else if opts.agent, err = defaultAgent(); err != nil {
		return err
	}
	if cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return fmt.Errorf("current directory: %w", err)
		}
	}
	if opts.cwd, err = filepath.Abs(cwd); err != nil {
		return fmt.Errorf("--cwd: %w", err)
	}
	if fi, err := os.Stat(opts.cwd); err != nil || !fi.IsDir() {
		return fmt.Errorf("--cwd %s: not a directory", opts.cwd)
	}
	return nil
}

// defaultAgent is the acpgate binary next to acpcli's own executable, else
// acpgate on PATH.
func defaultAgent() ([]string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "acpgate")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return []string{p}, nil
		}
	}
	p, err := exec.LookPath("acpgate")
	if err != nil {
		return nil, fmt.Errorf("no --agent given and no acpgate next to acpcli or on PATH: %w", err)
	}
	return []string{p}, nil
}

// printUsage prints the help text.
func printUsage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprint(w, `Usage: acpcli [flags] [prompt words...]

Spawns an ACP agent, opens a session and sends the prompt (the arguments
joined with spaces), or, without arguments, each non-empty line of stdin.
Flags go before the prompt.

Flags:
`)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	fmt.Fprint(w, `
Exit codes: 0 every turn ended normally, 1 a request failed or timed out,
2 usage error, 3 the agent died or the connection closed, 130 interrupted.
`)
}

// buildVersion is acpcli's module version, for clientInfo.
func buildVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "devel"
}
