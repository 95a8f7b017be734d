package safefile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
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
	if err := rc.Control(func(fd uintptr) { p, rerr = fdPath(int(fd)) }); err != nil || rerr != nil {
		return "", false
	}
	return p, true
}

// fdPath is the path of the file descriptor fd has open.
func fdPath(fd int) (string, error) { return os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd)) }

// resolve returns where path leads, its symbolic links resolved, as the
// kernel names the file an O_PATH descriptor of it reaches (nothing is
// opened: a named pipe does not block, a device is not touched). That is
// one walk of the path, where filepath.EvalSymlinks, its fallback when
// /proc is not there, takes one per element: a path N directories deep
// costs N, not N². A missing file wraps fs.ErrNotExist.
func resolve(path string) (string, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", &fs.PathError{Op: "resolve", Path: path, Err: err}
	}
	defer unix.Close(fd)
	p, err := fdPath(fd)
	if err != nil {
		return filepath.EvalSymlinks(path)
	}
	return p, nil
}
