package doccheck

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
)

var (
	// mapLine is a line of a file map in a package doc as go/ast's
	// CommentGroup.Text gives it: indented (a code block), a Go file's
	// name first, then what the file holds.
	mapLine = regexp.MustCompile(`^[\t ]+([A-Za-z0-9_]+\.go)\b`)
	// goFile is a Go file's name anywhere in a map line ("tree_unix.go
	// ... (tree_windows.go: its job object)").
	goFile = regexp.MustCompile(`\b[A-Za-z0-9_]+\.go\b`)
)

// fileMap returns the Go files the package doc of the package in dir
// names in its file map, and whether the doc has one (a line of it that
// starts with a file's name). The package doc is the first "// Package"
// comment of the directory's non-test files.
func fileMap(fsys fs.FS, dir string, files []string) (named map[string]bool, ok bool, err error) {
	for _, name := range files {
		src, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return nil, false, err
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return nil, false, err
		}
		if f.Doc == nil || !strings.HasPrefix(f.Doc.Text(), "Package ") {
			continue
		}
		named = map[string]bool{}
		for _, line := range strings.Split(f.Doc.Text(), "\n") {
			if !mapLine.MatchString(line) {
				continue
			}
			for _, n := range goFile.FindAllString(line, -1) {
				named[n] = true
			}
		}
		return named, len(named) > 0, nil
	}
	return nil, false, nil
}

// checkFileMaps returns, for every package under fsys's root whose doc
// has a file map, the non-test files the map omits and the files it names
// that the directory does not hold; and the directories with a map.
// Directories named testdata or node_modules, and hidden ones, hold no
// packages.
func checkFileMaps(fsys fs.FS) (problems []string, mapped []string, err error) {
	err = fs.WalkDir(fsys, ".", func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if base := path.Base(dir); dir != "." && (base == "testdata" || base == "node_modules" || strings.HasPrefix(base, ".")) {
			return fs.SkipDir
		}
		entries, err := fs.ReadDir(fsys, dir)
		if err != nil {
			return err
		}
		var files []string
		for _, e := range entries {
			if n := e.Name(); !e.IsDir() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
				files = append(files, n)
			}
		}
		named, ok, err := fileMap(fsys, dir, files)
		if err != nil || !ok {
			return err
		}
		mapped = append(mapped, dir)
		for _, n := range files {
			if !named[n] {
				problems = append(problems, dir+": the package doc's file map omits "+n)
			}
		}
		var names []string
		for n := range named {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if !slices.Contains(files, n) {
				problems = append(problems, dir+": the package doc's file map names "+n+", which is not a file of the package")
			}
		}
		return nil
	})
	return problems, mapped, err
}

// TestFileMaps checks the file map of every package of the module whose
// doc has one: each non-test file named, and no name that is not a file.
func TestFileMaps(t *testing.T) {
	problems, mapped, err := checkFileMaps(os.DirFS(repoRoot))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	// The packages known to have maps: a check that finds none would pass
	// whatever the maps say.
	for _, dir := range []string{"acp", "mcpclient", "mcpclient/oauth"} {
		if !slices.Contains(mapped, dir) {
			t.Errorf("%s: no file map found in its package doc (mapped: %v)", dir, mapped)
		}
	}
}

// TestCheckFileMapsFindsDrift runs the check on a small tree: a map that
// omits a file, one that names a file that is gone, and packages without
// a map, which are not checked.
func TestCheckFileMapsFindsDrift(t *testing.T) {
	doc := "// Package p does things.\n//\n//\tdoc.go   this map\n//\ta.go     the a (see doc.go)\n//\tgone.go  removed since\npackage p\n"
	fsys := fstest.MapFS{
		"p/doc.go":              {Data: []byte(doc)},
		"p/a.go":                {Data: []byte("package p\n")},
		"p/new.go":              {Data: []byte("package p\n")},
		"p/a_test.go":           {Data: []byte("package p\n")},
		"q/q.go":                {Data: []byte("// Package q has no map; it mentions q.go.\npackage q\n")},
		"p/testdata/x/doc.go":   {Data: []byte(doc)},
		"node_modules/y/doc.go": {Data: []byte(doc)},
	}
	problems, mapped, err := checkFileMaps(fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"p: the package doc's file map omits new.go",
		"p: the package doc's file map names gone.go, which is not a file of the package",
	}
	if !slices.Equal(problems, want) || !slices.Equal(mapped, []string{"p"}) {
		t.Errorf("problems %q, mapped %q; want %q, [p]", problems, mapped, want)
	}
}
