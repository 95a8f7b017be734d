// Package wsclient is the editor's side of ACP's fs/* and terminal/*
// methods, for tests: real files and real processes, the way an editor
// runs them, with no path checks of its own (the agent's are under test).
// A test's acpsdk.Client embeds a *Workspace. Unsaved buffers (Buffers)
// stand for the editor's view of a file that differs from the disk.
package wsclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	acpsdk "github.com/coder/acp-go-sdk"
)

// Workspace answers fs/* and terminal/* with real files and processes.
// Its zero value is ready; its methods are safe for concurrent use.
type Workspace struct {
	// BeforeRead, when set, is called with the path of each
	// fs/read_text_file before it is answered (a test changes the file
	// there, as a user could while the editor reads it). Set it before
	// the first request.
	BeforeRead func(path string)

	mu      sync.Mutex
	buffers map[string]string
	terms   map[string]*term
	next    int
	calls   []string
}

// term is one terminal: a process and everything it wrote.
type term struct {
	cmd   *exec.Cmd
	limit int // OutputByteLimit; 0: none
	out   syncBuffer
	done  chan struct{}
	exit  acpsdk.TerminalExitStatus
}

// SetBuffer makes the editor hold text for path, unsaved: reads return it
// instead of the file, until a write of path.
func (w *Workspace) SetBuffer(path, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buffers == nil {
		w.buffers = map[string]string{}
	}
	w.buffers[path] = text
}

// Calls returns the methods called so far, each as "method arg" (the path
// or terminal id), in order.
func (w *Workspace) Calls() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.calls)
}

// Live returns the ids of the terminals not released yet.
func (w *Workspace) Live() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var ids []string
	for id := range w.terms {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (w *Workspace) record(method, arg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, method+" "+arg)
}

// ReadTextFile answers fs/read_text_file: the buffer or the file, from
// line for limit lines; a missing file is ACP's resource-not-found error
// (-32002).
func (w *Workspace) ReadTextFile(_ context.Context, p acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	w.record("fs/read_text_file", p.Path)
	if w.BeforeRead != nil {
		w.BeforeRead(p.Path)
	}
	w.mu.Lock()
	text, ok := w.buffers[p.Path]
	w.mu.Unlock()
	if !ok {
		data, err := os.ReadFile(p.Path)
		if errors.Is(err, fs.ErrNotExist) {
			return acpsdk.ReadTextFileResponse{}, &acpsdk.RequestError{Code: -32002, Message: "Resource not found", Data: map[string]any{"path": p.Path}}
		}
		if err != nil {
			return acpsdk.ReadTextFileResponse{}, acpsdk.NewInternalError(map[string]any{"error": err.Error()})
		}
		text = string(data)
	}
	lines := strings.SplitAfter(text, "\n")
	from := 0
	if p.Line != nil && *p.Line > 1 {
		from = min(*p.Line-1, len(lines))
	}
	to := len(lines)
	if p.Limit != nil {
		to = min(from+*p.Limit, to)
	}
	return acpsdk.ReadTextFileResponse{Content: strings.Join(lines[from:to], "")}, nil
}

// WriteTextFile answers fs/write_text_file: the file is written and its
// buffer saved.
func (w *Workspace) WriteTextFile(_ context.Context, p acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	w.record("fs/write_text_file", p.Path)
	if err := os.WriteFile(p.Path, []byte(p.Content), 0o644); err != nil {
		return acpsdk.WriteTextFileResponse{}, acpsdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	w.mu.Lock()
	delete(w.buffers, p.Path)
	w.mu.Unlock()
	return acpsdk.WriteTextFileResponse{}, nil
}

// CreateTerminal answers terminal/create: the command runs at once, in a
// process group of its own, in the given cwd.
func (w *Workspace) CreateTerminal(_ context.Context, p acpsdk.CreateTerminalRequest) (acpsdk.CreateTerminalResponse, error) {
	cmd := exec.Command(p.Command, p.Args...)
	if p.Cwd != nil {
		cmd.Dir = *p.Cwd
	}
	cmd.SysProcAttr = ownGroup()
	t := &term{cmd: cmd, done: make(chan struct{})}
	if p.OutputByteLimit != nil {
		t.limit = *p.OutputByteLimit
	}
	cmd.Stdout, cmd.Stderr = &t.out, &t.out
	if err := cmd.Start(); err != nil {
		return acpsdk.CreateTerminalResponse{}, acpsdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	w.mu.Lock()
	w.next++
	id := fmt.Sprintf("term-%d", w.next)
	if w.terms == nil {
		w.terms = map[string]*term{}
	}
	w.terms[id] = t
	w.calls = append(w.calls, "terminal/create "+id)
	w.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		t.exit = exitStatus(cmd.ProcessState)
		close(t.done)
	}()
	return acpsdk.CreateTerminalResponse{TerminalId: id}, nil
}

// terminal finds a live terminal.
func (w *Workspace) terminal(id string) (*term, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t, ok := w.terms[id]; ok {
		return t, nil
	}
	return nil, acpsdk.NewInvalidParams(map[string]any{"error": "unknown terminal " + id})
}

// TerminalOutput answers terminal/output: the last OutputByteLimit bytes.
func (w *Workspace) TerminalOutput(_ context.Context, p acpsdk.TerminalOutputRequest) (acpsdk.TerminalOutputResponse, error) {
	w.record("terminal/output", p.TerminalId)
	t, err := w.terminal(p.TerminalId)
	if err != nil {
		return acpsdk.TerminalOutputResponse{}, err
	}
	out := t.out.String()
	resp := acpsdk.TerminalOutputResponse{Output: out}
	if t.limit > 0 && len(out) > t.limit {
		out = out[len(out)-t.limit:]
		for len(out) > 0 && !utf8.RuneStart(out[0]) {
			out = out[1:]
		}
		resp.Output, resp.Truncated = out, true
	}
	select {
	case <-t.done:
		resp.ExitStatus = &t.exit
	default:
	}
	return resp, nil
}

// WaitForTerminalExit answers terminal/wait_for_exit.
func (w *Workspace) WaitForTerminalExit(ctx context.Context, p acpsdk.WaitForTerminalExitRequest) (acpsdk.WaitForTerminalExitResponse, error) {
	w.record("terminal/wait_for_exit", p.TerminalId)
	t, err := w.terminal(p.TerminalId)
	if err != nil {
		return acpsdk.WaitForTerminalExitResponse{}, err
	}
	select {
	case <-t.done:
		return acpsdk.WaitForTerminalExitResponse{ExitCode: t.exit.ExitCode, Signal: t.exit.Signal}, nil
	case <-ctx.Done():
		return acpsdk.WaitForTerminalExitResponse{}, ctx.Err()
	}
}

// KillTerminal answers terminal/kill: the process group is killed and
// reaped before the answer.
func (w *Workspace) KillTerminal(ctx context.Context, p acpsdk.KillTerminalRequest) (acpsdk.KillTerminalResponse, error) {
	w.record("terminal/kill", p.TerminalId)
	t, err := w.terminal(p.TerminalId)
	if err != nil {
		return acpsdk.KillTerminalResponse{}, err
	}
	return acpsdk.KillTerminalResponse{}, t.kill(ctx)
}

// kill stops the terminal's process group and waits until it is reaped.
func (t *term) kill(ctx context.Context) error {
	select {
	case <-t.done:
		return nil
	default:
	}
	killGroup(t.cmd.Process.Pid)
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ReleaseTerminal answers terminal/release: the command is killed if it
// still runs, and the terminal forgotten.
func (w *Workspace) ReleaseTerminal(ctx context.Context, p acpsdk.ReleaseTerminalRequest) (acpsdk.ReleaseTerminalResponse, error) {
	w.record("terminal/release", p.TerminalId)
	t, err := w.terminal(p.TerminalId)
	if err != nil {
		return acpsdk.ReleaseTerminalResponse{}, err
	}
	err = t.kill(ctx)
	w.mu.Lock()
	delete(w.terms, p.TerminalId)
	w.mu.Unlock()
	return acpsdk.ReleaseTerminalResponse{}, err
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
