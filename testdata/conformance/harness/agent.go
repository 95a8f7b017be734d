package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"time"
)

// agentProc is the running acpgate: the harness writes its stdin and
// reads its stdout.
type agentProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	exited chan struct{} // closed once cmd.Wait returned
	err    error         // cmd.Wait's error, valid once exited is closed
}

// startAgent starts cmd with pipes for its stdin and stdout.
func startAgent(cmd *exec.Cmd) (*agentProc, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("acpgate stdin: %w", err)
	}
	// An os.Pipe of our own, not StdoutPipe: Wait (called at once, below)
	// would close StdoutPipe's read end while the connection reads it.
	stdout, w, err := os.Pipe()
	if err != nil {
		stdin.Close()
		return nil, fmt.Errorf("acpgate stdout: %w", err)
	}
	cmd.Stdout = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		stdin.Close()
		stdout.Close()
		return nil, fmt.Errorf("start acpgate: %w", err)
	}
	p := &agentProc{cmd: cmd, stdin: stdin, stdout: stdout, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// stop closes acpgate's stdin (it then stops its servers and exits) and
// kills it if it has not exited within stopGrace.
func (p *agentProc) stop(log *slog.Logger) {
	p.stdin.Close()
	timer := time.NewTimer(stopGrace)
	defer timer.Stop()
	select {
	case <-p.exited:
	case <-timer.C:
		log.Error("acpgate did not exit after its stdin closed; killing it", "grace", stopGrace)
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	p.stdout.Close()
	if p.err != nil {
		log.Error("acpgate exited", "err", p.err)
	}
}

// jsonText is v as compact JSON.
func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("tool arguments: %w", err)
	}
	return string(b), nil
}
