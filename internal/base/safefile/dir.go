package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// This file is what a reader of a folder of files (a project's skills)
// needs beyond one file: listing a directory without blocking, and a
// file's hard links.

// ErrNotDir is wrapped by the error for a path that is not a directory
// where one was expected.
var ErrNotDir = errors.New("not a directory")

// ErrLinked is wrapped by the error for a regular file with more than one
// hard link: another name of it may be outside the directories it may be
// read from, which no resolution of the path can tell.
var ErrLinked = errors.New("a file with more than one hard link")

// SingleLink returns nil when f has one hard link, and an error wrapping
// ErrLinked (naming path) when it has more.
func SingleLink(f *os.File, path string) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if n := links(fi); n > 1 {
		return fmt.Errorf("%s: %w (%d links)", path, ErrLinked, n)
	}
	return nil
}

// ReadDir lists the directory path leads to inside r (see Within), at
// most max entries (max <= 0: no limit; more is not an error: the first
// max, in directory order, are returned). The directory is opened as Open
// opens a file, so that a named pipe or device put in its place cannot
// block, and checked on the descriptor: anything but a directory is an
// error wrapping ErrNotDir.
func (r Roots) ReadDir(path string, max int) ([]fs.DirEntry, error) {
	target, err := r.Within(path)
	if err != nil {
		return nil, err
	}
	f, err := openNonblock(target)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotDir, Kind(fi.Mode()))
	}
	if opened, ok := descriptorPath(f); ok && !r.contain(opened) {
		return nil, fmt.Errorf("%s: %w: it leads to %s", path, ErrOutside, opened)
	}
	n := max
	if n <= 0 {
		n = -1
	}
	entries, err := f.ReadDir(n)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return entries, err
}
