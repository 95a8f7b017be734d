package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// agentProc is the spawned agent: its stdin, the read end of its stdout and
// a channel closed once it has exited.
type agentProc struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stdout  *os.File
	exited  chan struct{}
	waitErr error // valid once exited is closed
}

// startAgent starts argv in its own process group (so that a Ctrl-C at the
// terminal reaches acpcli, which turns it into session/cancel, and not the
// agent), with its stderr going to stderr.
func startAgent(argv []string, stderr io.Writer) (*agentProc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = stderr
	cmd.SysProcAttr = ownGroup()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("agent stdin: %w", err)
	}
	// An os.Pipe of our own rather than StdoutPipe: Wait would close
	// StdoutPipe's read end as soon as the agent exits, losing the last
	// messages it wrote.
	r, w, err := os.Pipe()
	if err != nil {
		stdin.Close()
		return nil, fmt.Errorf("agent stdout: %w", err)
	}
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		stdin.Close()
		r.Close()
		w.Close()
		return nil, fmt.Errorf("start agent %q: %w", argv[0], err)
	}
	w.Close()
	p := &agentProc{cmd: cmd, stdin: stdin, stdout: r, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// shutdown closes the agent's stdin and waits up to grace for it to exit,
// then kills its process group. A signal on sigs cuts the wait short. It
// also kills processes the agent left behind in its group, saying so.
func (p *agentProc) shutdown(grace time.Duration, sigs <-chan os.Signal, notef func(string, ...any)) {
	p.stdin.Close()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.exited:
		if groupAlive(p.cmd.Process.Pid) {
			notef("acpcli: the agent left processes running in its process group; killing them")
		}
	case <-timer.C:
		notef("acpcli: the agent did not exit within %s of its stdin closing; killing it", grace)
	case <-sigs:
		notef("acpcli: killing the agent")
	}
	killGroup(p.cmd.Process.Pid)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		notef("acpcli: the agent (pid %d) did not die after SIGKILL", p.cmd.Process.Pid)
	}
	p.stdout.Close()
}
