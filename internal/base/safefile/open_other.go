//go:build !unix

package safefile

import "os"

// openNonblock opens path for reading. Where there are no FIFOs or
// devices in the file system's namespace that an open waits on, a plain
// open is one that cannot block; Open still refuses what is not a regular
// file.
func openNonblock(path string) (*os.File, error) { return os.Open(path) }

// openWriteNonblock opens path for writing, creating it with perm.
func openWriteNonblock(path string, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE, perm)
}

// links is how many hard links the file fi describes has: 1, as this
// platform's file information does not say.
func links(os.FileInfo) uint64 { return 1 }
