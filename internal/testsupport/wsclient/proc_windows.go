package wsclient

import (
	"os"
	"syscall"

	acpsdk "github.com/coder/acp-go-sdk"
)

func ownGroup() *syscall.SysProcAttr { return nil }

func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

func exitStatus(st *os.ProcessState) acpsdk.TerminalExitStatus {
	return acpsdk.TerminalExitStatus{ExitCode: acpsdk.Ptr(st.ExitCode())}
}
