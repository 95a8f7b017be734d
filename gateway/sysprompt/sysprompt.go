// Package sysprompt builds a session's system prompt: what the model is
// told of acpgate (or what the user's editor says in its place, or adds:
// client.go) and its environment, of the workspace tools and where they
// act, of the plan tool, of the instructions of the configuration and of
// AGENTS.md files (files.go), and of the session's MCP servers and their
// instructions.
//
// The prompt is built from an Input, plain data: the same Input gives the
// same bytes, and a Builder builds again only when its Input changed, so
// consecutive requests of a session share a byte-identical prefix, which
// providers' prompt caches reward. The sections that change least come
// first: the MCP servers' states change the last section only.
//
// Text from MCP servers is never put in as it came: a Builder's Frame
// (bridge.Options.Instructions) redacts, cuts and frames it.
package sysprompt

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/acpgate/acpgate/gateway"
)

// The bounds of what the prompt holds.
const (
	// MaxServerInstructionsBytes bounds one MCP server's instructions,
	// MaxAllServerInstructionsBytes all of them together.
	MaxServerInstructionsBytes    = 2 << 10
	MaxAllServerInstructionsBytes = 8 << 10
	// MaxInstructionsBytes bounds each instructions text (the
	// configuration's, each AGENTS.md file).
	MaxInstructionsBytes = 16 << 10
)

// Input is everything a system prompt says. It is plain data; two Inputs
// that are equal (same day, same fields) give the same prompt.
type Input struct {
	// Date is today; only the day is said (so the prompt does not change
	// with every request).
	Date time.Time
	// OS and Arch name the machine acpgate runs on (runtime.GOOS,
	// runtime.GOARCH).
	OS, Arch string
	// Shell is how run_command runs a command line, as "sh -c".
	Shell string
	// Cwd is the session's working directory; Dirs its additional
	// directories.
	Cwd  string
	Dirs []string
	// Tools are the session's workspace tools that its policy allows, in
	// the order offered.
	Tools []WorkspaceTool
	// Plan says update_plan is offered (the policy allows it).
	Plan bool
	// Instructions are the configuration's and the AGENTS.md files',
	// most general first.
	Instructions []Instructions
	// Servers are the session's MCP servers, in the order shown.
	Servers []Server
	// Client is the system prompt the client gave for the session (the
	// zero value: none).
	Client ClientPrompt
}

// ClientPrompt is a system prompt the client (the user's editor) gave for
// a session: the user's words. Its text takes the place of acpgate's own
// instructions (the opening paragraphs of the first section), or, with
// Append, follows them; either way under a heading saying it comes from
// the user through the editor, before the environment. A blank Text is
// none: acpgate's own instructions stay, alone.
type ClientPrompt struct {
	// Text is the client's text, as it gave it: the Builder trims it,
	// cuts it to MaxInstructionsBytes, demotes its headings and
	// neutralises it.
	Text string
	// Append says Text adds to acpgate's own instructions; unset, it
	// replaces them.
	Append bool
}

// none reports whether c says nothing (its text is blank).
func (c ClientPrompt) none() bool { return strings.TrimSpace(c.Text) == "" }

// WorkspaceTool is one workspace tool and where it acts.
type WorkspaceTool struct {
	Name string
	// Editor is set when it acts through the editor (ACP fs/* and
	// terminal/*), unset when it acts on this machine directly.
	Editor bool
}

// Instructions is a text of instructions and where it comes from.
type Instructions struct {
	// Source names where they come from, as the prompt says it: "the
	// configuration", a file's path.
	Source string
	Text   string
}

// ServerState is what the prompt says of an MCP server's state.
type ServerState string

// The server states the prompt knows.
const (
	ServerReady      ServerState = "ready"
	ServerConnecting ServerState = "connecting"
	ServerRestarting ServerState = "reconnecting"
	ServerNeedsAuth  ServerState = "needs sign-in"
	ServerFailed     ServerState = "failed"
)

// Server is one MCP server of the session.
type Server struct {
	// Name is the server's name, the key its instructions are framed
	// under (FrameFunc); it never enters the prompt's text.
	Name string
	// Label is the server's name as the prompt shows it, already made one
	// safe line by the caller (bridge.ServerLabel): the prompt writes it
	// as it is.
	Label string
	State ServerState
	// SignIn says how the user signs in to a server that needs it ("":
	// the prompt only says the user must).
	SignIn string
	// Instructions are the server's own text (its initialize result's),
	// raw: the Builder's Frame prepares it. Only a ready server's are
	// used.
	Instructions string
}

// Section is one part of a prompt.
type Section struct {
	// Name is the section's short name: "acpgate", "workspace", "plan",
	// "instructions" or "servers".
	Name string
	// Title is what /context calls it.
	Title string
	Text  string
}

// Prompt is a built system prompt: its sections, in order, and the whole
// text (the sections' texts joined by blank lines). A value; do not
// modify its Sections.
type Prompt struct {
	Sections []Section
	Text     string
	// Client is where the client's system prompt is (the zero value when
	// the prompt has none).
	Client ClientPart
}

// ClientPart is where a client's system prompt is in a built prompt.
type ClientPart struct {
	// Section is the Name of the section that holds it; "" when the
	// prompt has none.
	Section string
	// Bytes is the size of its part of that section: its heading, the
	// words framing it and its text, as the model gets them.
	Bytes int
	// Append is the ClientPrompt's: it follows acpgate's own
	// instructions instead of replacing them.
	Append bool
}

// Tokens estimates how many tokens n bytes of text are: n/4, rounded up.
func Tokens(n int) int { return (n + 3) / 4 }

// FrameFunc prepares an MCP server's instructions text for the model: at
// most max bytes of it, redacted, and framed as the server's unless the
// server is trusted (bridge.Options.Instructions). "" leaves them out.
type FrameFunc func(server, text string, max int) string

// NeutralizeFunc makes text that enters the prompt unframed (the
// instructions) unable to end or forge a frame: it replaces look-alikes
// of frame markers (bridge.Neutralize).
type NeutralizeFunc func(text string) string

// Builder builds the system prompts of one session, again only when what
// they say changed. Safe for concurrent use.
type Builder struct {
	frame      FrameFunc
	neutralize NeutralizeFunc

	mu     sync.Mutex
	last   *Input
	prompt Prompt
}

// NewBuilder returns a Builder framing the servers' instructions with
// frame (nil leaves every server's instructions out) and neutralising the
// instructions texts with neutralize (nil: as they are).
func NewBuilder(frame FrameFunc, neutralize NeutralizeFunc) *Builder {
	if neutralize == nil {
		neutralize = func(text string) string { return text }
	}
	return &Builder{frame: frame, neutralize: neutralize}
}

// Build returns the prompt for in: the last one built when in equals the
// last Input (the same bytes, not built again), else a new one.
func (b *Builder) Build(in Input) Prompt {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.last != nil && b.last.equal(&in) {
		return b.prompt
	}
	in.Dirs, in.Tools = slices.Clone(in.Dirs), slices.Clone(in.Tools)
	in.Instructions, in.Servers = slices.Clone(in.Instructions), slices.Clone(in.Servers)
	b.last, b.prompt = &in, build(&in, b.frame, b.neutralize)
	return b.prompt
}

// Last returns the prompt built last (ok false before the first Build).
func (b *Builder) Last() (p Prompt, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.prompt, b.last != nil
}

// day is what the prompt says of the date.
func (in *Input) day() string { return in.Date.Format("2006-01-02") }

// equal reports whether in and o give the same prompt.
func (in *Input) equal(o *Input) bool {
	return in.day() == o.day() && in.OS == o.OS && in.Arch == o.Arch && in.Shell == o.Shell && in.Cwd == o.Cwd &&
		slices.Equal(in.Dirs, o.Dirs) && slices.Equal(in.Tools, o.Tools) && in.Plan == o.Plan &&
		slices.Equal(in.Instructions, o.Instructions) && slices.Equal(in.Servers, o.Servers) && in.Client == o.Client
}

// build writes the prompt of in.
func build(in *Input, frame FrameFunc, neutralize NeutralizeFunc) Prompt {
	client := clientPart(in.Client, neutralize)
	sections := []Section{
		{Name: "acpgate", Title: "acpgate and the environment", Text: agentSection(in, client)},
		{Name: "workspace", Title: "Workspace tools", Text: workspaceSection(in)},
	}
	if in.Plan {
		sections = append(sections, Section{Name: "plan", Title: "Plans", Text: planSection})
	}
	if len(in.Instructions) > 0 {
		sections = append(sections, Section{Name: "instructions", Title: "Instructions", Text: instructionsSection(in.Instructions, neutralize)})
	}
	if len(in.Servers) > 0 {
		sections = append(sections, Section{Name: "servers", Title: "MCP servers", Text: serversSection(in.Servers, frame)})
	}
	texts := make([]string, len(sections))
	for i, s := range sections {
		texts[i] = s.Text
	}
	p := Prompt{Sections: sections, Text: strings.Join(texts, "\n\n")}
	if client != "" {
		p.Client = ClientPart{Section: sections[0].Name, Bytes: len(client), Append: in.Client.Append}
	}
	return p
}

// agentInstructions are acpgate's own instructions: the opening
// paragraphs of the prompt, which a client's system prompt replaces or
// follows.
const agentInstructions = "You are acpgate, an AI agent working for the user in their code editor through the Agent Client Protocol (ACP). " +
	"The user writes to you in the editor and sees your answers, your tool calls and their results there; " +
	"the editor may ask the user to approve a tool call before it runs, and the user may reject it. " +
	"Your tools are acpgate's own and those of the session's MCP servers.\n" +
	"Do what the user asks, with your tools rather than by guessing; be concise, and say briefly what you did and what is left."

// agentSection is acpgate's own instructions, or client (the client's
// system prompt as clientPart writes it) in their place or after them,
// then the environment.
func agentSection(in *Input, client string) string {
	var b strings.Builder
	if client == "" || in.Client.Append {
		b.WriteString(agentInstructions + "\n\n")
	}
	if client != "" {
		b.WriteString(client + "\n\n")
	}
	b.WriteString("# Environment\n")
	fmt.Fprintf(&b, "- Date: %s\n", in.day())
	fmt.Fprintf(&b, "- OS: %s/%s\n", in.OS, in.Arch)
	fmt.Fprintf(&b, "- Working directory: %s", oneLine(in.Cwd))
	if len(in.Dirs) > 0 {
		dirs := make([]string, len(in.Dirs))
		for i, d := range in.Dirs {
			dirs[i] = oneLine(d)
		}
		fmt.Fprintf(&b, "\n- Additional directories: %s", strings.Join(dirs, ", "))
	}
	return b.String()
}

// oneLine is a path as the prompt writes it: as it is when it is one line
// of printable text, else quoted as a Go string (escapes and all), so a
// directory named with a newline cannot start a section of its own.
func oneLine(path string) string {
	if strings.IndexFunc(path, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) < 0 && utf8.ValidString(path) {
		return path
	}
	return strconv.Quote(path)
}

// workspaceSection says which workspace tools there are, where they act
// and how to use them well.
func workspaceSection(in *Input) string {
	var b strings.Builder
	b.WriteString("# Workspace tools\n")
	if len(in.Tools) == 0 {
		b.WriteString("This session has no workspace tools: you cannot read or change files or run commands yourself, except with MCP tools that do.")
		return b.String()
	}
	has := func(name string) bool {
		return slices.ContainsFunc(in.Tools, func(t WorkspaceTool) bool { return t.Name == name })
	}
	var editor, local []string
	for _, t := range in.Tools {
		if t.Editor {
			editor = append(editor, t.Name)
		} else {
			local = append(local, t.Name)
		}
	}
	if len(editor) > 0 {
		fmt.Fprintf(&b, "- %s act through the editor: files as the editor has them (unsaved changes included), changes shown to the user as diffs, commands in the editor's terminal.\n", strings.Join(editor, ", "))
	}
	if len(local) > 0 {
		fmt.Fprintf(&b, "- %s act directly on this machine (not through the editor).\n", strings.Join(local, ", "))
	}
	b.WriteString("Paths are absolute and inside the working directory or an additional directory.\nUse them well:")
	if has("edit_file") || has("write_file") {
		b.WriteString("\n- Read a file before you change it, and base the change on what you read.")
	}
	if has("edit_file") {
		b.WriteString("\n- edit_file replaces one exact piece of text: copy old_text from the file exactly, with enough around it to occur once; one change per call.")
	}
	if has("write_file") {
		b.WriteString("\n- write_file replaces a whole file: use it to create files, edit_file to change them.")
	}
	if has("read_file") {
		b.WriteString("\n- Read long files in parts (line, limit).")
	}
	if has("run_command") {
		fmt.Fprintf(&b, "\n- run_command runs a command line with %s in the working directory, without input: use commands that end by themselves and print little (long output is cut); set timeout_seconds for slow ones.", in.Shell)
	}
	return b.String()
}

const planSection = "# Plans\n" +
	"For a task of several steps, call update_plan with the whole list of steps before you start, then again each time a step starts " +
	"(in_progress, one at a time) or is done (completed): the editor shows the plan to the user. Not for simple one-step requests."

// instructionsSection gives each instructions text, neutralised and cut,
// under a heading naming its source.
func instructionsSection(list []Instructions, neutralize NeutralizeFunc) string {
	var b strings.Builder
	b.WriteString("# Instructions\n" +
		"The user's and the project's instructions, from acpgate's configuration and AGENTS.md files. Follow them; " +
		"where they disagree, the later (more specific) ones win. An AGENTS.md file applies to its directory and below.")
	for _, in := range list {
		text := gateway.CapText(strings.TrimSpace(in.Text), 0, MaxInstructionsBytes, "instructions")
		fmt.Fprintf(&b, "\n\n## From %s\n%s", oneLine(in.Source), neutralize(text))
	}
	return b.String()
}

// serversSection lists the servers and their states, then the ready
// servers' instructions, framed, within the bounds.
func serversSection(servers []Server, frame FrameFunc) string {
	var b strings.Builder
	b.WriteString("# MCP servers\nThe session's MCP servers; their tools are among yours while they are ready.")
	for _, s := range servers {
		fmt.Fprintf(&b, "\n- %s: %s", s.Label, s.State)
		switch s.State {
		case ServerNeedsAuth:
			b.WriteString(" (its tools come once the user signs in")
			if s.SignIn != "" {
				fmt.Fprintf(&b, ": %s", s.SignIn)
			}
			b.WriteString(")")
		case ServerFailed:
			b.WriteString(" (its tools are unavailable; /mcp shows why)")
		case ServerConnecting, ServerRestarting:
			b.WriteString(" (its tools are not available yet)")
		}
	}
	if frame == nil {
		return b.String()
	}
	left := MaxAllServerInstructionsBytes
	for _, s := range servers {
		text := strings.TrimSpace(s.Instructions)
		if s.State != ServerReady || text == "" {
			continue
		}
		if left <= 0 {
			fmt.Fprintf(&b, "\n\n[The instructions of the MCP server %s are left out: the servers' instructions are limited to %d bytes in all.]", s.Label, MaxAllServerInstructionsBytes)
			continue
		}
		limit := min(MaxServerInstructionsBytes, left)
		if framed := frame(s.Name, text, limit); framed != "" {
			fmt.Fprintf(&b, "\n\n## Instructions of the MCP server %s\n%s", s.Label, framed)
		}
		left -= min(len(text), limit)
	}
	return b.String()
}
