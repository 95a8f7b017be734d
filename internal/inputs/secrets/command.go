package secrets

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// This file runs the commands secrets come from: a secret manager's CLI
// (secret://gcp|aws|vault) and a sign-in's workload token command.

// CommandTimeout is how long a command run by [RunCommand] may take, at
// most: it is given its own deadline, the sooner of CommandTimeout and
// three quarters of what remains before the caller's deadline, so that
// the error saying which command hung arrives before the caller gives up
// on whatever waited for it (a server's connect timeout, say).
const CommandTimeout = 10 * time.Second

// MaxCommandOutput is the standard output [RunCommand] accepts from a
// command, as [MaxFileSize] is for a file.
const MaxCommandOutput = MaxFileSize

// ErrOutputLimit is wrapped by the error of a command whose standard
// output went over its limit; the error names the command and the limit.
var ErrOutputLimit = errors.New("standard output over its limit")

// ErrCommandTimeout is wrapped by the error of a command that did not end
// within its own deadline (see [CommandTimeout]); the error names the
// command and how long it was given.
var ErrCommandTimeout = errors.New("timed out")

// maxStderr bounds how much of a command's standard error goes into an
// error message.
const maxStderr = 1024

// keptStderr bounds how much of a command's standard error is kept: a few
// times what goes into the message, since scrubbing may shorten it.
const keptStderr = 4 * maxStderr

// RunCommand is the default Resolver.Run: RunCommandLimit with a limit of
// MaxCommandOutput. It is safe for concurrent use.
func RunCommand(ctx context.Context, name string, args ...string) ([]byte, error) {
	return RunCommandLimit(ctx, MaxCommandOutput, name, args...)
}

// RunCommandLimit runs the command name (looked up on PATH) with args, the
// agent's environment and no standard input, in a process group of its
// own, within its own deadline (see [CommandTimeout]), and returns its
// standard output. It keeps at most limit+1 bytes of that output and a few
// KiB of standard error: once the output goes over limit bytes, the
// command's whole process group is killed and the error wraps
// [ErrOutputLimit]; past its deadline, likewise, and the error wraps
// [ErrCommandTimeout]. If the command fails, the error includes the start
// of its standard error, scrubbed of anything it printed on standard
// output, but never the output itself. Every error starts with name. It is
// safe for concurrent use.
func RunCommandLimit(ctx context.Context, limit int, name string, args ...string) ([]byte, error) {
	timeout := commandTimeout(ctx)
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, ErrCommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = commandEnv(os.Environ())
	cmd.SysProcAttr = ownGroup()
	cmd.Cancel = func() error { return killGroup(cmd.Process) }
	cmd.WaitDelay = time.Second
	stdout := &capped{limit: limit + 1, full: cancel}
	stderr := &capped{limit: keptStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	switch {
	case stdout.isFull():
		return nil, fmt.Errorf("%s: %w (%d bytes)", name, ErrOutputLimit, limit)
	case err == nil:
		return stdout.b, nil
	case errors.Is(context.Cause(ctx), ErrCommandTimeout):
		return nil, fmt.Errorf("%s: %w after %s", name, ErrCommandTimeout, timeout.Round(time.Millisecond))
	}
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		err = fmt.Errorf("%w: %w", ctxErr, err)
	}
	msg := strings.TrimSpace(scrubOutput(string(stderr.b), string(stdout.b)))
	if len(msg) > maxStderr {
		// Truncated after scrubbing, so no secret is cut short of
		// recognition.
		msg = msg[:maxStderr] + "..."
	}
	if msg == "" {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return nil, fmt.Errorf("%s: %w: %s", name, err, msg)
}

// commandTimeout returns the timeout a command gets under ctx.
func commandTimeout(ctx context.Context) time.Duration {
	d, ok := ctx.Deadline()
	if !ok {
		return CommandTimeout
	}
	return max(0, min(CommandTimeout, time.Until(d)*3/4))
}

// capped is an io.Writer keeping the first limit bytes written to it and
// discarding the rest; the first time something is discarded it calls
// full (if set). Its methods are safe for concurrent use.
type capped struct {
	limit int
	full  func()

	mu   sync.Mutex
	b    []byte
	over bool
}

// Write keeps what fits of p and reports it all written.
func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := min(len(p), c.limit-len(c.b)); n > 0 {
		c.b = append(c.b, p[:n]...)
	}
	if len(c.b) == c.limit && len(p) > 0 && !c.over && c.full != nil {
		c.over = true
		c.full()
	}
	return len(p), nil
}

// isFull reports whether the limit was reached and full called.
func (c *capped) isFull() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.over
}

// commandEnv is the environment of a secret's command: acpgate's own (a
// secret manager's CLI needs its credentials) without the OTEL_*
// variables, which are acpgate's telemetry settings and not the
// command's.
func commandEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "OTEL_") {
			out = append(out, kv)
		}
	}
	return out
}
