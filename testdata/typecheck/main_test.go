package main

import (
	"errors"
	"go/types"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck: a package whose Windows file calls an undeclared function
// type-checks for Linux and macOS and fails for Windows, naming the call.
func TestCheck(t *testing.T) {
	paths, err := listPackages([]string{"./testdata/bad"})
	if err != nil || len(paths) != 1 {
		t.Fatalf("go list: %v %v", paths, err)
	}
	for _, target := range [][2]string{{"linux", "amd64"}, {"darwin", "arm64"}} {
		if errs := check(target[0], target[1], paths); len(errs) != 0 {
			t.Errorf("%s: %v", target, errs)
		}
	}
	errs := check("windows", "amd64", paths)
	var te types.Error
	if len(errs) != 1 || !errors.As(errs[0], &te) || filepath.Base(te.Fset.Position(te.Pos).Filename) != "bad_windows.go" || !strings.Contains(te.Msg, "notDeclaredOnWindows") {
		t.Errorf("windows: %v, want the undeclared call in bad_windows.go", errs)
	}
}
