package main

import (
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/acpgate/acpgate/internal/base/agentproc"
)

// agentProc is the spawned agent (see agentproc.Proc) with acpcli's way
// of stopping it.
type agentProc struct{ *agentproc.Proc }

// startAgent starts argv in its own process group (so that a Ctrl-C at the
// terminal reaches acpcli, which turns it into session/cancel, and not the
// agent), with its stderr going to stderr.
func startAgent(argv []string, stderr io.Writer) (*agentProc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = stderr
	cmd.SysProcAttr = ownGroup()
	p, err := agentproc.Start(cmd)
	if err != nil {
		return nil, err
	}
	return &agentProc{p}, nil
}

// shutdown closes the agent's stdin and waits up to grace for it to exit,
// then kills its process group. A signal on sigs cuts the wait short. It
// also kills processes the agent left behind in its group, saying so.
func (p *agentProc) shutdown(grace time.Duration, sigs <-chan os.Signal, notef func(string, ...any)) {
	p.Stdin.Close()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.Exited():
		if groupAlive(p.Pid()) {
			notef("acpcli: the agent left processes running in its process group; killing them")
		}
	case <-timer.C:
		notef("acpcli: the agent did not exit within %s of its stdin closing; killing it", grace)
	case <-sigs:
		notef("acpcli: killing the agent")
	}
	killGroup(p.Pid())
	select {
	case <-p.Exited():
	case <-time.After(5 * time.Second):
		notef("acpcli: the agent (pid %d) did not die after SIGKILL", p.Pid())
	}
	p.Stdout.Close()
}
