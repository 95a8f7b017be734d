package main

import (
	"errors"
	"go/types"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck: a package whose Windows file calls undeclared functions (in a
// declaration and in a function body) type-checks for Linux and macOS and
// fails for Windows, naming both calls.
func TestCheck(t *testing.T) {
	for _, target := range [][2]string{{"linux", "amd64"}, {"darwin", "arm64"}} {
		if n, errs := check(target[1], mustList(t, target[0], target[1], "./testdata/bad")); n != 1 || len(errs) != 0 {
			t.Errorf("%s: %d packages checked, errors %v; want 1 and none", target, n, errs)
		}
	}
	n, errs := check("amd64", mustList(t, "windows", "amd64", "./testdata/bad"))
	if n != 1 || len(errs) != 2 {
		t.Fatalf("windows: %d packages, %v; want 1 and the two undeclared calls", n, errs)
	}
	for i, name := range []string{"notDeclaredOnWindows", "notDeclaredInABody"} {
		var te types.Error
		if !errors.As(errs[i], &te) || filepath.Base(te.Fset.Position(te.Pos).Filename) != "bad_windows.go" || !strings.Contains(te.Msg, name) {
			t.Errorf("windows: error %d is %v, want the call of %s in bad_windows.go", i, errs[i], name)
		}
	}
}

// TestPlatformPackage: a package with files for each platform checks
// clean for Windows, its imports (the standard library's, as built for
// Windows) loaded from source first.
func TestPlatformPackage(t *testing.T) {
	pkgs := mustList(t, "windows", "amd64", "../../../mcpclient/proctree")
	n, errs := check("amd64", pkgs)
	if n != 1 || len(errs) != 0 {
		t.Errorf("proctree for windows: %d packages, %v; want 1, no errors", n, errs)
	}
	deps := 0
	for _, p := range pkgs {
		if p.DepOnly {
			deps++
		}
	}
	if deps < 10 {
		t.Errorf("%d dependencies listed, want the standard library's too", deps)
	}
}

// mustList is list, failing the test on an error.
func mustList(t *testing.T, goos, goarch string, patterns ...string) []*listed {
	t.Helper()
	pkgs, err := list(goos, goarch, patterns)
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}
