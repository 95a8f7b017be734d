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

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp/clientws"
	"github.com/acpgate/acpgate/gateway/workspace"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/internal/testsupport/workspacetest"
	"github.com/acpgate/acpgate/internal/testsupport/wsclient"
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
// buffer; a file it does not have is fs.ErrNotExist; a call cancelled
// before it runs starts no terminal.
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
	if _, err := tools[3].Execute(cctx, []byte(`{"command":"sleep 60"}`), nil); !errors.Is(err, context.Canceled) || slices.Contains(ed.Calls(), "terminal/create term-1") {
		t.Errorf("a call cancelled before it ran: %v; calls %v", err, ed.Calls())
	}
}

// cancelOnCreate is an editor whose terminal/create runs the command,
// then cancels the call that asked for it and answers the way the ACP SDK
// answers a request whose context ended: with the context's error.
type cancelOnCreate struct {
	*wsclient.Workspace
	cancel context.CancelFunc
}

func (c cancelOnCreate) CreateTerminal(ctx context.Context, p acpsdk.CreateTerminalRequest) (acpsdk.CreateTerminalResponse, error) {
	resp, err := c.Workspace.CreateTerminal(ctx, p)
	c.cancel()
	if ctx.Err() != nil {
		return acpsdk.CreateTerminalResponse{}, ctx.Err()
	}
	return resp, err
}

// TestCancelWhileCreating: a call cancelled while the editor creates its
// terminal still kills and releases the command the editor started.
func TestCancelWhileCreating(t *testing.T) {
	ed := &wsclient.Workspace{}
	ctx, cancel := context.WithCancel(context.Background())
	b := clientws.New(cancelOnCreate{Workspace: ed, cancel: cancel}, "sess_1")
	tools := workspace.Tools(workspace.Options{Terminals: b, Cwd: t.TempDir()})
	res, err := tools[0].Execute(ctx, []byte(`{"command":"sleep 60"}`), nil)
	calls := ed.Calls()
	kill, release := slices.Index(calls, "terminal/kill term-1"), slices.Index(calls, "terminal/release term-1")
	if err != nil || !strings.HasPrefix(res.ModelText(), "Cancelled") || len(ed.Live()) != 0 || kill < 0 || release < kill {
		t.Errorf("result %q %v; live terminals %v; calls %v", res.ModelText(), err, ed.Live(), calls)
	}
}
