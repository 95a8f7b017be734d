package proctree

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// List reads the process table with sysctl kern.proc.all.
func List() (Table, error) {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, err
	}
	t := make(Table, 0, len(kps))
	for _, kp := range kps {
		t = append(t, Proc{
			PID: int(kp.Proc.P_pid), PPID: int(kp.Eproc.Ppid), PGID: int(kp.Eproc.Pgid),
			Zombie: kp.Proc.P_stat == 5, // SZOMB
		})
	}
	return t, nil
}

// Lookup returns pid's entry in the process table (Start is 0: start
// times are not compared on macOS).
func Lookup(pid int) (Proc, bool) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || kp.Proc.P_pid != int32(pid) {
		return Proc{}, false
	}
	return Proc{PID: pid, PPID: int(kp.Eproc.Ppid), PGID: int(kp.Eproc.Pgid), Zombie: kp.Proc.P_stat == 5}, true
}

// hasToken reports false: macOS does not let us read other processes'
// environments cheaply.
func hasToken(int, string) bool { return false }

// BecomeSubreaper returns ErrUnsupported: macOS has no subreaper.
func BecomeSubreaper() error { return ErrUnsupported }

// SetParentDeathSignal is a no-op: macOS has no parent-death signal.
func SetParentDeathSignal(*syscall.SysProcAttr) {}

// IsSubreaper reports false: macOS has no subreaper.
func IsSubreaper() bool { return false }

// OwnChildren returns ErrUnsupported.
func OwnChildren() ([]int, error) { return nil, ErrUnsupported }

// ChildrenOf returns ErrUnsupported.
func ChildrenOf(int) ([]int, error) { return nil, ErrUnsupported }
