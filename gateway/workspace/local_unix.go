//go:build unix

package workspace

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// shell runs a command line with sh -c.
func shell(line string) (string, []string) { return "sh", []string{"-c", line} }

// procAttr puts a command in a process group of its own.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup sends SIGKILL to the process group pgid; a group that is gone
// already is not an error.
func killGroup(pgid int) error {
	if pgid <= 1 {
		return fmt.Errorf("workspace: no process group %d to kill", pgid)
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// exitStatus is how a reaped command ended.
func exitStatus(st *os.ProcessState) ExitStatus {
	if st == nil {
		return ExitStatus{}
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ExitStatus{Signal: unix.SignalName(ws.Signal())}
	}
	code := st.ExitCode()
	return ExitStatus{Code: &code}
}
