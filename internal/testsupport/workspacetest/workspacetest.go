//go:build unix

// Package workspacetest checks that the workspace tools keep their rules
// over a backend: the same tests run the tools over the local backend
// (package workspace) and over the client's backend (implemented outside
// gateway), in temporary directories, running real commands (with sh, on
// Unix).
package workspacetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/workspace"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// Backend is the backend under test, made fresh for each test.
type Backend struct {
	Files     workspace.Files
	Terminals workspace.Terminals
}

// ws is one test's workspace: its directories and tools.
type ws struct {
	t          *testing.T
	cwd, extra string // the session's cwd and its additional directory
	outside    string // a directory outside both
	tools      map[string]gateway.Tool
}

// setup makes the directories and the tools over b, with opts applied
// over the test's defaults.
func setup(t *testing.T, newBackend func(t *testing.T) Backend, opts workspace.Options) *ws {
	t.Helper()
	b := newBackend(t)
	w := &ws{t: t, cwd: t.TempDir(), extra: t.TempDir(), outside: t.TempDir(), tools: map[string]gateway.Tool{}}
	opts.Files, opts.Terminals, opts.Cwd, opts.Dirs = b.Files, b.Terminals, w.cwd, []string{w.extra}
	for _, tl := range workspace.Tools(opts) {
		w.tools[tl.Name] = tl
	}
	return w
}

// call runs a tool with args (a JSON object) and returns its result and
// error, and the progress reports it made.
func (w *ws) call(ctx context.Context, name string, args map[string]any) (gateway.Result, []gateway.Progress, error) {
	w.t.Helper()
	tl, ok := w.tools[name]
	if !ok {
		w.t.Fatalf("no tool %s", name)
	}
	raw, _ := json.Marshal(args)
	var progress []gateway.Progress
	res, err := tl.Execute(ctx, raw, func(p gateway.Progress) { progress = append(progress, p) })
	return res, progress, err
}

// file writes a file of the test and returns its path.
func (w *ws) file(dir, name, content string) string {
	w.t.Helper()
	return testbin.WriteFile(w.t, dir, name, content)
}

// read returns the text of a file on disk ("" if it does not exist).
func read(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

// Run runs every test over the backends newBackend makes.
func Run(t *testing.T, newBackend func(t *testing.T) Backend) {
	t.Run("Paths", func(t *testing.T) { t.Parallel(); testPaths(t, newBackend) })
	t.Run("Read", func(t *testing.T) { t.Parallel(); testRead(t, newBackend) })
	t.Run("Write", func(t *testing.T) { t.Parallel(); testWrite(t, newBackend) })
	t.Run("Edit", func(t *testing.T) { t.Parallel(); testEdit(t, newBackend) })
	t.Run("Run", func(t *testing.T) { t.Parallel(); testRun(t, newBackend) })
	t.Run("RunTimeout", func(t *testing.T) { t.Parallel(); testRunTimeout(t, newBackend) })
	t.Run("RunCancel", func(t *testing.T) { t.Parallel(); testRunCancel(t, newBackend) })
}

// testPaths: every tool refuses a relative path, a path with "..", a path
// outside the directories and a path that a symbolic link leads outside,
// and touches nothing then; the additional directory is allowed.
func testPaths(t *testing.T, newBackend func(t *testing.T) Backend) {
	w := setup(t, newBackend, workspace.Options{})
	secret := w.file(w.outside, "secret.txt", "outside")
	linkFile := filepath.Join(w.cwd, "link.txt")
	linkDir := filepath.Join(w.cwd, "linkdir")
	if err := os.Symlink(secret, linkFile); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(w.outside, linkDir); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(w.cwd, "dangling.txt") // to a file that does not exist yet
	if err := os.Symlink(filepath.Join(w.outside, "new.txt"), dangling); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path string
		want error
	}{
		{"secret.txt", workspace.ErrNotAbsolute},
		{w.cwd + "/../" + filepath.Base(w.outside) + "/secret.txt", workspace.ErrDotDot},
		{w.cwd + "/sub/../link.txt", workspace.ErrDotDot},
		{secret, workspace.ErrOutside},
		{linkFile, workspace.ErrOutside},
		{filepath.Join(linkDir, "secret.txt"), workspace.ErrOutside},
		{filepath.Join(linkDir, "new.txt"), workspace.ErrOutside},
		{filepath.Join(linkDir, "newdir", "new.txt"), workspace.ErrOutside},
		{dangling, workspace.ErrOutside},
	}
	ctx := context.Background()
	for _, c := range cases {
		for name, args := range map[string]map[string]any{
			workspace.ReadFileTool:  {"path": c.path},
			workspace.WriteFileTool: {"path": c.path, "content": "pwned"},
			workspace.EditFileTool:  {"path": c.path, "old_text": "outside", "new_text": "pwned"},
		} {
			_, _, err := w.call(ctx, name, args)
			if !errors.Is(err, c.want) {
				t.Errorf("%s %s: %v, want %v", name, c.path, err, c.want)
			}
			if p := w.tools[name].Preview; p != nil {
				raw, _ := json.Marshal(args)
				if got, err := p(ctx, raw); got != nil || !errors.Is(err, c.want) {
					t.Errorf("%s %s: preview %+v, %v of a refused call", name, c.path, got, err)
				}
			}
		}
	}
	if got := read(secret); got != "outside" {
		t.Errorf("the file outside was changed: %q", got)
	}
	if _, err := os.Stat(filepath.Join(w.outside, "new.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a file was created outside: %v", err)
	}
	// Inside: the additional directory, a link that stays inside, and a
	// link inside to a file still to be written.
	future := filepath.Join(w.cwd, "future.txt")
	if err := os.Symlink("future-target.txt", future); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.call(ctx, workspace.WriteFileTool, map[string]any{"path": future, "content": "x"}); err != nil || read(filepath.Join(w.cwd, "future-target.txt")) != "x" {
		t.Errorf("write through a link inside: %v", err)
	}
	other := w.file(w.extra, "other.txt", "in the extra dir")
	if err := os.Symlink(other, filepath.Join(w.cwd, "inner.txt")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{other, filepath.Join(w.cwd, "inner.txt")} {
		res, _, err := w.call(ctx, workspace.ReadFileTool, map[string]any{"path": p})
		if err != nil || res.ModelText() != "in the extra dir" {
			t.Errorf("read %s: %q, %v", p, res.ModelText(), err)
		}
	}
}

// testRead: whole files, line and limit, an empty file, a missing file
// (fs.ErrNotExist), and a file over MaxResultBytes cut for the model with
// a note.
func testRead(t *testing.T, newBackend func(t *testing.T) Backend) {
	w := setup(t, newBackend, workspace.Options{MaxResultBytes: 64})
	ctx := context.Background()
	p := w.file(w.cwd, "a.txt", "one\ntwo\nthree\nfour\n")
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"path": p}, "one\ntwo\nthree\nfour\n"},
		{map[string]any{"path": p, "line": 2, "limit": 2}, "two\nthree\n"},
		{map[string]any{"path": p, "line": 3}, "three\nfour\n"},
		{map[string]any{"path": w.file(w.cwd, "empty.txt", "")}, "(empty)"},
	} {
		res, _, err := w.call(ctx, workspace.ReadFileTool, c.args)
		if err != nil || res.ModelText() != c.want || res.IsError {
			t.Errorf("read %v: %q, %v; want %q", c.args, res.ModelText(), err, c.want)
		}
	}
	if _, _, err := w.call(ctx, workspace.ReadFileTool, map[string]any{"path": filepath.Join(w.cwd, "missing.txt")}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	big := strings.Repeat("0123456789", 20)
	res, _, err := w.call(ctx, workspace.ReadFileTool, map[string]any{"path": w.file(w.cwd, "big.txt", big)})
	if err != nil || !strings.HasPrefix(res.ModelText(), big[:64]+"\n[cut: the first 64 of 200 bytes") {
		t.Errorf("big file: %q, %v", res.ModelText(), err)
	}
}

// diffOf returns the diff block of a result.
func diffOf(t *testing.T, content []gateway.Content) gateway.Content {
	t.Helper()
	if len(content) != 1 || content[0].Type != gateway.ContentDiff {
		t.Fatalf("content %+v, want one diff", content)
	}
	return content[0]
}

// testWrite: a new file (diff without old text, parent directories
// created), an existing file (diff with its old text), and the preview
// showing the same diff before anything is written.
func testWrite(t *testing.T, newBackend func(t *testing.T) Backend) {
	w := setup(t, newBackend, workspace.Options{})
	ctx := context.Background()
	fresh := filepath.Join(w.cwd, "fresh.txt")
	args, _ := json.Marshal(map[string]any{"path": fresh, "content": "new\n"})
	pre, err := w.tools[workspace.WriteFileTool].Preview(ctx, args)
	if d := diffOf(t, pre); err != nil || d.Path != fresh || d.OldText != nil || d.Text != "new\n" || read(fresh) != "" {
		t.Errorf("preview of a new file: %+v (file %q)", d, read(fresh))
	}
	res, _, err := w.call(ctx, workspace.WriteFileTool, map[string]any{"path": fresh, "content": "new\n"})
	if d := diffOf(t, res.Content); err != nil || d.OldText != nil || read(fresh) != "new\n" || !strings.Contains(res.ModelText(), "Created") {
		t.Errorf("new file: %+v %q %v", d, res.ModelText(), err)
	}
	old := w.file(w.cwd, "old.txt", "before\n")
	res, _, err = w.call(ctx, workspace.WriteFileTool, map[string]any{"path": old, "content": "after\n"})
	if d := diffOf(t, res.Content); err != nil || d.OldText == nil || *d.OldText != "before\n" || d.Text != "after\n" || read(old) != "after\n" {
		t.Errorf("existing file: %+v %v (file %q)", d, err, read(old))
	}
	if _, _, err := w.call(ctx, workspace.WriteFileTool, map[string]any{"path": old}); !errors.Is(err, workspace.ErrArguments) {
		t.Errorf("no content: %v", err)
	}
}

// testEdit: one exact occurrence is replaced (diff with the whole old and
// new text); text not found and text found twice are refused with their
// errors and change nothing.
func testEdit(t *testing.T, newBackend func(t *testing.T) Backend) {
	w := setup(t, newBackend, workspace.Options{})
	ctx := context.Background()
	p := w.file(w.cwd, "main.go", "package main\n\nfunc a() {}\nfunc b() {}\nfunc b() {}\n")
	res, _, err := w.call(ctx, workspace.EditFileTool, map[string]any{"path": p, "old_text": "func a() {}", "new_text": "func a() { b() }"})
	want := "package main\n\nfunc a() { b() }\nfunc b() {}\nfunc b() {}\n"
	if d := diffOf(t, res.Content); err != nil || d.OldText == nil || !strings.Contains(*d.OldText, "func a() {}") || d.Text != want || read(p) != want ||
		!strings.Contains(res.ModelText(), "line 3") {
		t.Errorf("edit: %+v %q %v (file %q)", d, res.ModelText(), err, read(p))
	}
	for _, c := range []struct {
		old  string
		want error
	}{{"func c() {}", workspace.ErrNoMatch}, {"func b() {}", workspace.ErrNotUnique}, {"", workspace.ErrArguments}} {
		if _, _, err := w.call(ctx, workspace.EditFileTool, map[string]any{"path": p, "old_text": c.old, "new_text": "x"}); !errors.Is(err, c.want) {
			t.Errorf("old_text %q: %v, want %v", c.old, err, c.want)
		}
	}
	if read(p) != want {
		t.Errorf("a refused edit changed the file: %q", read(p))
	}
	if _, _, err := w.call(ctx, workspace.EditFileTool, map[string]any{"path": filepath.Join(w.cwd, "none.go"), "old_text": "a", "new_text": "b"}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// terminalOf is the terminal a run_command call showed while it ran ("" if
// none).
func terminalOf(progress []gateway.Progress) string {
	for _, p := range progress {
		for _, c := range p.Content {
			if c.Type == gateway.ContentTerminal {
				return c.TerminalID
			}
		}
	}
	return ""
}

// testRun: the command runs in the cwd and the model gets its exit code
// and output; a failing command is a failed result; output over the bound
// is cut from the start with a note; a terminal shown while running is the
// one in the result.
func testRun(t *testing.T, newBackend func(t *testing.T) Backend) {
	w := setup(t, newBackend, workspace.Options{MaxResultBytes: 1000})
	ctx := context.Background()
	res, progress, err := w.call(ctx, workspace.RunCommandTool, map[string]any{"command": "pwd -P; echo to-stderr >&2"})
	real, _ := filepath.EvalSymlinks(w.cwd)
	if err != nil || res.IsError || !strings.HasPrefix(res.ModelText(), "Exit code: 0\nOutput:\n"+real+"\nto-stderr") {
		t.Errorf("pwd: %q %v", res.ModelText(), err)
	}
	if id := terminalOf(progress); id != "" && (res.Content[0].Type != gateway.ContentTerminal || res.Content[0].TerminalID != id) {
		t.Errorf("terminal %s shown while running, result %+v", id, res.Content)
	}
	res, _, err = w.call(ctx, workspace.RunCommandTool, map[string]any{"command": "echo failing; exit 3"})
	if err != nil || !res.IsError || !strings.HasPrefix(res.ModelText(), "Exit code: 3\nOutput:\nfailing") {
		t.Errorf("exit 3: %q %v", res.ModelText(), err)
	}
	res, _, err = w.call(ctx, workspace.RunCommandTool, map[string]any{"command": "i=0; while [ $i -lt 300 ]; do echo line-$i; i=$((i+1)); done"})
	text := res.ModelText()
	if err != nil || !strings.Contains(text, "earlier output dropped") || !strings.HasSuffix(text, "line-299\n") || strings.Contains(text, "line-0\n") || len(text) > 1100 {
		t.Errorf("long output (%d bytes): %q %v", len(text), text, err)
	}
	if _, _, err := w.call(ctx, workspace.RunCommandTool, map[string]any{"command": " "}); !errors.Is(err, workspace.ErrArguments) {
		t.Errorf("empty command: %v", err)
	}
}

// pidOf waits until a command has written its pid to path and returns it.
func pidOf(t *testing.T, path string) int {
	t.Helper()
	var pid int
	testbin.WaitFor(t, "the command's pid", func() bool {
		n, err := strconv.Atoi(strings.TrimSpace(read(path)))
		pid = n
		return err == nil
	})
	return pid
}

// sleeper is a command line that writes its pid to path, then sleeps
// (exec: the pid is the sleep's), and one of its background children's
// pid to path+".child".
func sleeper(path string) string {
	return fmt.Sprintf("sleep 120 & echo $! > %s.child; echo $$ > %s; exec sleep 120", path, path)
}

// gone waits until the processes pids have died: they were sent SIGKILL,
// which takes effect a moment after it is sent (the command's own process
// is reaped before the call ends; a background child of it is not ours to
// wait for).
func gone(t *testing.T, pids ...int) {
	t.Helper()
	for _, pid := range pids {
		testbin.WaitFor(t, fmt.Sprintf("process %d to die", pid), func() bool { return !testbin.Alive(pid) })
	}
}

// testRunTimeout: a command that outlives its timeout is killed, with its
// background children, and reported as timed out.
func testRunTimeout(t *testing.T, newBackend func(t *testing.T) Backend) {
	w := setup(t, newBackend, workspace.Options{})
	pidFile := filepath.Join(t.TempDir(), "pid")
	res, _, err := w.call(context.Background(), workspace.RunCommandTool, map[string]any{"command": sleeper(pidFile), "timeout_seconds": 1})
	if err != nil || !res.IsError || !strings.HasPrefix(res.ModelText(), "Timed out after 1s: the command was killed.") {
		t.Errorf("timeout: %q %v", res.ModelText(), err)
	}
	gone(t, pidOf(t, pidFile), pidOf(t, pidFile+".child"))
}

// testRunCancel: cancelling the call kills the command, with its
// background children, and the call ends reporting it.
func testRunCancel(t *testing.T, newBackend func(t *testing.T) Backend) {
	w := setup(t, newBackend, workspace.Options{})
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	type outcome struct {
		res gateway.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, _, err := w.call(ctx, workspace.RunCommandTool, map[string]any{"command": sleeper(pidFile)})
		done <- outcome{res, err}
	}()
	pid := pidOf(t, pidFile)
	cancel()
	o := <-done
	if o.err != nil || !o.res.IsError || !strings.HasPrefix(o.res.ModelText(), "Cancelled: the command was killed.") {
		t.Errorf("cancel: %q %v", o.res.ModelText(), o.err)
	}
	gone(t, pid, pidOf(t, pidFile+".child"))
}
