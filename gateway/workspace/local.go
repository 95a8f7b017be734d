package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/acpgate/acpgate/internal/base/safefile"
	"github.com/acpgate/acpgate/internal/base/sandbox"
)

// LocalOptions configures Local. A nil *LocalOptions means the defaults.
type LocalOptions struct {
	// Env is the environment of commands, as os.Environ returns it; nil
	// means acpgate's own environment.
	Env []string
	// WaitDelay bounds how long a command's end waits for its output
	// pipes to close once it has exited or been killed (a background
	// process may hold them); default 2 s.
	WaitDelay time.Duration
	// Sandbox, when set, runs every command under Policy with Workspace
	// as what workspace-write may write (see package sandbox): a policy
	// it cannot enforce refuses the command unless the policy allows an
	// unconfined run.
	Sandbox   *sandbox.Launcher
	Policy    sandbox.Policy
	Workspace []string
}

// Local is the workspace backend of the local file system and os/exec:
// Files and Terminals. Safe for concurrent use.
type Local struct {
	env       []string
	waitDelay time.Duration
	sandbox   *sandbox.Launcher
	policy    sandbox.Policy
	workspace []string
}

var (
	_ Files     = (*Local)(nil)
	_ Terminals = (*Local)(nil)
)

// NewLocal returns a Local backend.
func NewLocal(opts *LocalOptions) *Local {
	l := &Local{waitDelay: 2 * time.Second}
	if opts != nil {
		l.env = opts.Env
		l.sandbox, l.policy, l.workspace = opts.Sandbox, opts.Policy, opts.Workspace
		if opts.WaitDelay > 0 {
			l.waitDelay = opts.WaitDelay
		}
	}
	return l
}

// ReadFile implements Files: the file must be a regular file
// (safefile.ErrNotRegular: a named pipe in the project does not block the
// call) of UTF-8 text (ErrNotText).
func (l *Local) ReadFile(_ context.Context, path string, line, limit int) (string, error) {
	data, err := safefile.ReadFile(path, 0, false)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(data) {
		return "", fmt.Errorf("%s: %w", path, ErrNotText)
	}
	return lines(string(data), line, limit), nil
}

// lines is the part of text from line (1-based; 0 or 1: the first) for
// at most limit lines (0: to the end).
func lines(text string, line, limit int) string {
	start := 0
	for n := 1; n < line; n++ {
		i := strings.IndexByte(text[start:], '\n')
		if i < 0 {
			return ""
		}
		start += i + 1
	}
	if limit <= 0 {
		return text[start:]
	}
	end := start
	for n := 0; n < limit; n++ {
		i := strings.IndexByte(text[end:], '\n')
		if i < 0 {
			return text[start:]
		}
		end += i + 1
	}
	return text[start:end]
}

// WriteFile implements Files: missing parent directories are created; an
// existing file keeps its permissions, a new one gets 0644 (before umask);
// only a regular file is written (safefile.WriteFile).
func (l *Local) WriteFile(_ context.Context, path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return safefile.WriteFile(path, []byte(content), 0o644)
}

// Start implements Terminals: the command line runs in a shell in a
// process group of its own, with no input, its stdout and stderr
// together; Kill and Release stop the whole group.
func (l *Local) Start(_ context.Context, c Command) (Process, error) {
	name, args := c.Shell()
	cmd, conf, err := l.command(name, args)
	if err != nil {
		return nil, err
	}
	cmd.Dir = c.Cwd
	cmd.SysProcAttr = procAttr()
	cmd.WaitDelay = l.waitDelay
	p := &localProcess{cmd: cmd, out: &tailBuffer{limit: max(c.OutputLimit, 1)}, done: make(chan struct{}), confined: conf}
	cmd.Stdout, cmd.Stderr = p.out, p.out // one writer: one pipe, in order
	if err := cmd.Start(); err != nil {
		_ = conf.Close()
		return nil, err
	}
	go p.wait()
	return p, nil
}

// command is the command name args, under the policy when there is one.
func (l *Local) command(name string, args []string) (*exec.Cmd, *sandbox.Confined, error) {
	if l.sandbox == nil || l.policy.Off() {
		cmd := exec.Command(name, args...)
		cmd.Env = l.env
		return cmd, &sandbox.Confined{}, nil
	}
	env := l.env
	if env == nil {
		env = os.Environ()
	}
	return l.sandbox.Command(l.policy, l.workspace, env, name, args...)
}

// localProcess is a command started by Local.
type localProcess struct {
	confined *sandbox.Confined // its sandbox, closed once it is reaped
	cmd      *exec.Cmd
	out      *tailBuffer
	done     chan struct{} // closed once the command has been reaped

	// Set before done is closed.
	status ExitStatus
	err    error // a failure of Wait other than the command's own exit status
}

// wait reaps the command. Where the system allows it, the group is killed
// first, while the exited leader still holds its process id (so the id
// cannot name another group yet): nothing the command left running in
// the background survives it.
func (p *localProcess) wait() {
	pid := p.cmd.Process.Pid
	if waitExited(pid) {
		_ = killGroup(pid)
	}
	err := p.cmd.Wait()
	_ = p.confined.Close()
	p.status = exitStatus(p.cmd.ProcessState)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		p.err = err
	}
	close(p.done)
}

// TerminalID implements Process: a local command has no client terminal.
func (p *localProcess) TerminalID() string { return "" }

// Wait implements Process.
func (p *localProcess) Wait(ctx context.Context) (ExitStatus, error) {
	select {
	case <-p.done:
		return p.status, p.err
	case <-ctx.Done():
		return ExitStatus{}, ctx.Err()
	}
}

// Output implements Process.
func (p *localProcess) Output(context.Context) (Output, error) {
	text, cut := p.out.text()
	o := Output{Text: text, Truncated: cut}
	select {
	case <-p.done:
		s := p.status
		o.Exit = &s
	default:
	}
	return o, nil
}

// Kill implements Process: SIGKILL to the command's process group.
func (p *localProcess) Kill(context.Context) error {
	select {
	case <-p.done:
		return nil // reaped: its id may name something else now
	default:
	}
	return killGroup(p.cmd.Process.Pid)
}

// Release implements Process: it kills the command if it still runs and
// waits until it has been reaped (or ctx ends).
func (p *localProcess) Release(ctx context.Context) error {
	if err := p.Kill(ctx); err != nil {
		return err
	}
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// tailBuffer keeps the last limit bytes written to it. Safe for concurrent
// use.
type tailBuffer struct {
	mu      sync.Mutex
	limit   int
	buf     []byte
	dropped bool
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(b) >= t.limit {
		t.dropped = t.dropped || len(b) > t.limit || len(t.buf) > 0
		t.buf = append(t.buf[:0], b[len(b)-t.limit:]...)
		return len(b), nil
	}
	if over := len(t.buf) + len(b) - t.limit; over > 0 {
		t.buf = t.buf[:copy(t.buf, t.buf[over:])]
		t.dropped = true
	}
	t.buf = append(t.buf, b...)
	return len(b), nil
}

// text is what is kept, from its first whole rune, and whether earlier
// output was dropped.
func (t *tailBuffer) text() (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if t.dropped {
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	return string(b), t.dropped
}
