package sysprompt_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/gateway/sysprompt"
	"github.com/acpgate/acpgate/internal/base/safefile"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// mkdirs creates each directory under base and returns base.
func mkdirs(t *testing.T, base string, dirs ...string) string {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return base
}

// TestProjectFiles: from each root up to its repository root (.git, a
// directory or a file), outermost first; up to the directory below home
// when in no repository; the root alone when neither; each file once.
func TestProjectFiles(t *testing.T) {
	t.Parallel()
	base := mkdirs(t, t.TempDir(), "repo/.git", "repo/a/b", "wt/sub", "home/proj/x", "loose/y")
	testbin.WriteFile(t, filepath.Join(base, "wt"), ".git", "gitdir: elsewhere\n")
	home := filepath.Join(base, "home")
	agents := func(dirs ...string) []string {
		var out []string
		for _, d := range dirs {
			out = append(out, filepath.Join(base, d, sysprompt.FileName))
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		roots []string
		want  []string
	}{
		{"repository", []string{"repo/a/b"}, agents("repo", "repo/a", "repo/a/b")},
		{"repository root", []string{"repo"}, agents("repo")},
		{"worktree (.git file)", []string{"wt/sub"}, agents("wt", "wt/sub")},
		{"under home", []string{"home/proj/x"}, agents("home/proj", "home/proj/x")},
		{"home itself", []string{"home"}, agents("home")},
		{"neither", []string{"loose/y"}, agents("loose/y")},
		{"two roots sharing a repository", []string{"repo/a/b", "repo/a"}, agents("repo", "repo/a", "repo/a/b")},
		{"two roots", []string{"repo/a", "home/proj/x"}, agents("repo", "repo/a", "home/proj", "home/proj/x")},
	} {
		var roots []string
		for _, r := range tc.roots {
			roots = append(roots, filepath.Join(base, r))
		}
		if got := sysprompt.ProjectFiles(roots, home); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestLoad: files that exist are read with the read function (the editor),
// in order; one that is not on the disk is not asked for; one that
// cannot be read is logged and left out, and so is a blank one.
func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outer := testbin.WriteFile(t, dir, "AGENTS.md", "outer on disk\n")
	mkdirs(t, dir, "in", "bad", "blank", "gone", "dir/AGENTS.md")
	inner := testbin.WriteFile(t, filepath.Join(dir, "in"), "AGENTS.md", "inner\n")
	bad := testbin.WriteFile(t, filepath.Join(dir, "bad"), "AGENTS.md", "x")
	blank := testbin.WriteFile(t, filepath.Join(dir, "blank"), "AGENTS.md", "  \n")
	gone := testbin.WriteFile(t, filepath.Join(dir, "gone"), "AGENTS.md", "deleted in the editor")
	missing := filepath.Join(dir, "none", "AGENTS.md")
	var asked []string
	read := func(ctx context.Context, path string) (string, error) {
		asked = append(asked, path)
		switch path {
		case outer:
			return "outer, unsaved in the editor\n", nil
		case bad:
			return "", errors.New("the editor refused")
		case gone:
			return "", fmt.Errorf("no buffer: %w", fs.ErrNotExist)
		}
		return sysprompt.DiskReader([]string{dir})(ctx, path)
	}
	var logs strings.Builder
	got, skipped := sysprompt.Load(context.Background(), []string{outer, missing, filepath.Join(dir, "dir", "AGENTS.md"), bad, blank, gone, inner}, []string{dir}, read,
		slog.New(slog.NewTextHandler(&logs, nil)))
	if len(skipped) != 1 || skipped[0].Path != filepath.Join(dir, "dir", "AGENTS.md") || !errors.Is(skipped[0].Err, safefile.ErrNotRegular) {
		t.Errorf("skipped %+v, want the directory", skipped)
	}
	want := []sysprompt.Instructions{{Source: outer, Text: "outer, unsaved in the editor\n"}, {Source: inner, Text: "inner\n"}}
	if !slices.Equal(got, want) {
		t.Errorf("loaded %+v", got)
	}
	if !slices.Equal(asked, []string{outer, bad, blank, gone, inner}) {
		t.Errorf("asked for %v", asked)
	}
	if !strings.Contains(logs.String(), "the editor refused") || strings.Count(logs.String(), "unreadable") != 1 || strings.Count(logs.String(), "skipped") != 1 {
		t.Errorf("logs: %s", logs.String())
	}
}

// TestProjectFilesDeep: the walk up looks at MaxDirs directories at
// most: a root that far below its repository root has its own file only,
// as in no repository; one just within reaches the repository root.
func TestProjectFilesDeep(t *testing.T) {
	t.Parallel()
	base := mkdirs(t, t.TempDir(), ".git")
	within := filepath.Join(base, strings.Repeat("d/", sysprompt.MaxDirs-1))
	deep := filepath.Join(within, "d")
	mkdirs(t, deep)
	if got := sysprompt.ProjectFiles([]string{within}, ""); len(got) != sysprompt.MaxDirs || got[0] != filepath.Join(base, sysprompt.FileName) {
		t.Errorf("within the bound: %d files from %v", len(got), got[:1])
	}
	if got := sysprompt.ProjectFiles([]string{deep}, ""); !slices.Equal(got, []string{filepath.Join(deep, sysprompt.FileName)}) {
		t.Errorf("past the bound: %v, want the root's own file", got)
	}
	if got := sysprompt.ProjectRoots([]string{deep}, ""); !slices.Equal(got, []string{deep}) {
		t.Errorf("past the bound, the project is %v, want the root", got)
	}
}

// TestLoadStopsWhenCancelled: Load reads nothing more once its context is
// done, and returns what it read before.
func TestLoadStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mkdirs(t, dir, "a")
	first := testbin.WriteFile(t, dir, "AGENTS.md", "first\n")
	second := testbin.WriteFile(t, filepath.Join(dir, "a"), "AGENTS.md", "second\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var asked []string
	read := func(ctx context.Context, path string) (string, error) {
		asked = append(asked, path)
		cancel() // the turn is cancelled while the first file is read
		return sysprompt.DiskReader([]string{dir})(ctx, path)
	}
	got, _ := sysprompt.Load(ctx, []string{first, second}, []string{dir}, read, slog.New(slog.DiscardHandler))
	if !slices.Equal(asked, []string{first}) || len(got) != 1 || got[0].Source != first {
		t.Errorf("asked for %v, loaded %+v; want the first file only", asked, got)
	}
}
