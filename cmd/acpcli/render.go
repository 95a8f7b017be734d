package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	acp "github.com/coder/acp-go-sdk"
)

// maxToolLines bounds how many lines of a finished tool call's output are shown.
const maxToolLines = 20

// Streams of chunked text the renderer can be in the middle of.
const (
	runNone = iota
	runMessage
	runThought
	runUser
)

// toolState is what the renderer remembers about one tool call.
type toolState struct {
	title   string
	kind    acp.ToolKind
	status  acp.ToolCallStatus
	content []acp.ToolCallContent
}

// renderer writes everything acpcli prints. Agent text and tool calls go to
// out (stdout); thoughts, plans, commands, modes, notices and the end of each
// turn go to errw (stderr). It is safe for concurrent use.
type renderer struct {
	mu       sync.Mutex
	out      io.Writer
	errw     io.Writer
	jsonMode bool // updates are printed raw via JSONLine, not rendered
	dim      bool // dim thoughts with ANSI escapes (stderr is a terminal)

	run          int  // chunk stream currently being printed
	outMid       bool // stdout does not end with a newline
	errMid       bool // stderr does not end with a newline
	tools        map[acp.ToolCallId]*toolState
	commandsSeen bool
}

func newRenderer(out, errw io.Writer, jsonMode, dim bool) *renderer {
	return &renderer{out: out, errw: errw, jsonMode: jsonMode, dim: dim, tools: make(map[acp.ToolCallId]*toolState)}
}

// breakLine ends any partial line on either stream.
func (r *renderer) breakLine() {
	if r.outMid {
		io.WriteString(r.out, "\n")
		r.outMid = false
	}
	if r.errMid {
		io.WriteString(r.errw, "\n")
		r.errMid = false
	}
	r.run = runNone
}

// Notef prints a line on stderr, starting it on a line of its own.
func (r *renderer) Notef(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.breakLine()
	fmt.Fprintf(r.errw, format+"\n", args...)
}

// Prompt prints an input prompt (without newline) on stderr.
func (r *renderer) Prompt(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.breakLine()
	io.WriteString(r.errw, s)
}

// JSONLine prints a JSON value, byte for byte, as a line on stdout (for
// --json). raw must not contain a newline; values cut from a
// newline-delimited JSON-RPC message never do.
func (r *renderer) JSONLine(raw []byte) {
	line := make([]byte, 0, len(raw)+1)
	line = append(append(line, raw...), '\n')
	r.mu.Lock()
	defer r.mu.Unlock()
	r.out.Write(line)
}

// Stop reports the end of a turn: a JSON line with --json, else
// "[stop: reason]" on stderr after ending the current line.
func (r *renderer) Stop(reason acp.StopReason) {
	if r.jsonMode {
		b, _ := json.Marshal(map[string]acp.StopReason{"stopReason": reason})
		r.JSONLine(b)
		return
	}
	r.Notef("[stop: %s]", reason)
}

// Update renders one session/update (a no-op with --json, where the raw
// notification is printed instead).
func (r *renderer) Update(u acp.SessionUpdate) {
	if r.jsonMode {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case u.AgentMessageChunk != nil:
		r.chunk(runMessage, u.AgentMessageChunk.Content)
	case u.AgentThoughtChunk != nil:
		r.chunk(runThought, u.AgentThoughtChunk.Content)
	case u.UserMessageChunk != nil:
		r.chunk(runUser, u.UserMessageChunk.Content)
	case u.ToolCall != nil:
		r.toolCall(u.ToolCall)
	case u.ToolCallUpdate != nil:
		r.toolCallUpdate(u.ToolCallUpdate)
	case u.Plan != nil:
		r.plan(u.Plan.Entries)
	case u.AvailableCommandsUpdate != nil:
		r.commands(u.AvailableCommandsUpdate.AvailableCommands)
	case u.CurrentModeUpdate != nil:
		r.breakLine()
		fmt.Fprintf(r.errw, "mode: %s\n", u.CurrentModeUpdate.CurrentModeId)
	case u.SessionInfoUpdate != nil && u.SessionInfoUpdate.Title != nil:
		r.breakLine()
		fmt.Fprintf(r.errw, "title: %s\n", *u.SessionInfoUpdate.Title)
	}
}

// chunk prints a piece of streamed text: agent text on stdout, replayed user
// text on stdout after "> ", thoughts on stderr after "thinking: ".
func (r *renderer) chunk(kind int, c acp.ContentBlock) {
	text := blockText(c)
	if text == "" {
		return
	}
	if r.run != kind {
		r.breakLine()
		r.run = kind
		switch kind {
		case runUser:
			io.WriteString(r.out, "> ")
		case runThought:
			io.WriteString(r.errw, "thinking: ")
		}
	}
	mid := !strings.HasSuffix(text, "\n")
	if kind == runThought {
		if r.dim {
			text = "\x1b[2m" + text + "\x1b[0m"
		}
		io.WriteString(r.errw, text)
		r.errMid = mid
		return
	}
	io.WriteString(r.out, text)
	r.outMid = mid
}

// blockText is the text of a content block, or a short placeholder for
// non-text content.
func blockText(c acp.ContentBlock) string {
	switch {
	case c.Text != nil:
		return c.Text.Text
	case c.Image != nil:
		return fmt.Sprintf("[image %s]", c.Image.MimeType)
	case c.Audio != nil:
		return fmt.Sprintf("[audio %s]", c.Audio.MimeType)
	case c.ResourceLink != nil:
		return fmt.Sprintf("[resource %s]", c.ResourceLink.Uri)
	case c.Resource != nil:
		return resourceText(c.Resource.Resource)
	}
	return ""
}

func resourceText(res acp.EmbeddedResourceResource) string {
	switch {
	case res.TextResourceContents != nil:
		return res.TextResourceContents.Text
	case res.BlobResourceContents != nil:
		return fmt.Sprintf("[resource %s]", res.BlobResourceContents.Uri)
	}
	return "[resource]"
}

// toolCall prints "⏺ <title> [<kind>] <status>" for a new tool call.
func (r *renderer) toolCall(tc *acp.SessionUpdateToolCall) {
	st := &toolState{title: tc.Title, kind: tc.Kind, status: tc.Status, content: tc.Content}
	if st.status == "" {
		st.status = acp.ToolCallStatusPending
	}
	r.tools[tc.ToolCallId] = st
	r.breakLine()
	title := st.title
	if title == "" {
		title = string(tc.ToolCallId)
	}
	if st.kind != "" {
		fmt.Fprintf(r.out, "⏺ %s [%s] %s\n", title, st.kind, st.status)
	} else {
		fmt.Fprintf(r.out, "⏺ %s %s\n", title, st.status)
	}
	if st.status == acp.ToolCallStatusCompleted || st.status == acp.ToolCallStatusFailed {
		r.toolResult(st)
	}
}

// toolCallUpdate records an update and prints status changes.
func (r *renderer) toolCallUpdate(u *acp.SessionToolCallUpdate) {
	st := r.tools[u.ToolCallId]
	if st == nil {
		st = &toolState{title: string(u.ToolCallId)}
		r.tools[u.ToolCallId] = st
	}
	if u.Title != nil {
		st.title = *u.Title
	}
	if u.Kind != nil {
		st.kind = *u.Kind
	}
	if u.Content != nil {
		st.content = u.Content
	}
	if u.Status == nil || *u.Status == st.status {
		return
	}
	st.status = *u.Status
	r.breakLine()
	switch st.status {
	case acp.ToolCallStatusCompleted, acp.ToolCallStatusFailed:
		r.toolResult(st)
	default:
		fmt.Fprintf(r.out, "  ↳ %s\n", st.status)
	}
}

// toolResult prints "  ↳ completed" and up to maxToolLines lines of output,
// or "  ↳ failed: <first line>".
func (r *renderer) toolResult(st *toolState) {
	lines := contentLines(st.content)
	if st.status == acp.ToolCallStatusFailed {
		if len(lines) > 0 {
			fmt.Fprintf(r.out, "  ↳ failed: %s\n", lines[0])
		} else {
			fmt.Fprintln(r.out, "  ↳ failed")
		}
		return
	}
	fmt.Fprintln(r.out, "  ↳ completed")
	for i, l := range lines {
		if i == maxToolLines {
			fmt.Fprintf(r.out, "    … %d more lines\n", len(lines)-maxToolLines)
			break
		}
		fmt.Fprintf(r.out, "    %s\n", l)
	}
}

// contentLines is the text of tool call content split into lines, without
// leading and trailing blank lines.
func contentLines(content []acp.ToolCallContent) []string {
	var parts []string
	for _, c := range content {
		switch {
		case c.Content != nil:
			parts = append(parts, blockText(c.Content.Content))
		case c.Diff != nil:
			parts = append(parts, "[diff "+c.Diff.Path+"]")
		case c.Terminal != nil:
			parts = append(parts, "[terminal "+c.Terminal.TerminalId+"]")
		}
	}
	text := strings.Trim(strings.Join(parts, "\n"), "\n")
	if strings.TrimSpace(text) == "" {
		return nil
	}
	return strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
}

// plan prints the whole plan on stderr.
func (r *renderer) plan(entries []acp.PlanEntry) {
	r.breakLine()
	fmt.Fprintln(r.errw, "plan:")
	for _, e := range entries {
		mark := "[ ]"
		switch e.Status {
		case acp.PlanEntryStatusInProgress:
			mark = "[~]"
		case acp.PlanEntryStatusCompleted:
			mark = "[x]"
		}
		fmt.Fprintf(r.errw, "  %s %s\n", mark, e.Content)
	}
}

// commands prints the available command names on stderr, the first time only.
func (r *renderer) commands(cmds []acp.AvailableCommand) {
	if r.commandsSeen {
		return
	}
	r.commandsSeen = true
	names := make([]string, 0, len(cmds))
	for _, c := range cmds {
		names = append(names, "/"+c.Name)
	}
	r.breakLine()
	fmt.Fprintf(r.errw, "commands: %s\n", strings.Join(names, " "))
}

// toolTitle names the tool call a permission request is about: its title in
// the request, else the title seen in an earlier tool_call, else its id.
func (r *renderer) toolTitle(tc acp.ToolCallUpdate) string {
	if tc.Title != nil && *tc.Title != "" {
		return *tc.Title
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if st := r.tools[tc.ToolCallId]; st != nil && st.title != "" {
		return st.title
	}
	return string(tc.ToolCallId)
}
