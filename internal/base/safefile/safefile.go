// Package safefile reads the files acpgate reads on its own — instructions
// files (AGENTS.md), the configuration file — and the files the local
// workspace tools read for the model, so that nothing a project holds can
// block a session or lead outside it.
//
// A file is opened without blocking: a named pipe (FIFO)
// opened for reading would wait for a writer, a device for whatever it
// waits for. What was opened is then checked on the descriptor itself
// (fstat), not by a name test that a rename could race: anything but a
// regular file is closed at once and refused with ErrNotRegular. Within
// resolves a path's symbolic links and refuses, with ErrOutside, a path
// that leads outside the directories it may be in.
//
// The functions are safe for concurrent use.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotRegular is wrapped by the error for a file that is not a regular
// file: a named pipe, a device, a socket, a directory.
var ErrNotRegular = errors.New("not a regular file")

// ErrOutside is wrapped by the error for a path that leads, once its
// symbolic links are resolved, outside the directories it may be in.
var ErrOutside = errors.New("outside the directories it may be read from")

// ErrTooLarge is wrapped by ReadFile's error for a file over its limit
// when the caller asked for the whole file.
var ErrTooLarge = errors.New("file too large")

// Open opens the regular file at path for reading without blocking (see
// the package doc). A path whose last element is a symbolic link is
// followed (the caller checks where it leads with Within first). The error
// wraps ErrNotRegular for anything but a regular file, and fs.ErrNotExist
// for a missing one.
func Open(path string) (*os.File, error) {
	f, err := openNonblock(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, Kind(fi.Mode()))
	}
	return f, nil
}

// ReadFile reads the regular file at path as Open opens it: at most max
// bytes (max <= 0: no limit). With whole, a longer file is an error
// wrapping ErrTooLarge; without, its first max bytes are returned.
func ReadFile(path string, max int64, whole bool) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(f, path, max, whole)
}

// read reads f, named path, as ReadFile does.
func read(f *os.File, path string, max int64, whole bool) ([]byte, error) {
	var r io.Reader = f
	if max > 0 {
		r = io.LimitReader(f, max+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if max > 0 && int64(len(data)) > max {
		if whole {
			return nil, fmt.Errorf("%s: %w: larger than %d bytes", path, ErrTooLarge, max)
		}
		data = data[:max]
	}
	return data, nil
}

// Kind names what a file of mode m is, as an error says it: "named pipe",
// "device", "socket", "directory", "symbolic link", "regular file" or
// "special file".
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "regular file"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "device"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	}
	return "special file"
}

// Within resolves the symbolic links of path (absolute) and returns where
// it leads, when that is inside one of roots (each resolved the same way;
// a root that cannot be resolved is skipped). The error wraps
// fs.ErrNotExist when path or a link on its way leads nowhere, and
// ErrOutside, naming the target, when it leads outside every root.
func Within(path string, roots []string) (string, error) { return ResolveRoots(roots).Within(path) }

// Roots are the directories files may be read from, their symbolic links
// resolved once (ResolveRoots): a caller checking many paths against the
// same directories resolves them once, not once a path. A value, safe
// for concurrent use.
type Roots struct{ dirs []string }

// ResolveRoots resolves the symbolic links of roots (absolute); a root
// that cannot be resolved is left out.
func ResolveRoots(roots []string) Roots {
	var r Roots
	for _, root := range roots {
		if dir, err := resolve(root); err == nil {
			r.dirs = append(r.dirs, dir)
		}
	}
	return r
}

// Within is the package's Within, against r.
func (r Roots) Within(path string) (string, error) {
	target, err := resolve(path)
	if err != nil {
		return "", err
	}
	if r.contain(target) {
		return target, nil
	}
	return "", fmt.Errorf("%s: %w: it leads to %s", path, ErrOutside, target)
}

// contain reports whether path (resolved) is inside one of r.
func (r Roots) contain(path string) bool {
	for _, dir := range r.dirs {
		if Inside(path, dir) {
			return true
		}
	}
	return false
}

// Inside reports whether path is root or below it (both clean and
// absolute, links already resolved): the one containment rule for paths
// acpgate checks against directories.
func Inside(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// OpenWithin opens, as Open does, the file path leads to when that is
// inside one of roots (see Within), and returns it with where it leads.
// Where the platform names an open descriptor's file (Linux), the opened
// file itself is checked to be inside a root too, so that a link changed
// between the check and the open is caught.
func OpenWithin(path string, roots []string) (*os.File, string, error) {
	return ResolveRoots(roots).Open(path)
}

// Open is OpenWithin, against r.
func (r Roots) Open(path string) (*os.File, string, error) {
	target, err := r.Within(path)
	if err != nil {
		return nil, "", err
	}
	f, err := Open(target)
	if err != nil {
		return nil, "", err
	}
	if opened, ok := descriptorPath(f); ok && !r.contain(opened) {
		f.Close()
		return nil, "", fmt.Errorf("%s: %w: it leads to %s", path, ErrOutside, opened)
	}
	return f, target, nil
}

// Leads reports whether path leads now, inside r, to the file f has open
// (the same device and inode): a caller that checked f and then had the
// file read another way — by the editor, which reads by path — uses that
// text only when the path still leads to the file it checked, not to one
// swapped in (the file, or a directory on its way, replaced by a link)
// while it was read.
func (r Roots) Leads(path string, f *os.File) bool {
	target, err := r.Within(path)
	if err != nil {
		return false
	}
	now, err := os.Stat(target)
	if err != nil {
		return false
	}
	checked, err := f.Stat()
	return err == nil && os.SameFile(checked, now)
}

// ReadOpen reads f, which Open or OpenWithin opened for path, as ReadFile
// reads: at most max bytes (see ReadFile).
func ReadOpen(f *os.File, path string, max int64, whole bool) ([]byte, error) {
	return read(f, path, max, whole)
}

// ReadWithin reads the file path leads to, as OpenWithin opens it and
// ReadFile reads it.
func ReadWithin(path string, roots []string, max int64, whole bool) ([]byte, error) {
	return ResolveRoots(roots).Read(path, max, whole)
}

// Read is ReadWithin, against r.
func (r Roots) Read(path string, max int64, whole bool) ([]byte, error) {
	f, _, err := r.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(f, path, max, whole)
}

// WriteFile replaces the contents of the regular file at path with data,
// creating it with perm (before the umask) when it does not exist, as Open
// opens: without waiting on a named pipe that has no reader, and refusing
// (ErrNotRegular) anything but a regular file before a byte is written.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	f, err := openWriteNonblock(path, perm)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, Kind(fi.Mode()))
	}
	if err == nil {
		err = f.Truncate(0)
	}
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
