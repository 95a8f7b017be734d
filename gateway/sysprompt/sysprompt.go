// Package sysprompt builds a session's system prompt: the agent's own
// instructions (Options.Intro; or what the user's editor says in their
// place, or adds: client.go) and its environment, the workspace tools and
// where they act, the plan tool, the instructions of the configuration
// and of AGENTS.md files (files.go), then the caller's own sections
// (Input.Sections: the session's other sources of tools, for one), which
// the caller writes.
//
// The prompt is built from an Input, plain data: the same Input gives the
// same bytes, and a Builder builds again only when its Input changed, so
// consecutive requests of a session share a byte-identical prefix, which
// providers' prompt caches reward. The sections that change least come
// first: the caller's sections, which change most, come last.
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

// MaxInstructionsBytes bounds each instructions text (the
// configuration's, each AGENTS.md file, the client's system prompt).
const MaxInstructionsBytes = 16 << 10

// DefaultMaxTotalInstructionsBytes bounds the instructions texts (the
// configuration's and the AGENTS.md files') together, as the prompt
// writes them (Options.MaxTotalInstructionsBytes overrides it).
const DefaultMaxTotalInstructionsBytes = 64 << 10

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
	// Client is the system prompt the client gave for the session (the
	// zero value: none).
	Client ClientPrompt
	// Sections are the caller's own sections, after the others, in
	// order: their texts go in as they are (the caller frames and bounds
	// what it puts in them), and their Names must differ from the
	// Builder's own (SectionAgent ... SectionInstructions).
	Sections []Section
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
	// Editor is set when it acts through the editor (the client's file
	// and terminal methods), unset when it acts on this machine directly.
	Editor bool
}

// Instructions is a text of instructions and where it comes from.
type Instructions struct {
	// Source names where they come from, as the prompt says it: "the
	// configuration", a file's path.
	Source string
	Text   string
}

// Section is one part of a prompt.
type Section struct {
	// Name is the section's short name: one of the Builder's own
	// (SectionAgent, SectionWorkspace, SectionPlan, SectionInstructions)
	// or a caller's (Input.Sections).
	Name string
	// Title is what a report of the prompt's sections calls it.
	Title string
	// Text is the section's text, its heading included.
	Text string
}

// The Names of the Builder's own sections, in their order.
const (
	SectionAgent        = "acpgate"
	SectionWorkspace    = "workspace"
	SectionPlan         = "plan"
	SectionInstructions = "instructions"
)

// Prompt is a built system prompt: its sections, in order, and the whole
// text (the sections' texts joined by blank lines). A value; do not
// modify its Sections.
type Prompt struct {
	Sections []Section
	Text     string
	// Client is where the client's system prompt is (the zero value when
	// the prompt has none).
	Client ClientPart
	// LeftOut are the instructions texts left out of the prompt, in
	// order: those that did not fit in what was left of
	// Options.MaxTotalInstructionsBytes.
	LeftOut []LeftOut
}

// LeftOut is an instructions text the prompt left out.
type LeftOut struct {
	// Source is the Instructions' Source.
	Source string
	// Bytes is what it would have taken, as the prompt writes it.
	Bytes int
}

// SectionText returns the text of the prompt's section called name, ""
// when it has none.
func (p Prompt) SectionText(name string) string {
	for _, s := range p.Sections {
		if s.Name == name {
			return s.Text
		}
	}
	return ""
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

// NeutralizeFunc makes text that enters the prompt unframed (the
// instructions, the client's system prompt) unable to end or forge a
// frame the caller puts around untrusted text: it replaces look-alikes of
// its frame markers.
type NeutralizeFunc func(text string) string

// Options are what a Builder says the same way in every prompt it builds:
// the caller's words, and how it keeps text from forging a frame.
type Options struct {
	// Intro is the agent's own instructions: the opening paragraphs of
	// the first section, which a client's system prompt replaces or
	// follows (ClientPrompt). "" opens the prompt with the client's system
	// prompt, or the environment.
	Intro string
	// NoWorkspaceTools is what the workspace section says under its
	// heading when the session has no workspace tools.
	NoWorkspaceTools string
	// Neutralize neutralises the instructions texts and the client's
	// system prompt (nil: they go in as they are).
	Neutralize NeutralizeFunc
	// MaxTotalInstructionsBytes bounds the instructions texts together,
	// as the prompt writes them, each cut to MaxInstructionsBytes first
	// (0: DefaultMaxTotalInstructionsBytes). They are taken in order,
	// most general first; one that does not fit in what is left is left
	// out (Prompt.LeftOut).
	MaxTotalInstructionsBytes int
}

// Builder builds the system prompts of one session, again only when what
// they say changed. Safe for concurrent use.
type Builder struct {
	opts Options

	mu     sync.Mutex
	last   *Input
	prompt Prompt
}

// NewBuilder returns a Builder that says what opts says.
func NewBuilder(opts Options) *Builder {
	if opts.Neutralize == nil {
		opts.Neutralize = func(text string) string { return text }
	}
	if opts.MaxTotalInstructionsBytes <= 0 {
		opts.MaxTotalInstructionsBytes = DefaultMaxTotalInstructionsBytes
	}
	return &Builder{opts: opts}
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
	in.Instructions, in.Sections = slices.Clone(in.Instructions), slices.Clone(in.Sections)
	b.last, b.prompt = &in, build(&in, &b.opts)
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
		slices.Equal(in.Instructions, o.Instructions) && in.Client == o.Client && slices.Equal(in.Sections, o.Sections)
}

// build writes the prompt of in.
func build(in *Input, opts *Options) Prompt {
	client := clientPart(in.Client, opts.Neutralize)
	sections := []Section{
		{Name: SectionAgent, Title: "acpgate and the environment", Text: agentSection(in, opts.Intro, client)},
		{Name: SectionWorkspace, Title: "Workspace tools", Text: workspaceSection(in, opts.NoWorkspaceTools)},
	}
	if in.Plan {
		sections = append(sections, Section{Name: SectionPlan, Title: "Plans", Text: planSection})
	}
	var leftOut []LeftOut
	if len(in.Instructions) > 0 {
		var text string
		text, leftOut = instructionsSection(in.Instructions, opts)
		sections = append(sections, Section{Name: SectionInstructions, Title: "Instructions", Text: text})
	}
	sections = append(sections, in.Sections...)
	texts := make([]string, len(sections))
	for i, s := range sections {
		texts[i] = s.Text
	}
	p := Prompt{Sections: sections, Text: strings.Join(texts, "\n\n"), LeftOut: leftOut}
	if client != "" {
		p.Client = ClientPart{Section: sections[0].Name, Bytes: len(client), Append: in.Client.Append}
	}
	return p
}

// agentSection is the agent's own instructions (intro), or client (the
// client's system prompt as clientPart writes it) in their place or after
// them, then the environment.
func agentSection(in *Input, intro, client string) string {
	var b strings.Builder
	if (client == "" || in.Client.Append) && intro != "" {
		b.WriteString(intro + "\n\n")
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
// and how to use them well; noTools is what it says when there are none.
func workspaceSection(in *Input, noTools string) string {
	var b strings.Builder
	b.WriteString("# Workspace tools\n")
	if len(in.Tools) == 0 {
		b.WriteString(noTools)
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
// under a heading naming its source, as many as fit in
// opts.MaxTotalInstructionsBytes (see Options), and those left out.
func instructionsSection(list []Instructions, opts *Options) (string, []LeftOut) {
	var b strings.Builder
	b.WriteString("# Instructions\n" +
		"The user's and the project's instructions, from acpgate's configuration and AGENTS.md files. Follow them; " +
		"where they disagree, the later (more specific) ones win. An AGENTS.md file applies to its directory and below.")
	var leftOut []LeftOut
	room := opts.MaxTotalInstructionsBytes
	for _, in := range list {
		text := gateway.CapText(strings.TrimSpace(in.Text), 0, MaxInstructionsBytes, "instructions")
		part := fmt.Sprintf("\n\n## From %s\n%s", oneLine(in.Source), opts.Neutralize(text))
		if len(part) > room {
			leftOut = append(leftOut, LeftOut{Source: in.Source, Bytes: len(part)})
			continue
		}
		room -= len(part)
		b.WriteString(part)
	}
	if len(leftOut) > 0 {
		fmt.Fprintf(&b, "\n\n[%d instructions texts left out: over the limit of %d bytes for all of them]", len(leftOut), opts.MaxTotalInstructionsBytes)
	}
	return b.String(), leftOut
}
