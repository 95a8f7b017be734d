//go:build !linux

package safefile

import (
	"os"
	"path/filepath"
)

// descriptorPath is not known here: OpenWithin relies on its check of
// the path before the open.
func descriptorPath(*os.File) (string, bool) { return "", false }

// resolve returns where path leads, its symbolic links resolved.
func resolve(path string) (string, error) { return filepath.EvalSymlinks(path) }
