//go:build unix

package wsclient

import (
	"os"
	"syscall"

	acpsdk "github.com/coder/acp-go-sdk"
	"golang.org/x/sys/unix"
)

func ownGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func killGroup(pid int) {
	if pid > 1 { // kill(2) with 0 or -1 would address this group or everything
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

func exitStatus(st *os.ProcessState) acpsdk.TerminalExitStatus {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return acpsdk.TerminalExitStatus{Signal: acpsdk.Ptr(unix.SignalName(ws.Signal()))}
	}
	return acpsdk.TerminalExitStatus{ExitCode: acpsdk.Ptr(st.ExitCode())}
}
