// Package workspace is the gateway's native tools: read_file, write_file,
// edit_file and run_command, working on a session's directories (its cwd
// and additional directories) through a backend. Two backends exist: the
// editor, through the client's file and terminal methods (implemented
// outside gateway), so the editor sees unsaved buffers and shows the diffs
// and terminals; and Local, the local file system and os/exec, for
// clients that offer neither.
//
// The tools apply the same rules whatever the backend: paths are absolute,
// free of ".." elements, and inside one of the session's directories once
// symbolic links are resolved (ErrNotAbsolute, ErrDotDot, ErrOutside);
// edit_file replaces one exact, unique occurrence (ErrNoMatch,
// ErrNotUnique); write_file and edit_file show the change as a diff, also
// before they run (gateway.Tool.Preview); run_command runs a shell command
// line in the session's cwd with a timeout, kills it when the call is
// cancelled or times out, always releases it, and gives the model its
// exit status and the end of its output.
//
// The path check and the use of the path are two steps: a symbolic link
// swapped in between by another process is not detected.
package workspace

import (
	"context"
	"errors"
	"time"
)

// Files reads and writes text files. Paths are absolute and already
// checked by the tools. Implementations must be safe for concurrent use.
type Files interface {
	// ReadFile returns the text of the file at path: from line (1-based;
	// 0 or 1: the first) for at most limit lines (0: to the end). A
	// missing file is an error wrapping fs.ErrNotExist.
	ReadFile(ctx context.Context, path string, line, limit int) (string, error)
	// WriteFile replaces the text of the file at path, creating it (and,
	// where the backend can, its parent directories) if needed.
	WriteFile(ctx context.Context, path, content string) error
}

// Terminals runs commands. Implementations must be safe for concurrent
// use.
type Terminals interface {
	// Start starts cmd. On success the caller must Release the Process.
	Start(ctx context.Context, cmd Command) (Process, error)
}

// Command is a command to run.
type Command struct {
	// Line is a shell command line (run by sh -c; cmd /C on Windows).
	Line string
	// Cwd is the absolute working directory.
	Cwd string
	// OutputLimit is how many bytes of output to keep: the last ones.
	OutputLimit int
}

// Shell returns the program and arguments that run a command line.
func (c Command) Shell() (string, []string) { return shell(c.Line) }

// Process is a started command. Its methods may be called concurrently;
// Release must be called once, last, and is the only one that must be
// called after Kill.
type Process interface {
	// TerminalID names the client terminal that shows the command, to be
	// embedded in the tool call; "" when there is none.
	TerminalID() string
	// Wait waits until the command exits or ctx ends (then it returns
	// ctx's error and the command goes on).
	Wait(ctx context.Context) (ExitStatus, error)
	// Output returns the output kept so far (stdout and stderr together).
	Output(ctx context.Context) (Output, error)
	// Kill stops the command (and, locally, every process of its group).
	Kill(ctx context.Context) error
	// Release kills the command if it still runs and frees what it holds.
	Release(ctx context.Context) error
}

// ExitStatus is how a command ended.
type ExitStatus struct {
	// Code is the exit code; nil when a signal ended the command.
	Code *int
	// Signal names the signal that ended the command ("SIGKILL"), if any.
	Signal string
}

// Output is the output of a command.
type Output struct {
	// Text is the output kept: its last OutputLimit bytes.
	Text string
	// Truncated reports that earlier output was dropped.
	Truncated bool
	// Exit is the exit status once the command has exited, else nil.
	Exit *ExitStatus
}

// Errors of the tools, wrapped by the errors they return.
var (
	// ErrNotAbsolute: a path is not absolute.
	ErrNotAbsolute = errors.New("path is not absolute")
	// ErrDotDot: a path has a ".." element.
	ErrDotDot = errors.New(`path contains ".."`)
	// ErrOutside: a path is outside the session's directories.
	ErrOutside = errors.New("path is outside the workspace")
	// ErrNoMatch: edit_file's old text is not in the file.
	ErrNoMatch = errors.New("old text not found")
	// ErrNotUnique: edit_file's old text is in the file more than once.
	ErrNotUnique = errors.New("old text not unique")
	// ErrNotText: a file is not UTF-8 text.
	ErrNotText = errors.New("not a text file")
	// ErrArguments: a call's arguments are missing or malformed.
	ErrArguments = errors.New("bad arguments")
)

// The defaults of Options.
const (
	DefaultMaxResultBytes = 100 << 10
	DefaultTimeout        = 2 * time.Minute
	DefaultMaxTimeout     = 10 * time.Minute
)

// Options configures the tools of one session. Files and Terminals say
// which tools exist: read_file with Files, write_file and edit_file with
// Files unless ReadOnly, run_command with Terminals.
type Options struct {
	// Files reads and writes files; nil: no file tools.
	Files Files
	// ReadOnly offers read_file only (the client cannot write).
	ReadOnly bool
	// Terminals runs commands; nil: no run_command.
	Terminals Terminals
	// Cwd is the session's working directory (absolute): commands run
	// there and paths may be inside it.
	Cwd string
	// Dirs are the session's additional directories (absolute): paths may
	// be inside them too.
	Dirs []string
	// MaxResultBytes caps what the model is given of a file or of a
	// command's output (default DefaultMaxResultBytes).
	MaxResultBytes int
	// Timeout is how long a command may run when the model asks for no
	// timeout (default DefaultTimeout); MaxTimeout bounds what it may ask
	// for (default DefaultMaxTimeout).
	Timeout, MaxTimeout time.Duration
	// Redact, if set, is applied to what the model is given (file text,
	// command output). Safe for concurrent use.
	Redact func(string) string
	// Meta is every tool's gateway.Tool.Meta (for example where the tools
	// run).
	Meta map[string]any
}

// withDefaults returns a copy of o with its defaults filled in.
func (o Options) withDefaults() Options {
	if o.MaxResultBytes <= 0 {
		o.MaxResultBytes = DefaultMaxResultBytes
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxTimeout <= 0 {
		o.MaxTimeout = DefaultMaxTimeout
	}
	if o.Timeout > o.MaxTimeout {
		o.MaxTimeout = o.Timeout
	}
	if o.Redact == nil {
		o.Redact = func(s string) string { return s }
	}
	return o
}
