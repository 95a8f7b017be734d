//go:build unix

package watchdog

import (
	"errors"
	"os/exec"
	"syscall"
	"time"

	"github.com/acpgate/acpgate/mcpclient/proctree"
)

// configure puts the watchdog in a process group of its own.
func configure(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return nil
}

// stopAll kills the recorded groups and token carriers until none is
// left or bound has passed.
func stopAll(recs []record, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	poll := time.Millisecond
	for {
		left := 0
		for _, r := range recs {
			if !proctree.Killable(r.pgid) {
				continue
			}
			_ = syscall.Kill(-r.pgid, syscall.SIGKILL)
			pids, err := proctree.Find(0, r.pgid, r.token, 0)
			if err != nil {
				// No process table to tell zombies apart: trust kill(2).
				if syscall.Kill(-r.pgid, 0) == nil {
					left++
				}
				continue
			}
			for _, pid := range pids {
				if proctree.Killable(pid) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			if len(pids) > 0 {
				left++
			}
		}
		if left == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("watchdog: processes survived SIGKILL")
		}
		time.Sleep(poll)
		poll = min(2*poll, 50*time.Millisecond)
	}
}
