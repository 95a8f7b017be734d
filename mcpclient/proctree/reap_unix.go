//go:build unix

package proctree

import "syscall"

// Reap reaps pid if it is an exited child of the calling process (one
// that was re-parented to it as a subreaper), without blocking. Never call
// it for a process an exec.Cmd waits for.
func Reap(pid int) {
	var ws syscall.WaitStatus
	_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
}
