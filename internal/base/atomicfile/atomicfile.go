// Package atomicfile replaces a file's contents atomically: readers see
// the old contents or the new, never a mix, and a crash leaves one of the
// two.
package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// WriteFile replaces the file at path with data: it writes a temporary
// file in the same directory with mode perm (regardless of the umask),
// fsyncs it, renames it over path and fsyncs the directory (not on
// Windows, whose directories cannot be synced). The directory must exist.
// The temporary file is named ".NAME.tmp-*" (NAME: path's base name); on
// error it is removed and path is unchanged.
// WriteFile is safe for concurrent use on different paths; concurrent
// writes to one path leave one of them.
func WriteFile(path string, data []byte, perm fs.FileMode) (err error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close() // a second Close only returns an error
			_ = os.Remove(tmp)
			err = fmt.Errorf("writing %s: %w", path, err)
		}
	}()
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// WriteThrough is WriteFile for a file a user may keep elsewhere behind a
// symbolic link (a configuration file linked from a dotfiles repository):
// when path is a link (or a chain of them), the file it leads to is
// replaced, in its own directory, and the link stays as it is. It returns
// the file it wrote: path itself, or where the link leads. A link that
// leads nowhere is an error naming it (nothing is written); a path that
// does not exist is written as WriteFile writes it.
func WriteThrough(path string, data []byte, perm fs.FileMode) (string, error) {
	target := path
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if target, err = filepath.EvalSymlinks(path); err != nil {
			return "", fmt.Errorf("writing %s: the symbolic link leads nowhere: %w", path, err)
		}
	}
	return target, WriteFile(target, data, perm)
}
