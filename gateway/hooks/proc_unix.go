//go:build unix

package hooks

import (
	"os/exec"
	"syscall"
)

// setGroup runs cmd in a process group of its own, killed whole when its
// context ends.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
