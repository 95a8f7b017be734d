package mcpclient

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/acpgate/acpgate/internal/base/sandbox"
	"github.com/acpgate/acpgate/mcpclient/proctree"
)

// baselineEnvNames are the variables a stdio server inherits from the agent:
// the set the official TypeScript MCP SDK passes on POSIX, plus the locale
// and temporary-directory settings tools need to behave. Everything else in
// the agent's environment (API keys above all) stays with the agent.
var baselineEnvNames = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR"}

// serverEnv returns the environment of a stdio server: the inherited
// baseline, then the spec's variables (which win).
func serverEnv(extra map[string]string) []string {
	env := make(map[string]string, len(baselineEnvNames)+len(extra))
	for _, name := range baselineEnvNames {
		if v, ok := os.LookupEnv(name); ok {
			env[name] = v
		}
	}
	for k, v := range extra {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// lookCommand resolves command the way the server's own PATH would: when the
// spec sets PATH, a bare command name is searched there.
func lookCommand(command string, env map[string]string) string {
	path, ok := env["PATH"]
	if !ok || strings.ContainsRune(command, '/') {
		return command
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, command)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	return command
}

// process owns one stdio server child and its process group: the pipes, the
// exit watcher and the stderr forwarder. Its methods are safe for concurrent
// use; stop may be called more than once.
type process struct {
	cmd    *exec.Cmd
	pgid   int      // the process group (on Windows: the leader's pid)
	tree   *tree    // the OS handle on everything the server started
	guard  Guard    // told about the group while it lives; nil if none
	stdin  *os.File // our write end of the child's stdin
	stdout *os.File // our read end of the child's stdout
	stderr *os.File // our read end of the child's stderr

	exited  chan struct{} // closed once cmd.Wait returned
	waitErr error         // set before exited is closed

	tail      *tailBuffer
	stderrEnd chan struct{} // closed when the stderr forwarder returns

	confined *sandbox.Confined // the sandbox it runs in; closed by stop

	stopOnce sync.Once
	stopErr  error
}

// startProcess starts spec's command in a new process group with the server
// environment, under its sandbox policy (see confine), forwarding its
// stderr line by line through logs. Its whole tree is marked with a fresh
// instance token (see package proctree) and, if opts.Guard is set,
// reported to it. The sandbox status is returned even when the start
// fails (nil for an off policy).
func startProcess(spec *ServerSpec, opts *Options, logs *logGate) (*process, *SandboxStatus, error) {
	cwd := opts.Cwd
	if spec.Cwd != "" {
		cwd = spec.Cwd
	}
	conf, sb, err := confine(spec, opts, cwd)
	if err != nil {
		return nil, sb, err
	}
	p, err := startConfined(spec, conf, cwd, logs, opts.StderrTail, opts.Guard)
	if err != nil {
		_ = conf.Close()
		return nil, sb, err
	}
	return p, sb, nil
}

// confine prepares spec's command under its sandbox policy with the
// launcher of opts.
func confine(spec *ServerSpec, opts *Options, cwd string) (*sandbox.Confined, *SandboxStatus, error) {
	argv := append([]string{lookCommand(spec.Command, spec.Env)}, spec.Args...)
	if spec.Sandbox.Off() {
		return &sandbox.Confined{Argv: argv}, nil, nil
	}
	sb := &SandboxStatus{Policy: spec.Sandbox.String()}
	if opts.Sandbox == nil {
		// Nothing can enforce the policy: its own rule says what follows.
		sb.Note = "no sandbox launcher"
		if !spec.Sandbox.Strict() {
			return &sandbox.Confined{Argv: argv}, sb, nil
		}
		return nil, sb, fmt.Errorf("%w: policy %s: no sandbox launcher", sandbox.ErrUnavailable, sb.Policy)
	}
	workspace := opts.Workspace
	if len(workspace) == 0 && cwd != "" {
		workspace = []string{cwd}
	}
	conf, err := opts.Sandbox.Confine(spec.Sandbox, workspace, argv)
	if err != nil {
		sb.Note = err.Error()
		return nil, sb, err
	}
	sb.Enforced, sb.Note = conf.Enforced, conf.Note
	return conf, sb, nil
}

// startConfined is startProcess once the command line is known.
func startConfined(spec *ServerSpec, conf *sandbox.Confined, cwd string, logs *logGate, tailSize int, guard Guard) (*process, error) {
	cmd := exec.Command(conf.Argv[0], conf.Argv[1:]...)
	cmd.Dir = cwd
	token := proctree.NewToken()
	cmd.Env = append(conf.Environ(serverEnv(spec.Env)), proctree.EnvName+"="+token)
	cmd.SysProcAttr = procAttr()

	var files []*os.File // every pipe end, closed on failure
	closeAll := func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll()
		if cwd != "" {
			if _, serr := os.Stat(cwd); serr != nil {
				return nil, fmt.Errorf("start %s: working directory: %w", spec.Command, serr)
			}
		}
		return nil, fmt.Errorf("start %s: %w", spec.Command, err)
	}
	// The child holds its ends now.
	_ = inR.Close()
	_ = outW.Close()
	_ = errW.Close()

	p := &process{
		cmd:       cmd,
		pgid:      cmd.Process.Pid,
		tree:      newTree(cmd.Process, token),
		guard:     guard,
		stdin:     inW,
		stdout:    outR,
		stderr:    errR,
		exited:    make(chan struct{}),
		tail:      newTailBuffer(tailSize),
		stderrEnd: make(chan struct{}),
		confined:  conf,
	}
	if guard != nil {
		guard.Watch(p.pgid, token)
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	go p.forwardStderr(logs)
	return p, nil
}

// forwardStderr logs each stderr line through logs (redacted whole, cut at
// a bound, rate-limited) and keeps the tail for Status.
func (p *process) forwardStderr(logs *logGate) {
	defer close(p.stderrEnd)
	logs.stderrLines(p.stderr, p.tail)
}

// Exited is closed when the process has exited and been reaped.
func (p *process) Exited() <-chan struct{} { return p.exited }

// exitReason describes how the process ended; call it after Exited closed.
func (p *process) exitReason() string {
	if p.waitErr == nil {
		return "exit status 0"
	}
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		return ee.ProcessState.String()
	}
	return p.waitErr.Error()
}

// stop tears the process group down: close stdin, wait up to grace, SIGTERM
// the group, wait until total has passed, SIGKILL the group. A closed hurry
// skips straight to SIGKILL. It returns once no live process is left in the
// group (or, after SIGKILL, a last bound has passed), and it is idempotent.
func (p *process) stop(grace, total time.Duration, hurry <-chan struct{}) error {
	p.stopOnce.Do(func() {
		p.stopErr = p.terminate(grace, total, hurry)
		p.tree.release()
		if p.stopErr == nil {
			_ = p.confined.Close() // nothing of the server is left to use it
		}
		if p.guard != nil && p.stopErr == nil {
			p.guard.Unwatch(p.pgid)
		}
		// Everyone who could write is gone: let the readers see EOF, then
		// make sure they are unblocked even if something escaped the group.
		select {
		case <-p.stderrEnd:
		case <-time.After(100 * time.Millisecond):
		}
		_ = p.stderr.Close()
		_ = p.stdout.Close()
	})
	return p.stopErr
}

// terminate is stop's sequence. Each signal goes to the group and to every
// process of the server's tree found just before (see tree.signal), so
// descendants that left the group are stopped too.
func (p *process) terminate(grace, total time.Duration, hurry <-chan struct{}) error {
	start := time.Now()
	_ = p.stdin.Close()
	if p.waitGone(grace, hurry) {
		return nil
	}
	p.tree.signal(false)
	if p.waitGone(total-time.Since(start), hurry) {
		return nil
	}
	// SIGKILL, again and again: a server forking while it is killed can
	// start processes after a walk of its tree.
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		p.tree.signal(true)
		if p.waitGone(50*time.Millisecond, nil) {
			return nil
		}
	}
	return fmt.Errorf("process group %d still has live processes after SIGKILL", p.pgid)
}

// waitGone waits up to d (or until hurry closes) for the leader to exit and
// the group to empty. It reports whether the group is gone.
func (p *process) waitGone(d time.Duration, hurry <-chan struct{}) bool {
	if d <= 0 {
		return !p.tree.alive(p.exited)
	}
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	select {
	case <-p.exited:
	case <-deadline.C:
		return false
	case <-hurry:
		return false
	}
	poll := time.Millisecond
	for p.tree.alive(p.exited) {
		t := time.NewTimer(poll)
		select {
		case <-t.C:
		case <-deadline.C:
			t.Stop()
			return !p.tree.alive(p.exited)
		case <-hurry:
			t.Stop()
			return false
		}
		poll = min(2*poll, 25*time.Millisecond)
	}
	return true
}

// tailBuffer keeps the last size bytes written to it. Safe for concurrent use.
type tailBuffer struct {
	mu   sync.Mutex
	size int
	buf  []byte
	cut  bool // bytes were dropped from the front
}

func newTailBuffer(size int) *tailBuffer { return &tailBuffer{size: size} }

// Write appends b, dropping the oldest bytes beyond twice the size.
func (t *tailBuffer) Write(b []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(b) > t.size {
		b = b[len(b)-t.size:]
		t.cut = true
	}
	t.buf = append(t.buf, b...)
	if len(t.buf) > 2*t.size {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.size:]...)
		t.cut = true
	}
}

// String returns at most size bytes of the most recent output, starting at a
// line boundary when older output was dropped.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	cut := t.cut
	if len(b) > t.size {
		b = b[len(b)-t.size:]
		cut = true
	}
	if cut {
		if i := strings.IndexByte(string(b), '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	return strings.TrimRight(string(b), "\n")
}
