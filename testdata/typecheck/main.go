// Command typecheck type-checks this module's packages for other
// platforms, from source and without compiling them: what a cross build
// checks of acpgate's own code (its platform files, build tags and the
// calls they make), at a fraction of the cost of compiling the standard
// library and every dependency once more per platform. make test runs it
// for windows/amd64 and darwin/arm64; cgo is off, as in a cross build.
//
// Usage:
//
//	go run ./testdata/typecheck [-targets windows/amd64,darwin/arm64] [packages]
//
// The packages are go list patterns (default ./...). It prints each error
// as file:line:col: message and exits 1 if there was one.
package main

import (
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
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
	paths, err := listPackages(patterns)
	if err != nil {
		fmt.Fprintln(os.Stderr, "typecheck:", err)
		os.Exit(2)
	}
	failed := false
	for _, t := range strings.Split(*targets, ",") {
		goos, goarch, ok := strings.Cut(strings.TrimSpace(t), "/")
		if !ok {
			fmt.Fprintf(os.Stderr, "typecheck: target %q is not GOOS/GOARCH\n", t)
			os.Exit(2)
		}
		errs := check(goos, goarch, paths)
		for _, e := range errs {
			fmt.Printf("%s/%s: %v\n", goos, goarch, e)
		}
		failed = failed || len(errs) > 0
		fmt.Printf("%s/%s: %d packages, %d errors\n", goos, goarch, len(paths), len(errs))
	}
	if failed {
		os.Exit(1)
	}
}

// listPackages returns the import paths patterns match (go list).
func listPackages(patterns []string) ([]string, error) {
	out, err := exec.Command("go", append([]string{"list", "-e", "-f", "{{.ImportPath}}"}, patterns...)...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("go list: %w: %s", err, ee.Stderr)
		}
		return nil, fmt.Errorf("go list: %w", err)
	}
	return strings.Fields(string(out)), nil
}

// check type-checks the non-test files of each package in paths as built
// for goos/goarch, with cgo off. The imports, the standard library's
// included, are type-checked from source too.
func check(goos, goarch string, paths []string) []error {
	ctxt := build.Default
	ctxt.GOOS, ctxt.GOARCH, ctxt.CgoEnabled = goos, goarch, false
	// The source importer resolves imports with build.Default.
	build.Default = ctxt
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "source", nil)
	wd, _ := os.Getwd()
	var errs []error
	for _, path := range paths {
		bp, err := ctxt.Import(path, wd, 0)
		var noGo *build.NoGoError
		if errors.As(err, &noGo) {
			continue // nothing of it is built for this platform
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		files, err := parseFiles(fset, bp.Dir, bp.GoFiles)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		conf := types.Config{Importer: imp.(types.ImporterFrom), Error: func(err error) { errs = append(errs, err) }}
		_, _ = conf.Check(path, fset, files, nil)
	}
	return errs
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
