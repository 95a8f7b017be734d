package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/acpgate/acpgate/gateway"
)

// The names of the tools, as the model calls them.
const (
	ReadFileTool   = "read_file"
	WriteFileTool  = "write_file"
	EditFileTool   = "edit_file"
	RunCommandTool = "run_command"
)

// set is the tools of one session.
type set struct {
	opts  Options
	roots roots
}

// Tools returns the tools opts offers, in the order read_file, write_file,
// edit_file, run_command. Their Execute and Preview are safe for
// concurrent use.
func Tools(opts Options) []gateway.Tool {
	o := opts.withDefaults()
	w := &set{opts: o, roots: append(roots{o.Cwd}, o.Dirs...)}
	var out []gateway.Tool
	if o.Files != nil {
		out = append(out, w.readTool())
		if !o.ReadOnly {
			out = append(out, w.writeTool(), w.editTool())
		}
	}
	if o.Terminals != nil {
		out = append(out, w.runTool())
	}
	return out
}

// where tells the model which paths it may use.
func (w *set) where() string {
	return "Paths must be absolute and inside " + w.roots.list() + "."
}

// decode reads a call's arguments into v.
func decode(tool string, args json.RawMessage, v any) error {
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("%s: %w: %v", tool, ErrArguments, err)
	}
	return nil
}

func (w *set) readTool() gateway.Tool {
	return gateway.Tool{
		Name:  ReadFileTool,
		Title: "Read file",
		Description: "Read a text file of the workspace (the editor's unsaved changes included where the editor provides the file). " +
			w.where() + " Long files: read a part with line (1-based) and limit (a number of lines).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"Absolute path of the file."},` +
			`"line":{"type":"integer","minimum":1,"description":"First line to read (1-based); default 1."},` +
			`"limit":{"type":"integer","minimum":1,"description":"Most lines to read; default: to the end."}},` +
			`"required":["path"],"additionalProperties":false}`),
		Kind:        gateway.KindRead,
		Annotations: gateway.Annotations{ReadOnly: true, Idempotent: true},
		Meta:        w.opts.Meta,
		Execute:     w.read,
	}
}

func (w *set) read(ctx context.Context, args json.RawMessage, _ func(gateway.Progress)) (gateway.Result, error) {
	var a struct {
		Path        string
		Line, Limit int
	}
	if err := decode(ReadFileTool, args, &a); err != nil {
		return gateway.Result{}, err
	}
	if a.Line < 0 || a.Limit < 0 {
		return gateway.Result{}, fmt.Errorf("%s: %w: line and limit must be positive", ReadFileTool, ErrArguments)
	}
	p, err := w.roots.check(a.Path)
	if err != nil {
		return gateway.Result{}, fmt.Errorf("%s: %w", ReadFileTool, err)
	}
	text, err := w.opts.Files.ReadFile(ctx, p, a.Line, a.Limit)
	if err != nil {
		return gateway.Result{}, fmt.Errorf("%s %s: %w", ReadFileTool, p, err)
	}
	shown, cut := head(text, w.opts.MaxResultBytes)
	forModel := w.opts.Redact(shown)
	switch {
	case text == "":
		forModel = "(empty)"
	case cut:
		forModel += fmt.Sprintf("\n[cut: the first %d of %d bytes; read the rest with line and limit]", len(shown), len(text))
	}
	return gateway.Result{Content: []gateway.Content{{Type: gateway.ContentText, Text: shown}}, ForModel: forModel}, nil
}

// head is the first max bytes of s (on a rune boundary) and whether s was
// longer.
func head(s string, max int) (string, bool) {
	p := gateway.RunePrefix(s, max)
	return p, len(p) < len(s)
}

func (w *set) writeTool() gateway.Tool {
	return gateway.Tool{
		Name:  WriteFileTool,
		Title: "Write file",
		Description: "Create a text file, or replace all of its text. " + w.where() +
			" To change part of an existing file, prefer edit_file.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"Absolute path of the file."},` +
			`"content":{"type":"string","description":"The whole new text of the file."}},` +
			`"required":["path","content"],"additionalProperties":false}`),
		Kind:        gateway.KindEdit,
		Annotations: gateway.Annotations{Destructive: true, Idempotent: true},
		AskApproval: true,
		Meta:        w.opts.Meta,
		Execute:     w.apply(WriteFileTool, w.planWrite),
		Preview:     w.preview(WriteFileTool, w.planWrite),
	}
}

func (w *set) editTool() gateway.Tool {
	return gateway.Tool{
		Name:  EditFileTool,
		Title: "Edit file",
		Description: "Change a text file by replacing one exact piece of its text: old_text must occur exactly once " +
			"(whitespace and line breaks included; give enough surrounding lines to make it unique). " + w.where(),
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"Absolute path of the file."},` +
			`"old_text":{"type":"string","description":"The exact text to replace; it must occur once in the file."},` +
			`"new_text":{"type":"string","description":"The text to put in its place."}},` +
			`"required":["path","old_text","new_text"],"additionalProperties":false}`),
		Kind:        gateway.KindEdit,
		Annotations: gateway.Annotations{Destructive: true},
		AskApproval: true,
		Meta:        w.opts.Meta,
		Execute:     w.apply(EditFileTool, w.planEdit),
		Preview:     w.preview(EditFileTool, w.planEdit),
	}
}

// change is what write_file or edit_file would do to a file.
type change struct {
	path string
	old  *string // nil: the file does not exist yet
	new  string
	note string // for the model: what changed
}

// diff is the change as the user sees it.
func (c change) diff() gateway.Content {
	return gateway.Content{Type: gateway.ContentDiff, Path: c.path, OldText: c.old, Text: c.new}
}

// planner works out a change from a call's arguments, changing nothing.
type planner func(ctx context.Context, args json.RawMessage) (change, error)

// apply is the Execute of a tool that makes the change plan works out.
func (w *set) apply(tool string, plan planner) func(context.Context, json.RawMessage, func(gateway.Progress)) (gateway.Result, error) {
	return func(ctx context.Context, args json.RawMessage, _ func(gateway.Progress)) (gateway.Result, error) {
		c, err := plan(ctx, args)
		if err != nil {
			return gateway.Result{}, fmt.Errorf("%s: %w", tool, err)
		}
		if err := w.opts.Files.WriteFile(ctx, c.path, c.new); err != nil {
			return gateway.Result{}, fmt.Errorf("%s %s: %w", tool, c.path, err)
		}
		return gateway.Result{Content: []gateway.Content{c.diff()}, ForModel: c.note}, nil
	}
}

// preview is the Preview of a tool whose change plan works out: the diff,
// or why the call cannot be made (the user is then not asked).
func (w *set) preview(tool string, plan planner) func(context.Context, json.RawMessage) ([]gateway.Content, error) {
	return func(ctx context.Context, args json.RawMessage) ([]gateway.Content, error) {
		c, err := plan(ctx, args)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tool, err)
		}
		return []gateway.Content{c.diff()}, nil
	}
}

func (w *set) planWrite(ctx context.Context, args json.RawMessage) (change, error) {
	var a struct {
		Path    string
		Content *string
	}
	if err := decode(WriteFileTool, args, &a); err != nil {
		return change{}, err
	}
	if a.Content == nil {
		return change{}, fmt.Errorf("%w: content is missing (the whole new text of the file)", ErrArguments)
	}
	p, err := w.roots.check(a.Path)
	if err != nil {
		return change{}, err
	}
	old, err := w.current(ctx, p)
	if err != nil {
		return change{}, err
	}
	c := change{path: p, old: old, new: *a.Content}
	if old == nil {
		c.note = fmt.Sprintf("Created %s (%d bytes).", p, len(c.new))
	} else {
		c.note = fmt.Sprintf("Replaced the text of %s (%d bytes, was %d).", p, len(c.new), len(*old))
	}
	return c, nil
}

// current is the text of the file at p, or nil when it does not exist.
func (w *set) current(ctx context.Context, p string) (*string, error) {
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	text, err := w.opts.Files.ReadFile(ctx, p, 0, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	return &text, nil
}

func (w *set) planEdit(ctx context.Context, args json.RawMessage) (change, error) {
	var a struct {
		Path    string
		OldText *string `json:"old_text"`
		NewText *string `json:"new_text"`
	}
	if err := decode(EditFileTool, args, &a); err != nil {
		return change{}, err
	}
	switch {
	case a.OldText == nil || *a.OldText == "":
		return change{}, fmt.Errorf("%w: old_text must be the exact, non-empty text to replace", ErrArguments)
	case a.NewText == nil:
		return change{}, fmt.Errorf("%w: new_text is missing", ErrArguments)
	}
	p, err := w.roots.check(a.Path)
	if err != nil {
		return change{}, err
	}
	old, err := w.current(ctx, p)
	if err != nil {
		return change{}, err
	}
	if old == nil {
		return change{}, fmt.Errorf("%s: %w (create it with write_file)", p, fs.ErrNotExist)
	}
	switch n := strings.Count(*old, *a.OldText); {
	case n == 0:
		return change{}, fmt.Errorf("%w in %s: it must match the file exactly, whitespace and line breaks included (read the file again)", ErrNoMatch, p)
	case n > 1:
		return change{}, fmt.Errorf("%w: it occurs %d times in %s; include more of the surrounding text so that it occurs once", ErrNotUnique, n, p)
	}
	i := strings.Index(*old, *a.OldText)
	line := 1 + strings.Count((*old)[:i], "\n")
	c := change{path: p, old: old, new: (*old)[:i] + *a.NewText + (*old)[i+len(*a.OldText):]}
	c.note = fmt.Sprintf("Edited %s: replaced the text at line %d.", p, line)
	return c, nil
}
