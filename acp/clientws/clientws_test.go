//go:build unix

package clientws_test

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/acp/clientws"
	"github.com/acpgate/acpgate/gateway/workspace"
	"github.com/acpgate/acpgate/gateway/workspace/workspacetest"
	"github.com/acpgate/acpgate/testdata/testbin"
	"github.com/acpgate/acpgate/testdata/wsclient"
)

// TestThroughClient runs the tools' tests over the client backend, with
// an editor side that reads and writes real files and runs real commands.
func TestThroughClient(t *testing.T) {
	workspacetest.Run(t, func(*testing.T) workspacetest.Backend {
		b := clientws.New(&wsclient.Workspace{}, "sess_1")
		return workspacetest.Backend{Files: b, Terminals: b}
	})
}

// TestEditorView: reads go to the editor, which answers with its unsaved
// buffer; a file it does not have is fs.ErrNotExist; every terminal is
// released, after a kill when the call was cancelled.
func TestEditorView(t *testing.T) {
	ed := &wsclient.Workspace{}
	b := clientws.New(ed, "sess_1")
	dir := t.TempDir()
	p := testbin.WriteFile(t, dir, "a.txt", "on disk\n")
	ed.SetBuffer(p, "unsaved\n")
	ctx := context.Background()
	if got, err := b.ReadFile(ctx, p, 0, 0); err != nil || got != "unsaved\n" {
		t.Errorf("read: %q %v", got, err)
	}
	if _, err := b.ReadFile(ctx, filepath.Join(dir, "none"), 0, 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	tools := workspace.Tools(workspace.Options{Files: b, Terminals: b, Cwd: dir})
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	res, err := tools[3].Execute(cctx, []byte(`{"command":"sleep 60"}`), nil)
	if err != nil || !strings.HasPrefix(res.ModelText(), "Cancelled") {
		t.Errorf("cancelled run: %q %v", res.ModelText(), err)
	}
	calls := ed.Calls()
	i, j := slices.Index(calls, "terminal/kill term-1"), slices.Index(calls, "terminal/release term-1")
	if i < 0 || j < i || len(ed.Live()) != 0 {
		t.Errorf("calls %v, live terminals %v", calls, ed.Live())
	}
}
