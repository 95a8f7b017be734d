// Package gateway is the agent runtime: tool sets (Toolset, ToolView), the
// model loop (Runner), the model Providers, the conversation History and
// the Compactor that keeps it within the model's window (gateway/compact). It
// knows nothing of where tools come from nor of the protocol its client
// speaks: each session passes its tools and its policy and approval
// decisions to the Runner (ToolAccess); events leave through a Sink.
package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// ToolKind is how an editor should present a tool call.
type ToolKind string

// The kinds of tool, matching what editors know how to show.
const (
	KindRead    ToolKind = "read"
	KindSearch  ToolKind = "search"
	KindFetch   ToolKind = "fetch"
	KindEdit    ToolKind = "edit"
	KindDelete  ToolKind = "delete"
	KindExecute ToolKind = "execute"
	KindOther   ToolKind = "other"
)

// Annotations are hints about what a tool does. They are hints: a tool may
// not honour them.
type Annotations struct {
	ReadOnly    bool // does not change its environment
	Destructive bool // may delete or overwrite
	Idempotent  bool // repeating a call has no further effect
	OpenWorld   bool // reaches outside the local machine
}

// Tool is a tool the model (or a user, directly) can call. Tools are values;
// Execute may be called concurrently.
type Tool struct {
	// Name is unique within a session's tool set and is what the model
	// calls (at most 64 characters of [A-Za-z0-9_-]).
	Name string
	// Title is a short human title for the editor, e.g. "github: create_issue".
	Title       string
	Description string
	// InputSchema is the JSON Schema of the arguments, passed to the model
	// as is.
	InputSchema json.RawMessage
	Kind        ToolKind
	Annotations Annotations
	// AskApproval says whether, by default, the user should be asked before
	// the tool runs.
	AskApproval bool
	// AskInAuto says the user is asked before the tool runs even when the
	// session runs tools without asking (auto mode): for tools such as
	// running a shell command. An "always" answer or an auto-approve rule
	// still decides without asking. It implies AskApproval.
	AskInAuto bool
	// Meta is extra information about the tool for the caller's events
	// (for example the server and tool it stands for).
	Meta map[string]any
	// ShortName, if set, is the tool's name without what sets it apart
	// from other sources' tools (a server's tool: its name at the server,
	// as Name spells it). A tool search for it, as for Name, finds the
	// tool first.
	ShortName string
	// Preview, if set, returns what the user should see of a call before
	// it runs (the change it would make, as a diff): it is shown with the
	// call when the call is announced, so also while the user is asked.
	// It must change nothing; no content shows nothing. An error means the
	// call cannot run (a path it may not use, a text not found): the call
	// fails with it at once, and the user is not asked. It is called from
	// the turn's goroutine, before approval.
	Preview func(ctx context.Context, args json.RawMessage) ([]Content, error)
	// Execute runs the tool. progress, if non-nil, reports progress; it is
	// safe to call from any goroutine until Execute returns. An error is
	// turned into a failed Result; it never ends the turn.
	Execute func(ctx context.Context, args json.RawMessage, progress func(Progress)) (Result, error)

	// builtin marks the Runner's own tools (search_tools): no session
	// policy applies to them.
	builtin bool
}

// Progress is a progress report from a running tool.
type Progress struct {
	Progress float64
	Total    float64 // 0 when unknown
	Message  string
	// Status is the state of a long-running call as its tool reports it
	// (its task's "working", "input_required", ...); "" when it has none.
	Status string
	// TaskID names the call's task on its server, when it runs as one.
	TaskID string
	// Content, when set, is what the user sees of the call from now on
	// while it runs (for example the terminal running its command); the
	// Result's content replaces it when the call ends.
	Content []Content
}

// ContentType names a kind of content block.
type ContentType string

// The content block types.
const (
	ContentText         ContentType = "text"
	ContentImage        ContentType = "image"
	ContentAudio        ContentType = "audio"
	ContentResource     ContentType = "resource"      // embedded resource
	ContentResourceLink ContentType = "resource_link" // a link to a resource
	// ContentDiff is a change of a text file: Path, OldText (nil for a new
	// file) and Text, the new text.
	ContentDiff ContentType = "diff"
	// ContentTerminal is a terminal the client runs (TerminalID), shown
	// live; Text is its output when the call ended, for a record that
	// outlives the terminal.
	ContentTerminal ContentType = "terminal"
)

// Content is one block of a tool result as the user should see it.
type Content struct {
	Type     ContentType `json:"type"`
	Text     string      `json:"text,omitempty"`     // text, or the text of a text resource
	Data     string      `json:"data,omitempty"`     // base64: image, audio, or a blob resource
	MIMEType string      `json:"mimeType,omitempty"` // of Data or of the resource
	URI      string      `json:"uri,omitempty"`      // resource and resource_link
	Name     string      `json:"name,omitempty"`     // resource_link
	Title    string      `json:"title,omitempty"`
	// Description of a resource_link.
	Description string `json:"description,omitempty"`
	Size        *int64 `json:"size,omitempty"`
	// Path is the absolute path of the file a diff changes.
	Path string `json:"path,omitempty"`
	// OldText is a diff's text before the change (nil: a new file).
	OldText *string `json:"oldText,omitempty"`
	// TerminalID names a terminal on the client.
	TerminalID string `json:"terminalId,omitempty"`
}

// Result is the outcome of a tool call.
type Result struct {
	// Content is what the user is shown: the raw content.
	Content []Content `json:"content,omitempty"`
	// Structured is the tool's structured output, if any.
	Structured json.RawMessage `json:"structured,omitempty"`
	// IsError marks a failed call.
	IsError bool `json:"isError,omitempty"`
	// ForModel is what the model is given as text. If empty, the text of
	// Content is used. (A tool from elsewhere frames untrusted content
	// here.)
	ForModel string `json:"forModel,omitempty"`
	// ModelContent, when set, is what the model is given, part by part:
	// text, and images and audio (Data, MIMEType) with the text that
	// frames them; ForModel is then its text alone, for what reads text
	// only. See ModelParts.
	ModelContent []Content `json:"modelContent,omitempty"`
}

// WithModelText returns r with texts added to what the model is given:
// after ForModel when the result has one, else as text contents.
func (r Result) WithModelText(texts ...string) Result {
	if len(texts) == 0 {
		return r
	}
	if r.ForModel != "" {
		r.ForModel += "\n\n" + strings.Join(texts, "\n\n")
		return r
	}
	content := make([]Content, 0, len(r.Content)+len(texts))
	content = append(content, r.Content...)
	for _, t := range texts {
		content = append(content, Content{Type: ContentText, Text: t})
	}
	r.Content = content
	return r
}

// ErrorResult returns a failed result carrying msg.
func ErrorResult(msg string) Result {
	return Result{Content: []Content{{Type: ContentText, Text: msg}}, IsError: true}
}

// TextResult returns a successful result carrying text.
func TextResult(text string) Result {
	return Result{Content: []Content{{Type: ContentText, Text: text}}}
}

// ModelText is the text the model is given for r: ForModel, else the
// plain text of Content, else "(empty result)".
func (r *Result) ModelText() string {
	if r.ForModel != "" {
		return r.ForModel
	}
	if t := PlainText(r.Content); t != "" {
		return t
	}
	return "(empty result)"
}

// ModelParts is what the model is given for r, part by part: ModelContent
// when set; else, when Content holds images or audio, its parts in order
// (text as is, images and audio as parts, everything else as PlainText
// says it; ForModel, when set, in place of the text); else the one text
// part of ModelText. Which parts reach a model is its provider's to say
// (MediaGate.Prepare): what it does not take becomes a note.
func (r *Result) ModelParts() []Content {
	if r.ModelContent != nil {
		return r.ModelContent
	}
	if !slices.ContainsFunc(r.Content, IsMedia) {
		return []Content{{Type: ContentText, Text: r.ModelText()}}
	}
	var out []Content
	if r.ForModel != "" {
		out = append(out, Content{Type: ContentText, Text: r.ForModel})
	}
	for _, c := range r.Content {
		switch {
		case IsMedia(c):
			out = append(out, c)
		case r.ForModel == "":
			out = append(out, Content{Type: ContentText, Text: PlainText([]Content{c})})
		}
	}
	return out
}

// PlainText renders content as text for a model: text as is, everything
// else as a bracketed note saying what it is.
func PlainText(content []Content) string {
	text, _ := PlainTextPrefix(content, -1)
	return text
}

// PlainTextPrefix returns the first max bytes of PlainText(content) (all
// of it if max < 0 or it is not longer) and the length of all of it,
// without building more than the prefix: a large result is not copied to
// be cut. A cut prefix ends on a rune boundary (so it may be a little
// shorter than max).
func PlainTextPrefix(content []Content, max int) (string, int) {
	if len(content) == 1 && content[0].Type == ContentText {
		t := content[0].Text // as is: no copy
		return RunePrefix(t, max), len(t)
	}
	var b strings.Builder
	total, full := 0, false
	add := func(s string) {
		total += len(s)
		if full {
			return
		}
		p := RunePrefix(s, max-b.Len())
		full = len(p) < len(s)
		b.WriteString(p)
	}
	for i, c := range content {
		if i > 0 {
			add("\n")
		}
		switch c.Type {
		case ContentText:
			add(c.Text)
		case ContentResource:
			if c.Text != "" {
				add(fmt.Sprintf("[resource %s]\n", c.URI))
				add(c.Text)
			} else {
				add(fmt.Sprintf("[resource %s: %s, %d bytes base64]", c.URI, c.MIMEType, len(c.Data)))
			}
		case ContentResourceLink:
			add(fmt.Sprintf("[resource link %s: %s]", c.Name, c.URI))
			if c.Description != "" {
				add(" " + c.Description)
			}
		case ContentDiff:
			add(fmt.Sprintf("[changed %s]", c.Path))
		case ContentTerminal:
			add(c.Text)
		default: // image, audio
			add(fmt.Sprintf("[%s: %s, %d bytes base64]", c.Type, c.MIMEType, len(c.Data)))
		}
	}
	return b.String(), total
}

// CapText cuts text to at most max bytes (on a rune boundary) and says
// with a note, after it, how much of the what ("result", "instructions")
// was cut; more is how many bytes after text the caller already cut off.
// Text within max (with more 0), or max <= 0, is returned as it is. This
// is the one form of the notes the model finds where text was cut.
func CapText(text string, more, max int, what string) string {
	if max <= 0 || len(text) <= max && more == 0 {
		return text
	}
	kept := RunePrefix(text, max)
	total := len(text) + more
	return kept + fmt.Sprintf("\n[%s truncated: showing the first %d of %d bytes; %d bytes were cut]", what, len(kept), total, total-len(kept))
}

// RunePrefix returns the longest prefix of s of at most max bytes that
// does not end inside a rune (s itself if max < 0 or s is not longer).
func RunePrefix(s string, max int) string {
	if max < 0 || len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max]
}
