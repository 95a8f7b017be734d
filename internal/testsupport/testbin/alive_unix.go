//go:build unix

package testbin

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
)

// Alive reports whether pid is a live process. A zombie is not alive: on
// machines whose init does not reap orphans, killed grandchildren linger as
// zombies.
func Alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := bytes.Fields(stat[bytes.LastIndexByte(stat, ')')+1:])
	return len(f) > 0 && f[0][0] != 'Z' && f[0][0] != 'X'
}
