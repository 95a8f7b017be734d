//go:build !linux

package session

import "os"

// datasync flushes f to stable storage.
func datasync(f *os.File) error { return f.Sync() }
