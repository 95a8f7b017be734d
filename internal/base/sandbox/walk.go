package sandbox

import (
	"os"
	"path/filepath"
	"slices"
)

// maxWalk bounds the entries one walk around the hidden paths may
// produce (a directory of a million files on the way to a hidden path).
const maxWalk = 100_000

// tree is one path a rule grants, with what it is.
type tree struct {
	path string
	dir  bool
}

// beneathExcept returns the trees that together grant root but none of
// hide: root itself when no hidden path lies inside it; else, for every
// directory on the way from root to a hidden path, its other entries
// (the directories on the way are not granted themselves, so they cannot
// be listed, and what is made in them later cannot be read). A symbolic
// link is followed to what it names, as a rule is.
// ok is false when the walk met more than maxWalk entries.
//
// A hidden path that does not exist is left out: there is nothing to
// read, and a tree split around it would keep the process from making
// files where it may write (a workspace that is the home directory).
func beneathExcept(root string, hide []string) (out []tree, ok bool) {
	var present []string
	for _, h := range hide {
		if _, err := os.Lstat(h); err == nil {
			present = append(present, h)
		}
	}
	w := walker{hide: present, seen: map[string]bool{}}
	w.visit(root)
	return w.out, w.n <= maxWalk
}

type walker struct {
	hide []string
	seen map[string]bool // directories walked, against link loops
	out  []tree
	n    int
}

func (w *walker) visit(path string) {
	if w.n > maxWalk {
		return
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return // a dangling link or a vanished entry: nothing to grant
	}
	fi, err := os.Stat(real)
	if err != nil {
		return
	}
	if slices.ContainsFunc(w.hide, func(h string) bool { return within(real, h) }) {
		return
	}
	inside := slices.ContainsFunc(w.hide, func(h string) bool { return within(h, real) })
	if !inside || !fi.IsDir() {
		w.out = append(w.out, tree{path: real, dir: fi.IsDir()})
		w.n++
		return
	}
	if w.seen[real] {
		return
	}
	w.seen[real] = true
	entries, err := os.ReadDir(real)
	if err != nil {
		return // unreadable: nothing of it is granted
	}
	for _, e := range entries {
		w.n++
		w.visit(filepath.Join(real, e.Name()))
	}
}
