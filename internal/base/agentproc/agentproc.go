// Package agentproc starts an ACP agent as a child process with pipes on
// its stdin and stdout, the way an editor does: the client side of acpcli
// and of the test harnesses. How the agent is stopped (grace periods,
// process groups) stays with the caller.
package agentproc

import (
	"fmt"
	"io"
	"os"
	"os/exec"
)

// Proc is a started agent. Stdin and Stdout are the client's ends of the
// agent's pipes; Exited is closed once the agent has exited and been
// reaped. Its methods are safe for concurrent use.
type Proc struct {
	// Cmd is the started command (Cmd.Process is set).
	Cmd *exec.Cmd
	// Stdin is the agent's standard input; closing it asks an ACP agent
	// to shut down.
	Stdin io.WriteCloser
	// Stdout is the read end of the agent's standard output. It stays
	// readable after the agent exited, up to the last byte it wrote.
	Stdout *os.File

	exited chan struct{}
	err    error // cmd.Wait's error, valid once exited is closed
}

// Start starts cmd with a pipe on its stdin and an os.Pipe on its stdout
// (not cmd.StdoutPipe: Wait, which runs at once, would close that pipe's
// read end when the agent exits and lose the last messages it wrote).
// cmd.Stderr, SysProcAttr and the like are the caller's.
func Start(cmd *exec.Cmd) (*Proc, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("agent stdin: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		stdin.Close()
		return nil, fmt.Errorf("agent stdout: %w", err)
	}
	cmd.Stdout = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		stdin.Close()
		r.Close()
		return nil, fmt.Errorf("start agent %q: %w", cmd.Path, err)
	}
	p := &Proc{Cmd: cmd, Stdin: stdin, Stdout: r, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Exited is closed once the agent has exited and been reaped.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// Err is how the agent exited (cmd.Wait's error); nil before Exited is
// closed or after a clean exit.
func (p *Proc) Err() error {
	select {
	case <-p.exited:
		return p.err
	default:
		return nil
	}
}

// Pid is the agent's process id.
func (p *Proc) Pid() int { return p.Cmd.Process.Pid }
