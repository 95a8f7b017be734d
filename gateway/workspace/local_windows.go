package workspace

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// shell runs a command line with cmd /C.
func shell(line string) (string, []string) { return "cmd", []string{"/C", line} }

// procAttr starts a command in a process group of its own.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// killGroup ends the process pid and its children (taskkill /T /F).
func killGroup(pid int) error {
	return exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(pid)).Run()
}

// exitStatus is how a reaped command ended.
func exitStatus(st *os.ProcessState) ExitStatus {
	if st == nil {
		return ExitStatus{}
	}
	code := st.ExitCode()
	return ExitStatus{Code: &code}
}
