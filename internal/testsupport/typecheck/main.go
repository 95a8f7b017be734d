// Command typecheck type-checks this module's packages for other
// platforms, from source and without compiling them: what a cross build
// checks of acpgate's own code (its platform files, build tags and the
// calls they make), at a fraction of the cost of compiling the standard
// library and every dependency once more per platform. make test runs it
// for windows/amd64 and darwin/arm64; cgo is off, as in a cross build.
//
// Each target costs one `go list -deps` (the packages and their files as
// built for it) and one pass over the sources in dependency order: the
// named packages are checked whole, their dependencies (the standard
// library's included) declarations only, as a compiler's export data
// would describe them.
//
// Usage:
//
//	go run ./internal/testsupport/typecheck [-targets windows/amd64,darwin/arm64] [packages]
//
// The packages are go list patterns (default ./...). It prints each error
// as file:line:col: message and exits 1 if there was one.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	targets := flag.String("targets", "windows/amd64,darwin/arm64", "comma-separated GOOS/GOARCH pairs")
	flag.Parse()
	patterns := flag.Args()
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	failed := false
	for _, t := range strings.Split(*targets, ",") {
		goos, goarch, ok := strings.Cut(strings.TrimSpace(t), "/")
		if !ok {
			fmt.Fprintf(os.Stderr, "typecheck: target %q is not GOOS/GOARCH\n", t)
			os.Exit(2)
		}
		pkgs, err := list(goos, goarch, patterns)
		if err != nil {
			fmt.Fprintf(os.Stderr, "typecheck: %s/%s: %v\n", goos, goarch, err)
			os.Exit(2)
		}
		checked, errs := check(goarch, pkgs)
		for _, e := range errs {
			fmt.Printf("%s/%s: %v\n", goos, goarch, e)
		}
		failed = failed || len(errs) > 0
		fmt.Printf("%s/%s: %d packages, %d errors\n", goos, goarch, checked, len(errs))
	}
	if failed {
		os.Exit(1)
	}
}

// listed is one package as `go list -json` describes it for a target.
type listed struct {
	ImportPath     string
	Dir            string
	GoFiles        []string
	IgnoredGoFiles []string
	// ImportMap maps an import path as written in the source to the
	// package it resolves to, where they differ (vendoring).
	ImportMap map[string]string
	// DepOnly is set for a package listed only as a dependency of the
	// packages the patterns name.
	DepOnly bool
	Error   *struct{ Err string }
}

// excluded reports whether no Go file of p is built for the target: p is
// then not part of that platform's build at all.
func (p *listed) excluded() bool { return len(p.GoFiles) == 0 && len(p.IgnoredGoFiles) > 0 }

// list returns the packages patterns match and all their dependencies as
// built for goos/goarch with cgo off, dependencies first (go list -deps).
func list(goos, goarch string, patterns []string) ([]*listed, error) {
	args := append([]string{"list", "-e", "-deps", "-json=ImportPath,Dir,GoFiles,IgnoredGoFiles,ImportMap,DepOnly,Error"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("go list: %w: %s", err, ee.Stderr)
		}
		return nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs []*listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := new(listed)
		if err := dec.Decode(p); errors.Is(err, io.EOF) {
			return pkgs, nil
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
}

// check type-checks pkgs (in go list -deps order) for goarch: the packages
// the patterns named whole, their dependencies without function bodies.
// It returns how many named packages it checked and every error: the
// named packages' type errors, and whatever keeps a package (named or a
// dependency) from being loaded or type-checked for the target.
func check(goarch string, pkgs []*listed) (int, []error) {
	fset := token.NewFileSet()
	done := map[string]*types.Package{"unsafe": types.Unsafe}
	sizes := types.SizesFor("gc", goarch)
	var errs []error
	checked := 0
	for _, p := range pkgs {
		if p.ImportPath == "unsafe" || p.excluded() {
			continue
		}
		if p.Error != nil {
			errs = append(errs, fmt.Errorf("%s: %s", p.ImportPath, p.Error.Err))
			continue
		}
		files, err := parseFiles(fset, p.Dir, p.GoFiles)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var pkgErrs []error
		conf := types.Config{
			Importer:         importer{done: done, importMap: p.ImportMap},
			Sizes:            sizes,
			IgnoreFuncBodies: p.DepOnly,
			Error:            func(err error) { pkgErrs = append(pkgErrs, err) },
		}
		tp, _ := conf.Check(p.ImportPath, fset, files, nil)
		done[p.ImportPath] = tp
		if len(pkgErrs) > 0 && p.DepOnly {
			errs = append(errs, fmt.Errorf("dependency %s: %w", p.ImportPath, pkgErrs[0]))
		}
		if !p.DepOnly {
			checked++
			errs = append(errs, pkgErrs...)
		}
	}
	return checked, errs
}

// importer resolves a package's imports to the packages already checked.
type importer struct {
	done      map[string]*types.Package
	importMap map[string]string
}

// Import implements types.Importer.
func (im importer) Import(path string) (*types.Package, error) {
	if mapped, ok := im.importMap[path]; ok {
		path = mapped
	}
	if p, ok := im.done[path]; ok && p != nil {
		return p, nil
	}
	return nil, fmt.Errorf("package %s was not loaded for this target", path)
}

// parseFiles parses the named files of dir.
func parseFiles(fset *token.FileSet, dir string, names []string) ([]*ast.File, error) {
	files := make([]*ast.File, 0, len(names))
	for _, n := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}
