package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acpgate/acpgate/internal/base/safefile"
)

// roots are the directories a session's paths must be inside: its cwd and
// its additional directories.
type roots []string

// check returns path, cleaned, if it is absolute, has no ".." element and
// is inside one of the roots once every symbolic link in it (and in the
// roots) is resolved; else an error wrapping ErrNotAbsolute, ErrDotDot or
// ErrOutside. A path that does not exist yet is checked by its deepest
// existing ancestor.
func (r roots) check(path string) (string, error) {
	if path == "" || !filepath.IsAbs(path) {
		return "", fmt.Errorf("%w: %q (give the absolute path, e.g. %s)", ErrNotAbsolute, path, filepath.Join(r.first(), filepath.FromSlash(strings.TrimPrefix(filepath.ToSlash(path), "./"))))
	}
	if slices.Contains(strings.FieldsFunc(path, isSeparator), "..") {
		return "", fmt.Errorf("%w: %s (name the file without ..)", ErrDotDot, path)
	}
	clean := filepath.Clean(path)
	real, err := realPath(clean)
	if err != nil {
		return "", err
	}
	for _, root := range r {
		rr, err := filepath.EvalSymlinks(root)
		if err == nil && safefile.Inside(real, rr) {
			return clean, nil
		}
	}
	if real != clean {
		return "", fmt.Errorf("%w: %s (it leads to %s) is not inside %s", ErrOutside, clean, real, r.list())
	}
	return "", fmt.Errorf("%w: %s is not inside %s", ErrOutside, clean, r.list())
}

// first is the cwd ("/" when there is none).
func (r roots) first() string {
	if len(r) == 0 {
		return string(filepath.Separator)
	}
	return r[0]
}

// list names the roots for an error message.
func (r roots) list() string {
	if len(r) == 1 {
		return "the workspace " + r[0]
	}
	return "the workspace directories " + strings.Join(r, ", ")
}

func isSeparator(c rune) bool { return c < 0x80 && os.IsPathSeparator(uint8(c)) }

// maxLinks bounds the symbolic links followed while resolving a path.
const maxLinks = 40

// realPath resolves the symbolic links of the clean absolute path p: its
// deepest existing ancestor (p itself when it exists) is resolved and the
// rest, which does not exist, is appended. A link whose target does not
// exist is followed to where it leads (writing through it would create
// the file there).
func realPath(p string) (string, error) { return resolve(p, 0) }

func resolve(p string, links int) (string, error) {
	var rest []string
	for cur := p; ; {
		fi, err := os.Lstat(cur)
		switch {
		case err == nil:
			resolved, err := filepath.EvalSymlinks(cur)
			if errors.Is(err, fs.ErrNotExist) && fi.Mode()&fs.ModeSymlink != 0 && links < maxLinks {
				resolved, err = dangling(cur, links)
			}
			if err != nil {
				return "", fmt.Errorf("resolving %s: %w", cur, err)
			}
			slices.Reverse(rest)
			return filepath.Join(append([]string{resolved}, rest...)...), nil
		case !errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("checking %s: %w", cur, err)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		rest = append(rest, filepath.Base(cur))
		cur = parent
	}
}

// dangling resolves the symbolic link at p whose target does not exist.
// A target with a ".." element is refused: ".." after a link is not what
// cleaning the path lexically says.
func dangling(p string, links int) (string, error) {
	target, err := os.Readlink(p)
	if err != nil {
		return "", err
	}
	if slices.Contains(strings.FieldsFunc(target, isSeparator), "..") {
		return "", fmt.Errorf("%w: the link %s leads to %s", ErrDotDot, p, target)
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(p), target)
	}
	return resolve(filepath.Clean(target), links+1)
}
