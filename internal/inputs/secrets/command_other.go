//go:build !unix

package secrets

import (
	"os"
	"syscall"
)

// ownGroup leaves a command's process attributes as they are.
func ownGroup() *syscall.SysProcAttr { return nil }

// killGroup kills the process p.
func killGroup(p *os.Process) error {
	if p == nil {
		return os.ErrProcessDone
	}
	return p.Kill()
}
