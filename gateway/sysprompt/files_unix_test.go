//go:build unix

package sysprompt_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpgate/acpgate/gateway/sysprompt"
	"github.com/acpgate/acpgate/internal/base/safefile"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// TestLoadSkipsWhatLeadsAwayOrBlocks: an AGENTS.md that is a FIFO (a
// plain open waits for a writer forever), a link to a file outside the
// roots (a cloned repository pointing at ~/.ssh/id_rsa) and a link to a
// device are skipped, each with its reason, without asking the reader; a
// link that stays inside the roots is read.
func TestLoadSkipsWhatLeadsAwayOrBlocks(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	repo, home := filepath.Join(base, "repo"), filepath.Join(base, "home")
	mkdirs(t, base, "repo/fifo", "repo/out", "repo/dev", "repo/in", "home")
	secret := testbin.WriteFile(t, home, "id_rsa", "PRIVATE KEY")
	testbin.WriteFile(t, repo, "rules.md", "inside rule")
	fifo := filepath.Join(repo, "fifo", "AGENTS.md")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := func(target, p string) {
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	out, dev, in := filepath.Join(repo, "out", "AGENTS.md"), filepath.Join(repo, "dev", "AGENTS.md"), filepath.Join(repo, "in", "AGENTS.md")
	link(secret, out)
	link("/dev/zero", dev)
	link("../rules.md", in)
	var asked []string
	read := func(ctx context.Context, path string) (string, error) {
		asked = append(asked, path)
		return sysprompt.DiskReader([]string{repo})(ctx, path)
	}
	done := make(chan struct{})
	var got []sysprompt.Instructions
	var skipped []sysprompt.Skipped
	go func() {
		defer close(done)
		got, skipped = sysprompt.Load(context.Background(), []string{fifo, out, dev, in}, []string{repo}, read, slog.New(slog.DiscardHandler))
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Load blocked (on the FIFO)")
	}
	if len(got) != 1 || got[0].Source != in || got[0].Text != "inside rule" || len(asked) != 1 || asked[0] != in {
		t.Errorf("read %+v, asked %v; want only the link inside", got, asked)
	}
	want := map[string]error{fifo: safefile.ErrNotRegular, out: safefile.ErrOutside, dev: safefile.ErrOutside}
	if len(skipped) != len(want) {
		t.Fatalf("skipped %+v", skipped)
	}
	for _, sk := range skipped {
		if !errors.Is(sk.Err, want[sk.Path]) {
			t.Errorf("%s skipped for %v, want %v", sk.Path, sk.Err, want[sk.Path])
		}
	}
}

// TestLoadKeepsToTheCheckedFile: when the file read (the editor reads by
// path) is swapped, after the check, for a link to a file outside the
// roots, the text read is not used: the checked file's own is, with a
// warning. A file changed in place (the same file) keeps the read text.
func TestLoadKeepsToTheCheckedFile(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), t.TempDir()
	secret := testbin.WriteFile(t, outside, "id_rsa", "KEY")
	swapped := testbin.WriteFile(t, dir, "AGENTS.md", "checked\n")
	mkdirs(t, dir, "in")
	edited := testbin.WriteFile(t, filepath.Join(dir, "in"), "AGENTS.md", "on disk\n")
	read := func(_ context.Context, path string) (string, error) {
		if path == swapped {
			if err := os.Rename(path, path+".moved"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(secret, path); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path) // what an editor reading by path gets
			return string(data), err
		}
		return "unsaved in the editor\n", nil
	}
	var logs strings.Builder
	got, _ := sysprompt.Load(context.Background(), []string{swapped, edited}, []string{dir}, read, slog.New(slog.NewTextHandler(&logs, nil)))
	want := []sysprompt.Instructions{{Source: swapped, Text: "checked\n"}, {Source: edited, Text: "unsaved in the editor\n"}}
	if !slices.Equal(got, want) {
		t.Errorf("loaded %+v, want %+v", got, want)
	}
	if !strings.Contains(logs.String(), "changed while it was read") {
		t.Errorf("no warning: %s", logs.String())
	}
}
