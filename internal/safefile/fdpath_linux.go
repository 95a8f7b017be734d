package safefile

import (
	"fmt"
	"os"
)

// descriptorPath returns the path of the file f has open, as the kernel
// names it (/proc/self/fd).
func descriptorPath(f *os.File) (string, bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return "", false
	}
	var p string
	var rerr error
	if err := rc.Control(func(fd uintptr) { p, rerr = os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd)) }); err != nil || rerr != nil {
		return "", false
	}
	return p, true
}
