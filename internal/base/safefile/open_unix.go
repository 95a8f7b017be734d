//go:build unix

package safefile

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// openNonblock opens path for reading with O_NONBLOCK (a FIFO does not
// wait for a writer, a device for its line) and O_NOCTTY (a terminal does
// not become the controlling one). A socket cannot be opened at all
// (ENXIO): that too is ErrNotRegular.
func openNonblock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if errors.Is(err, syscall.ENXIO) {
		return nil, fmt.Errorf("%s: %w (socket)", path, ErrNotRegular)
	}
	return f, err
}

// openWriteNonblock opens path for writing as openNonblock opens it for
// reading, creating it with perm; a FIFO without a reader is ENXIO, which
// is ErrNotRegular too.
func openWriteNonblock(path string, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|syscall.O_NONBLOCK|syscall.O_NOCTTY, perm)
	if errors.Is(err, syscall.ENXIO) {
		return nil, fmt.Errorf("%s: %w (named pipe or socket)", path, ErrNotRegular)
	}
	return f, err
}

// links is how many hard links the file fi describes has (1 where the
// platform does not say).
func links(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
