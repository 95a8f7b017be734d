package sysprompt

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acpgate/acpgate/internal/base/safefile"
)

// This file is the AGENTS.md files: which of them hold a session's
// instructions, and reading them.

// FileName is the name of an instructions file: AGENTS.md, the
// convention shared by coding agents.
const FileName = "AGENTS.md"

// MaxReadBytes bounds how much of one file DiskReader reads.
const MaxReadBytes = 1 << 20

// MaxDirs bounds the walk up from a root: at most this many directories,
// the root included, are looked at for a .git and an AGENTS.md. A root
// deeper than that below its repository root (or home) is taken as in no
// repository: it has its own file only.
const MaxDirs = 64

// ProjectFiles returns the AGENTS.md files that may hold the project
// instructions of a session working in roots (its cwd, then its
// additional directories; absolute paths): for each root, the AGENTS.md
// of the root and of its parents up to the repository root (the first
// directory, going up, that holds a .git), outermost first. A root in no
// repository goes up to the directory below home (the user's home
// directory; "" for none) when it is under home, and has its own file
// only when it is not. A path is listed once, the first time. It looks
// for .git on the disk, and at nothing else, in at most MaxDirs
// directories a root.
func ProjectFiles(roots []string, home string) []string {
	if home != "" {
		home = filepath.Clean(home)
	}
	var out []string
	for _, root := range roots {
		for _, dir := range projectDirs(filepath.Clean(root), home) {
			if p := filepath.Join(dir, FileName); !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// ProjectRoots returns the project of each of roots (as ProjectFiles
// finds it: its repository root, or the directory the walk up stops at),
// once each: the directories whose files may hold project instructions.
func ProjectRoots(roots []string, home string) []string {
	if home != "" {
		home = filepath.Clean(home)
	}
	var out []string
	for _, root := range roots {
		if top := projectDirs(filepath.Clean(root), home)[0]; !slices.Contains(out, top) {
			out = append(out, top)
		}
	}
	return out
}

// projectDirs returns root's project directories, outermost first: at
// most MaxDirs.
func projectDirs(root, home string) []string {
	dirs := []string{}
	for dir := root; ; {
		if dir == home && dir != root {
			break // under home, in no repository
		}
		if len(dirs) == MaxDirs {
			return []string{root} // too deep to tell: as in no repository
		}
		dirs = append(dirs, dir)
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			break // the repository root (.git is a directory, or a worktree's file)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return []string{root} // in no repository, not under home
		}
		dir = parent
	}
	slices.Reverse(dirs)
	return dirs
}

// ReadFunc reads the text of the file at path. A missing file is an
// error wrapping fs.ErrNotExist.
type ReadFunc func(ctx context.Context, path string) (string, error)

// DiskReader is a ReadFunc reading from the disk, at most MaxReadBytes of
// a regular file that path leads to inside one of roots (resolved once,
// here), opened so that it cannot block (internal/base/safefile).
func DiskReader(roots []string) ReadFunc {
	within := safefile.ResolveRoots(roots)
	return func(_ context.Context, path string) (string, error) {
		data, err := within.Read(path, MaxReadBytes, false)
		return string(data), err
	}
}

// Skipped is an instructions file that exists but is not read, and why:
// Err wraps safefile.ErrOutside (it leads outside the directories it may
// be read from) or safefile.ErrNotRegular (a named pipe, a device, a
// socket, a directory), or is the error that opening it gave.
type Skipped struct {
	Path string
	Err  error
}

// Load reads the files at paths, in order, with read and returns the
// instructions of those that exist, each named after its path, and the
// files it skipped. Only a regular file that the path leads to inside one
// of roots is read (its symbolic links resolved; checked by opening it,
// without blocking, see internal/base/safefile); anything else is skipped with
// a warning in the log, before read is called. read's text is used only
// when the path still leads, after it, to the file checked (safefile's
// Roots.Leads); else the checked file's own text is, with a warning, so
// that a file swapped while the editor reads it cannot bring in another.
// A file that is not on the disk is left out without calling read (an
// editor is asked only for files that exist); one that read fails on is
// logged and left out, and so is a blank one. The texts are as read:
// Build cuts them. roots are resolved once and each path once, so the
// cost is linear in the paths' depth; Load stops, with what it read so
// far, when ctx is done.
func Load(ctx context.Context, paths, roots []string, read ReadFunc, logger *slog.Logger) ([]Instructions, []Skipped) {
	var out []Instructions
	var skipped []Skipped
	within := safefile.ResolveRoots(roots)
	for _, p := range paths {
		if ctx.Err() != nil {
			break
		}
		f, _, err := within.Open(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			logger.Warn("instructions file skipped", "path", p, "err", err)
			skipped = append(skipped, Skipped{Path: p, Err: err})
			continue
		}
		text, err := read(ctx, p)
		if err == nil && !within.Leads(p, f) {
			logger.Warn("instructions file changed while it was read; the file checked is used", "path", p)
			var data []byte
			data, err = safefile.ReadOpen(f, p, MaxReadBytes, false)
			text = string(data)
		}
		f.Close()
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			logger.Warn("instructions file unreadable", "path", p, "err", err)
			continue
		case strings.TrimSpace(text) == "":
			continue
		}
		out = append(out, Instructions{Source: p, Text: text})
	}
	return out, skipped
}
