// Package clientws is the workspace backend of an ACP client: the
// gateway's workspace tools (package gateway/workspace) read and write
// files with the client's fs/read_text_file and fs/write_text_file and run
// commands in its terminals (terminal/create, output, wait_for_exit, kill,
// release), so the editor sees its unsaved buffers and shows the terminals.
// The tools check paths before they reach the backend; the backend checks
// nothing.
package clientws

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/gateway/workspace"
)

// Client is what the backend needs of the connection to the client:
// *acpsdk.AgentSideConnection implements it, and so does any
// acpsdk.Client (the same methods, answered in process). Implementations
// must be safe for concurrent use.
type Client interface {
	ReadTextFile(ctx context.Context, p acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error)
	WriteTextFile(ctx context.Context, p acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error)
	CreateTerminal(ctx context.Context, p acpsdk.CreateTerminalRequest) (acpsdk.CreateTerminalResponse, error)
	TerminalOutput(ctx context.Context, p acpsdk.TerminalOutputRequest) (acpsdk.TerminalOutputResponse, error)
	WaitForTerminalExit(ctx context.Context, p acpsdk.WaitForTerminalExitRequest) (acpsdk.WaitForTerminalExitResponse, error)
	KillTerminal(ctx context.Context, p acpsdk.KillTerminalRequest) (acpsdk.KillTerminalResponse, error)
	ReleaseTerminal(ctx context.Context, p acpsdk.ReleaseTerminalRequest) (acpsdk.ReleaseTerminalResponse, error)
}

var _ Client = (*acpsdk.AgentSideConnection)(nil)

// codeResourceNotFound is ACP's error code for a missing resource, such
// as a file.
const codeResourceNotFound = -32002

// Backend is the workspace backend of one session on one client:
// workspace.Files and workspace.Terminals. Safe for concurrent use.
type Backend struct {
	c       Client
	session acpsdk.SessionId
}

var (
	_ workspace.Files     = (*Backend)(nil)
	_ workspace.Terminals = (*Backend)(nil)
)

// New returns the backend of session on client c. Use its Files only if
// the client advertised fs.readTextFile (and fs.writeTextFile to write),
// its Terminals only if it advertised terminal.
func New(c Client, session string) *Backend {
	return &Backend{c: c, session: acpsdk.SessionId(session)}
}

// ReadFile implements workspace.Files with fs/read_text_file. The
// client's resource-not-found error wraps fs.ErrNotExist.
func (b *Backend) ReadFile(ctx context.Context, path string, line, limit int) (string, error) {
	req := acpsdk.ReadTextFileRequest{SessionId: b.session, Path: path}
	if line > 0 {
		req.Line = &line
	}
	if limit > 0 {
		req.Limit = &limit
	}
	resp, err := b.c.ReadTextFile(ctx, req)
	if err != nil {
		var re *acpsdk.RequestError
		if errors.As(err, &re) && re.Code == codeResourceNotFound {
			return "", fmt.Errorf("the editor has no file %s: %w (%w)", path, fs.ErrNotExist, err)
		}
		return "", fmt.Errorf("the editor could not read %s: %w", path, err)
	}
	return resp.Content, nil
}

// WriteFile implements workspace.Files with fs/write_text_file.
func (b *Backend) WriteFile(ctx context.Context, path, content string) error {
	if _, err := b.c.WriteTextFile(ctx, acpsdk.WriteTextFileRequest{SessionId: b.session, Path: path, Content: content}); err != nil {
		return fmt.Errorf("the editor could not write %s: %w", path, err)
	}
	return nil
}

// Start implements workspace.Terminals with terminal/create: the command
// line runs in a shell (see workspace.Command.Shell) in cmd.Cwd, the
// client keeping the last cmd.OutputLimit bytes of its output.
func (b *Backend) Start(ctx context.Context, cmd workspace.Command) (workspace.Process, error) {
	name, args := cmd.Shell()
	req := acpsdk.CreateTerminalRequest{SessionId: b.session, Command: name, Args: args, Env: []acpsdk.EnvVariable{}}
	if cmd.Cwd != "" {
		req.Cwd = &cmd.Cwd
	}
	if cmd.OutputLimit > 0 {
		req.OutputByteLimit = &cmd.OutputLimit
	}
	resp, err := b.c.CreateTerminal(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("the editor could not create a terminal: %w", err)
	}
	return &terminal{b: b, id: resp.TerminalId}, nil
}

// terminal is a client terminal running one command.
type terminal struct {
	b  *Backend
	id string
}

// TerminalID implements workspace.Process.
func (t *terminal) TerminalID() string { return t.id }

// Wait implements workspace.Process with terminal/wait_for_exit.
func (t *terminal) Wait(ctx context.Context) (workspace.ExitStatus, error) {
	resp, err := t.b.c.WaitForTerminalExit(ctx, acpsdk.WaitForTerminalExitRequest{SessionId: t.b.session, TerminalId: t.id})
	if err != nil {
		if ctx.Err() != nil {
			return workspace.ExitStatus{}, ctx.Err()
		}
		return workspace.ExitStatus{}, fmt.Errorf("terminal/wait_for_exit: %w", err)
	}
	return exitStatus(resp.ExitCode, resp.Signal), nil
}

// Output implements workspace.Process with terminal/output.
func (t *terminal) Output(ctx context.Context) (workspace.Output, error) {
	resp, err := t.b.c.TerminalOutput(ctx, acpsdk.TerminalOutputRequest{SessionId: t.b.session, TerminalId: t.id})
	if err != nil {
		return workspace.Output{}, fmt.Errorf("terminal/output: %w", err)
	}
	out := workspace.Output{Text: resp.Output, Truncated: resp.Truncated}
	if e := resp.ExitStatus; e != nil {
		s := exitStatus(e.ExitCode, e.Signal)
		out.Exit = &s
	}
	return out, nil
}

// Kill implements workspace.Process with terminal/kill.
func (t *terminal) Kill(ctx context.Context) error {
	if _, err := t.b.c.KillTerminal(ctx, acpsdk.KillTerminalRequest{SessionId: t.b.session, TerminalId: t.id}); err != nil {
		return fmt.Errorf("terminal/kill: %w", err)
	}
	return nil
}

// Release implements workspace.Process with terminal/release.
func (t *terminal) Release(ctx context.Context) error {
	if _, err := t.b.c.ReleaseTerminal(ctx, acpsdk.ReleaseTerminalRequest{SessionId: t.b.session, TerminalId: t.id}); err != nil {
		return fmt.Errorf("terminal/release: %w", err)
	}
	return nil
}

func exitStatus(code *int, signal *string) workspace.ExitStatus {
	s := workspace.ExitStatus{Code: code}
	if signal != nil {
		s.Signal = *signal
	}
	return s
}
