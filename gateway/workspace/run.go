package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acpgate/acpgate/gateway"
)

// cleanupBound bounds killing and releasing a command once its call has
// ended (the call's own context may be cancelled by then).
const cleanupBound = 5 * time.Second

func (w *set) runTool() gateway.Tool {
	return gateway.Tool{
		Name:  RunCommandTool,
		Title: "Run command",
		Description: fmt.Sprintf("Run a shell command line (sh -c) in the workspace directory %s and get its exit status and output "+
			"(stdout and stderr together; the last %d bytes). It is killed after timeout_seconds (default %d). "+
			"It cannot read input: use non-interactive commands.", w.opts.Cwd, w.opts.MaxResultBytes, int(w.opts.Timeout/time.Second)),
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"command":{"type":"string","description":"The command line, e.g. \"go test ./...\"."},` +
			fmt.Sprintf(`"timeout_seconds":{"type":"integer","minimum":1,"maximum":%d,"description":"How long it may run."}},`, int(w.opts.MaxTimeout/time.Second)) +
			`"required":["command"],"additionalProperties":false}`),
		Kind:        gateway.KindExecute,
		Annotations: gateway.Annotations{Destructive: true, OpenWorld: true},
		AskApproval: true,
		AskInAuto:   true,
		Meta:        w.opts.Meta,
		Execute:     w.run,
	}
}

// detached is a context for cleaning up after a call whose context may
// have ended.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), cleanupBound)
}

// run is run_command's Execute: start, show the terminal, wait with the
// timeout, kill on cancel or timeout, release always.
func (w *set) run(ctx context.Context, args json.RawMessage, progress func(gateway.Progress)) (gateway.Result, error) {
	var a struct {
		Command        string
		TimeoutSeconds *int `json:"timeout_seconds"`
	}
	if err := decode(RunCommandTool, args, &a); err != nil {
		return gateway.Result{}, err
	}
	timeout := w.opts.Timeout
	switch {
	case strings.TrimSpace(a.Command) == "":
		return gateway.Result{}, fmt.Errorf("%s: %w: command is empty", RunCommandTool, ErrArguments)
	case a.TimeoutSeconds != nil && *a.TimeoutSeconds <= 0:
		return gateway.Result{}, fmt.Errorf("%s: %w: timeout_seconds must be positive", RunCommandTool, ErrArguments)
	case a.TimeoutSeconds != nil:
		timeout = min(time.Duration(*a.TimeoutSeconds)*time.Second, w.opts.MaxTimeout)
	}
	if err := ctx.Err(); err != nil {
		return gateway.Result{}, err
	}
	// Started whatever happens to the call meanwhile: a command started
	// by a request the call stopped waiting for would be left running
	// (the client's terminal never released). A cancelled call kills it
	// below.
	sctx, cancel := detached(ctx)
	proc, err := w.opts.Terminals.Start(sctx, Command{Line: a.Command, Cwd: w.opts.Cwd, OutputLimit: w.opts.MaxResultBytes})
	cancel()
	if err != nil {
		return gateway.Result{}, fmt.Errorf("%s: starting %q: %w", RunCommandTool, a.Command, err)
	}
	cctx, cancel := detached(ctx)
	defer cancel()
	defer func() { _ = proc.Release(cctx) }()
	id := proc.TerminalID()
	if id != "" && progress != nil {
		progress(gateway.Progress{Content: []gateway.Content{{Type: gateway.ContentTerminal, TerminalID: id}}})
	}
	wctx, stop := context.WithTimeout(ctx, timeout)
	status, err := proc.Wait(wctx)
	stop()
	var ended string // why it was killed
	if err != nil {
		switch {
		case ctx.Err() != nil:
			ended = "Cancelled: the command was killed."
		case wctx.Err() != nil:
			ended = fmt.Sprintf("Timed out after %s: the command was killed.", timeout)
		default:
			ended = fmt.Sprintf("Waiting for the command failed (%v): it was killed.", err)
		}
		_ = proc.Kill(cctx)
	}
	out, err := proc.Output(cctx)
	if err != nil {
		out.Text = fmt.Sprintf("(its output could not be read: %v)", err)
	}
	if ended == "" && out.Exit == nil {
		out.Exit = &status
	}
	return w.commandResult(a.Command, id, ended, out), nil
}

// commandResult is what the user and the model get of a command: its
// terminal (or its output) and, for the model, how it ended and the end
// of its output.
func (w *set) commandResult(line, terminal, ended string, out Output) gateway.Result {
	text, cut := tail(out.Text, w.opts.MaxResultBytes)
	cut = cut || out.Truncated
	var b strings.Builder
	failed := ended != ""
	switch {
	case ended != "":
		b.WriteString(ended)
	case out.Exit != nil && out.Exit.Code != nil:
		fmt.Fprintf(&b, "Exit code: %d", *out.Exit.Code)
		failed = *out.Exit.Code != 0
	case out.Exit != nil && out.Exit.Signal != "":
		fmt.Fprintf(&b, "Killed by %s", out.Exit.Signal)
		failed = true
	}
	switch {
	case text == "":
		b.WriteString("\n(no output)")
	case cut:
		fmt.Fprintf(&b, "\nOutput (earlier output dropped; the last %d bytes):\n%s", len(text), text)
	default:
		b.WriteString("\nOutput:\n" + text)
	}
	summary := b.String()
	shown := gateway.Content{Type: gateway.ContentText, Text: "$ " + line + "\n" + summary}
	if terminal != "" {
		shown = gateway.Content{Type: gateway.ContentTerminal, TerminalID: terminal, Text: shown.Text}
	}
	return gateway.Result{Content: []gateway.Content{shown}, IsError: failed, ForModel: w.opts.Redact(summary)}
}

// tail is the last max bytes of s (starting on a rune boundary) and
// whether s was longer.
func tail(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	s = s[len(s)-max:]
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return s, true
}
