package atomicfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/acpgate/acpgate/internal/base/atomicfile"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	if err := atomicfile.WriteFile(path, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.WriteFile(path, []byte("two"), 0o640); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "two" {
		t.Fatalf("contents %q, %v", got, err)
	}
	if fi, _ := os.Stat(path); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", fi.Mode().Perm())
	}
	if names, _ := os.ReadDir(dir); len(names) != 1 {
		t.Errorf("left behind: %v", names)
	}
	// A missing directory is an error naming the path; nothing is left.
	missing := filepath.Join(dir, "no", "f")
	if err := atomicfile.WriteFile(missing, []byte("x"), 0o600); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing directory: %v", err)
	}
}

// TestWriteThrough: a symbolic link is kept and the file it leads to
// replaced; a plain path is written as WriteFile writes it; a link that
// leads nowhere is an error and nothing is written.
func TestWriteThrough(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.json")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	written, err := atomicfile.WriteThrough(link, []byte("new"), 0o600)
	if err != nil || written != target {
		t.Fatalf("WriteThrough = %q, %v", written, err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Errorf("the target holds %q", b)
	}
	plain := filepath.Join(dir, "plain.json")
	if written, err := atomicfile.WriteThrough(plain, []byte("p"), 0o600); err != nil || written != plain {
		t.Errorf("plain: %q, %v", written, err)
	}
	dangling := filepath.Join(dir, "dangling.json")
	if err := os.Symlink(filepath.Join(dir, "gone", "x.json"), dangling); err != nil {
		t.Fatal(err)
	}
	if _, err := atomicfile.WriteThrough(dangling, []byte("d"), 0o600); err == nil {
		t.Error("a dangling link was written through")
	}
	if _, err := os.Stat(filepath.Join(dir, "gone")); err == nil {
		t.Error("something was written for the dangling link")
	}
}
