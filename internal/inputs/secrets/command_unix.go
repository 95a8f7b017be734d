//go:build unix

package secrets

import (
	"errors"
	"os"
	"syscall"
)

// ownGroup puts a command in a process group of its own.
func ownGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup sends SIGKILL to the process group p leads; a group that is
// gone already is not an error.
func killGroup(p *os.Process) error {
	if p == nil || p.Pid <= 1 {
		return os.ErrProcessDone
	}
	err := syscall.Kill(-p.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}
