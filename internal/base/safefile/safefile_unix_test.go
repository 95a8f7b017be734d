//go:build unix

package safefile_test

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/acpgate/acpgate/internal/base/safefile"
)

// TestOpenRefusesWhatIsNotARegularFile: a FIFO with no writer (which a
// plain open waits on forever), a device, a socket and a directory are
// refused at once, with their kind; a regular file, also through a
// symbolic link, opens.
func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	link := filepath.Join(dir, "link")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for path, kind := range map[string]string{fifo: "named pipe", link: "named pipe", "/dev/null": "device", sock: "socket", dir: "directory"} {
		_, err := safefile.ReadFile(path, 0, false)
		if !errors.Is(err, safefile.ErrNotRegular) || !strings.Contains(err.Error(), kind) {
			t.Errorf("ReadFile(%s) = %v, want ErrNotRegular (%s)", path, err, kind)
		}
	}
	text := filepath.Join(dir, "a.md")
	if err := os.WriteFile(text, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(text, filepath.Join(dir, "b.md")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{text, filepath.Join(dir, "b.md")} {
		if b, err := safefile.ReadFile(p, 0, false); err != nil || string(b) != "hello" {
			t.Errorf("ReadFile(%s) = %q, %v", p, b, err)
		}
	}
	if b, err := safefile.ReadFile(text, 3, false); err != nil || string(b) != "hel" {
		t.Errorf("ReadFile cut at 3 = %q, %v", b, err)
	}
	if _, err := safefile.ReadFile(text, 3, true); !errors.Is(err, safefile.ErrTooLarge) {
		t.Errorf("ReadFile whole over 3 = %v, want ErrTooLarge", err)
	}
	if _, err := safefile.ReadFile(filepath.Join(dir, "none"), 0, false); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}

// TestWithin: a path is where its links lead; inside a root (itself
// reached through a link) it is returned resolved, outside it is refused
// naming the target, and a dangling link does not exist.
func TestWithin(t *testing.T) {
	base := t.TempDir()
	root, outside := filepath.Join(base, "repo"), filepath.Join(base, "secret")
	for _, d := range []string{filepath.Join(root, "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string) {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "AGENTS.md"))
	write(filepath.Join(outside, "id_rsa"))
	link(filepath.Join(outside, "id_rsa"), filepath.Join(root, "sub", "AGENTS.md"))
	link("../AGENTS.md", filepath.Join(root, "sub", "inside.md"))
	link(filepath.Join(root, "gone"), filepath.Join(root, "dangling.md"))
	link(outside, filepath.Join(root, "escape"))
	rootLink := filepath.Join(base, "repo-link")
	link(root, rootLink)

	if got, err := safefile.Within(filepath.Join(root, "sub", "inside.md"), []string{rootLink}); err != nil || got != filepath.Join(root, "AGENTS.md") {
		t.Errorf("inside: %q, %v", got, err)
	}
	for _, p := range []string{filepath.Join(root, "sub", "AGENTS.md"), filepath.Join(root, "escape", "id_rsa")} {
		if _, err := safefile.Within(p, []string{root}); !errors.Is(err, safefile.ErrOutside) || !strings.Contains(err.Error(), filepath.Join(outside, "id_rsa")) {
			t.Errorf("Within(%s) = %v, want ErrOutside naming the target", p, err)
		}
	}
	if _, err := safefile.Within(filepath.Join(root, "dangling.md"), []string{root}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("dangling: %v", err)
	}
	if _, err := safefile.Within(filepath.Join(root, "AGENTS.md"), []string{filepath.Join(base, "re")}); !errors.Is(err, safefile.ErrOutside) {
		t.Errorf("a root that is a prefix of the name only: %v", err)
	}
}

// TestWriteFile: a regular file is replaced or created; a FIFO without a
// reader (which a plain open for writing waits on) and a device are
// refused before anything is written.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.txt")
	for _, text := range []string{"a longer first text", "second"} {
		if err := safefile.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(p); string(b) != text {
			t.Errorf("the file holds %q, want %q", b, text)
		}
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, "/dev/null"} {
		if err := safefile.WriteFile(path, []byte("x"), 0o644); !errors.Is(err, safefile.ErrNotRegular) {
			t.Errorf("WriteFile(%s) = %v, want ErrNotRegular", path, err)
		}
	}
	if _, err := safefile.ReadWithin(fifo, []string{dir}, 0, false); !errors.Is(err, safefile.ErrNotRegular) {
		t.Errorf("ReadWithin(fifo) = %v", err)
	}
	if b, err := safefile.ReadWithin(p, []string{dir}, 0, false); err != nil || string(b) != "second" {
		t.Errorf("ReadWithin = %q, %v", b, err)
	}
}

// TestRoots: roots resolved once check many paths as Within does: a path
// through a link to a root's inside is inside, a named pipe is resolved
// without being opened (nothing blocks) and refused only by the open, and
// a path 1,000 directories deep resolves where it is.
func TestRoots(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	deep := filepath.Join(root, strings.Repeat("d/", 1000))
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(root, "AGENTS.md")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	roots := safefile.ResolveRoots([]string{link, filepath.Join(base, "gone")})
	if got, err := roots.Within(filepath.Join(link, "AGENTS.md")); err != nil || got != fifo {
		t.Errorf("the FIFO through the link: %q, %v", got, err)
	}
	if _, _, err := roots.Open(fifo); !errors.Is(err, safefile.ErrNotRegular) {
		t.Errorf("opening the FIFO: %v, want ErrNotRegular", err)
	}
	if got, err := roots.Within(deep); err != nil || got != filepath.Clean(deep) {
		t.Errorf("1,000 deep: %q, %v", got, err)
	}
	if _, err := roots.Within(filepath.Join(deep, "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	if _, err := roots.Within(base); !errors.Is(err, safefile.ErrOutside) {
		t.Errorf("the roots' parent: %v, want ErrOutside", err)
	}
}

// TestLeads: a path leads to the file opened from it until it, or a
// directory on its way, is swapped for a link elsewhere, or the file is
// replaced; writing the file in place keeps it the same file.
func TestLeads(t *testing.T) {
	base := t.TempDir()
	root, outside := filepath.Join(base, "repo"), filepath.Join(base, "out")
	for _, d := range []string{filepath.Join(root, "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(root, "sub", "AGENTS.md")
	for _, p := range []string{file, filepath.Join(outside, "AGENTS.md")} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	roots := safefile.ResolveRoots([]string{root})
	open := func() *os.File {
		f, _, err := roots.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	f := open()
	if err := os.WriteFile(file, []byte("edited in place"), 0o600); err != nil || !roots.Leads(file, f) {
		t.Errorf("after an edit in place: %v, want the same file", err)
	}
	if err := os.Rename(filepath.Join(root, "sub"), filepath.Join(root, "sub.old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "sub")); err != nil {
		t.Fatal(err)
	}
	if roots.Leads(file, f) {
		t.Error("its directory swapped for a link outside: still the same file")
	}
	if err := os.Remove(filepath.Join(root, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(root, "sub.old"), filepath.Join(root, "sub")); err != nil {
		t.Fatal(err)
	}
	if !roots.Leads(file, f) {
		t.Error("its directory put back: not the same file")
	}
	if err := os.Rename(file, file+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil || roots.Leads(file, f) {
		t.Errorf("replaced by another file: %v, still the same file", err)
	}
}
