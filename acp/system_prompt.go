package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/acpgate/acpgate/acp/clientws"
	"github.com/acpgate/acpgate/gateway/compact"
	"github.com/acpgate/acpgate/gateway/plan"
	"github.com/acpgate/acpgate/gateway/sysprompt"
	"github.com/acpgate/acpgate/gateway/workspace"
	"github.com/acpgate/acpgate/internal/base/safefile"
	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/session"
)

// This file is a session's system prompt (gateway/sysprompt): built at
// the start of each model turn from what the session is now, the same
// bytes as long as nothing in it changed, and fixed for the turn (a
// server that settles mid-turn changes the next turn's); the
// instructions files read once, through the editor when it can read
// files, and again after /reload; the client's _meta.systemPrompt, kept
// with the session; and /context, which shows it. What the prompt says of
// ACP and MCP (acpgate's own instructions, the servers' section) is
// system_prompt_servers.go's.

// promptState is a session's system prompt: its builder and the
// instructions files read for it, part of sessionState; the zero
// value has nothing built or read yet.
type promptState struct {
	builder *sysprompt.Builder
	servers serversPrompt // the servers' section, for builder
	files   []sysprompt.Instructions
	skipped []sysprompt.Skipped // files not read, and why
	loaded  bool                // files is read
}

// resetPrompt forgets the session's prompt builder and instructions
// files (the configuration changed): the next turn reads and builds them
// again.
func (st *sessionState) resetPrompt() { st.prompt = promptState{} }

// configInstructions are the configuration's instructions of eff, as the
// prompt names them.
func configInstructions(eff config.Effective) []sysprompt.Instructions {
	var out []sysprompt.Instructions
	if strings.TrimSpace(eff.Instructions) != "" {
		out = append(out, sysprompt.Instructions{Source: "the configuration", Text: eff.Instructions})
	}
	if strings.TrimSpace(eff.ProfileInstructions) != "" {
		out = append(out, sysprompt.Instructions{Source: fmt.Sprintf("the configuration's profile %q", eff.Profile), Text: eff.ProfileInstructions})
	}
	return out
}

// turnSystem is the system prompt of a model turn of s starting now: ""
// when s has no model (the turn is answered without one, and nothing is
// read for it).
func (cf *agentConfig) turnSystem(ctx context.Context, s configSession) string {
	if !s.hasModel() {
		return ""
	}
	return cf.systemPrompt(ctx, s).Text
}

// systemPrompt returns the system prompt of s's next model turn (see the
// file's comment). ctx bounds reading the instructions files.
func (cf *agentConfig) systemPrompt(ctx context.Context, s configSession) sysprompt.Prompt {
	files, _ := cf.instructionFiles(ctx, s)
	in := sysprompt.Input{Date: time.Now(), OS: runtime.GOOS, Arch: runtime.GOARCH, Shell: shellName()}
	s.promptInput(&in)
	for _, t := range s.nativeTools() {
		switch {
		case !s.allowed(t):
		case t.Name == plan.ToolName:
			in.Plan = true
		case t.Name == loadSkillTool: // the Skills section tells of it
		default:
			in.Tools = append(in.Tools, sysprompt.WorkspaceTool{Name: t.Name, Editor: t.Meta["workspace"] == "client"})
		}
	}
	var servers []promptServer
	for _, st := range s.statuses() {
		if state, ok := promptStates[st.State]; ok {
			servers = append(servers, serverInPrompt(st.Name, state, st.Instructions))
		}
	}
	return s.buildPrompt(cf, in, files, servers, s.skills().section(ctx))
}

// buildPrompt builds the session's system prompt from in, with its
// configuration's instructions and then files, the servers' section of
// servers, then extra (the Skills section); the builder is made the first time (and after resetPrompt),
// with the configuration's limit on the instructions.
func (s *liveSession) buildPrompt(cf *agentConfig, in sysprompt.Input, files []sysprompt.Instructions, servers []promptServer, extra []sysprompt.Section) sysprompt.Prompt {
	var p sysprompt.Prompt
	s.update(func(st *sessionState) {
		in.Instructions = append(append(in.Instructions, st.cfg.instructions...), files...)
		if st.prompt.builder == nil {
			opts := promptOptions()
			if l := st.cfg.limits.MaxInstructionsBytes; l != nil {
				opts.MaxTotalInstructionsBytes = *l
			}
			st.prompt.builder = sysprompt.NewBuilder(opts)
			st.prompt.servers = serversPrompt{frame: st.cfg.bridgeOptions(cf.bridgeBase(s.id)).Instructions}
		}
		in.Sections = append(st.prompt.servers.sections(servers), extra...)
		p = st.prompt.builder.Build(in)
	})
	return p
}

// loadedFiles returns the session's instructions files and those
// skipped, once read (loaded; instructionFiles).
func (s *liveSession) loadedFiles() (files []sysprompt.Instructions, skipped []sysprompt.Skipped, loaded bool) {
	s.update(func(st *sessionState) { files, skipped, loaded = st.prompt.files, st.prompt.skipped, st.prompt.loaded })
	return files, skipped, loaded
}

// keepFiles keeps the instructions files read for the session, and those
// skipped, until resetPrompt.
func (s *liveSession) keepFiles(files []sysprompt.Instructions, skipped []sysprompt.Skipped) {
	s.update(func(st *sessionState) { st.prompt.files, st.prompt.skipped, st.prompt.loaded = files, skipped, true })
}

// shellName is how run_command runs a command line, as "sh -c".
func shellName() string {
	name, args := workspace.Command{}.Shell()
	return strings.TrimSpace(name + " " + strings.Join(args[:len(args)-1], " "))
}

// instructionFiles returns the instructions of s's AGENTS.md files, and
// those skipped: the user's (Options.UserInstructions, from the disk,
// inside its directory), then the project's (sysprompt.ProjectFiles,
// inside the projects of the session's cwd and additional directories:
// sysprompt.ProjectRoots), read the first
// time it is called (and after resetPrompt). A read cut short by ctx is
// not kept.
func (cf *agentConfig) instructionFiles(ctx context.Context, s configSession) ([]sysprompt.Instructions, []sysprompt.Skipped) {
	files, skipped, loaded := s.loadedFiles()
	if loaded {
		return files, skipped
	}
	logger := cf.logger.With("session", s.sessionID())
	if p := cf.opts.UserInstructions; p != "" {
		roots := []string{filepath.Dir(p)}
		files, skipped = sysprompt.Load(ctx, []string{p}, roots, sysprompt.DiskReader(roots), logger)
	}
	home, _ := os.UserHomeDir()
	dirs := s.projectDirs()
	roots := sysprompt.ProjectRoots(dirs, home)
	project, skip := sysprompt.Load(ctx, sysprompt.ProjectFiles(dirs, home), roots, cf.fileReader(s, roots), logger)
	files, skipped = append(files, project...), append(skipped, skip...)
	if ctx.Err() == nil {
		s.keepFiles(files, skipped)
	}
	return files, skipped
}

// fileReader reads the instructions files of s, inside roots: through the
// editor (fs/read_text_file: its unsaved changes count) when it can read
// files, else, or when it fails to, from the disk.
func (cf *agentConfig) fileReader(s configSession, roots []string) sysprompt.ReadFunc {
	disk := sysprompt.DiskReader(roots)
	if !cf.peer.capabilities().Fs.ReadTextFile {
		return disk
	}
	editor := clientws.New(cf.peer.conn, s.sessionID())
	return func(ctx context.Context, path string) (string, error) {
		text, err := editor.ReadFile(ctx, path, 0, 0)
		if err != nil && !errors.Is(err, fs.ErrNotExist) && ctx.Err() == nil {
			cf.logger.Debug("the editor did not read an instructions file; reading it from the disk", "session", s.sessionID(), "path", path, "err", err)
			return disk(ctx, path)
		}
		return text, err
	}
}

// contextReport is /context: the system prompt's sections and sizes, the
// history's size, and the whole prompt.
func (co *commands) contextReport(ctx context.Context, s commandSession) string {
	p, skipped := s.systemPrompt(ctx, co.conf)
	n, stored := s.historySize()
	var b strings.Builder
	fmt.Fprintf(&b, "**System prompt**: %s\n", size(len(p.Text)))
	for _, sec := range p.Sections {
		fmt.Fprintf(&b, "- %s: %s\n", sec.Title, size(len(sec.Text)))
		if sec.Name == p.Client.Section {
			how := "replacing acpgate's own instructions"
			if p.Client.Append {
				how = "after acpgate's own instructions"
			}
			fmt.Fprintf(&b, "  - of which the editor's system prompt (from the client's `_meta.systemPrompt`, %s): %s\n", how, size(p.Client.Bytes))
		}
	}
	if len(skipped) > 0 {
		b.WriteString("\n**Instructions files not read**:\n")
		for _, sk := range skipped {
			fmt.Fprintf(&b, "- %s\n", skipReason(sk))
		}
	}
	if len(p.LeftOut) > 0 {
		b.WriteString("\n**Instructions left out** (over `limits.maxInstructionsBytes` for all of them together):\n")
		for _, lo := range p.LeftOut {
			fmt.Fprintf(&b, "- %s: %s\n", lo.Source, size(lo.Bytes))
		}
	}
	b.WriteString(skillsContext(ctx, s.skills()))
	fmt.Fprintf(&b, "\n**History**: %d messages, %s (as stored)\n", n, size(stored))
	if images, audio, data := s.historyMedia(); images+audio > 0 {
		fmt.Fprintf(&b, "- of which %d images and %d audio clips: %d bytes of base64, ~%d tokens (%d each, as the compaction counts them)\n",
			images, audio, data, (images+audio)*compact.MediaTokens, compact.MediaTokens)
	}
	b.WriteString("\nTokens are estimated (bytes ÷ 4). The system prompt as the model gets it:\n\n")
	fence := strings.Repeat("`", max(3, longestRun(p.Text, '`')+1))
	fmt.Fprintf(&b, "%stext\n%s\n%s", fence, p.Text, fence)
	return b.String()
}

// skipReason says why an instructions file was not read.
func skipReason(sk sysprompt.Skipped) string {
	switch {
	case errors.Is(sk.Err, safefile.ErrOutside):
		return fmt.Sprintf("%s: it leads outside the project (%v)", sk.Path, sk.Err)
	case errors.Is(sk.Err, safefile.ErrNotRegular):
		return fmt.Sprintf("%s: not a regular file (%v)", sk.Path, sk.Err)
	}
	return fmt.Sprintf("%s: %v", sk.Path, sk.Err)
}

// size says n bytes and their estimated tokens.
func size(n int) string { return fmt.Sprintf("%d bytes, ~%d tokens", n, sysprompt.Tokens(n)) }

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

// extraSystemPrompt is the session metadata key of the client's system
// prompt (_meta.systemPrompt), kept as the client gives it: a string, or
// {"append": string}.
const extraSystemPrompt = "systemPrompt"

// maxClientPromptBytes bounds the text of a client's system prompt: a
// longer one is refused (-32602), so that the session's metadata, which
// keeps it, stays small. The prompt holds at most
// sysprompt.MaxInstructionsBytes of it.
const maxClientPromptBytes = 1 << 20

// promptChange is what a request's _meta.systemPrompt asks of the system
// prompt from the client a session keeps.
type promptChange struct {
	// set says the request gives one (a blank one too: it removes the
	// kept one); unset, the kept one stays.
	set    bool
	prompt sysprompt.ClientPrompt // the zero value for a blank one
}

// requestedPrompt reads _meta.systemPrompt of a session/new, load, resume
// or fork request (see clientPrompt): absent or null, it changes nothing.
func requestedPrompt(meta map[string]any) (promptChange, *inputError) {
	v, ok := meta[extraSystemPrompt]
	if !ok || v == nil {
		return promptChange{}, nil
	}
	p, ierr := clientPrompt(v, "_meta."+extraSystemPrompt)
	if ierr != nil {
		return promptChange{}, ierr
	}
	return promptChange{set: true, prompt: p}, nil
}

// clientPrompt reads a system prompt from the client, v as decoded from
// JSON: a string replaces acpgate's own instructions, {"append": string}
// adds to them, and a blank text is none (the zero value). Anything else,
// or a text over maxClientPromptBytes, is -32602 naming the member (path
// is v's).
func clientPrompt(v any, path string) (sysprompt.ClientPrompt, *inputError) {
	var p sysprompt.ClientPrompt
	switch v := v.(type) {
	case string:
		p.Text = v
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if k != "append" {
				return p, badParam(path, "unknown member %q: a system prompt is a string (replacing acpgate's instructions) or {\"append\": string}", k)
			}
		}
		path += ".append"
		raw, ok := v["append"]
		if !ok {
			return p, badParam(path, "missing")
		}
		text, ok := raw.(string)
		if !ok {
			return p, badParam(path, "must be a string, got %s", valueKind(raw))
		}
		p = sysprompt.ClientPrompt{Text: text, Append: true}
	default:
		return p, badParam(path, "must be a string or an object {\"append\": string}, got %s", valueKind(v))
	}
	if len(p.Text) > maxClientPromptBytes {
		return p, badParam(path, "must be at most %d bytes, got %d", maxClientPromptBytes, len(p.Text))
	}
	if strings.TrimSpace(p.Text) == "" {
		return sysprompt.ClientPrompt{}, nil
	}
	return p, nil
}

// valueKind names the JSON type of v, a value decoded from JSON.
func valueKind(v any) string {
	raw, _ := json.Marshal(v)
	return kindOf(raw)
}

// storedPrompt returns the system prompt from the client that m keeps
// (the zero value for none), or the problem with a value that is not one.
func storedPrompt(m session.Meta) (sysprompt.ClientPrompt, error) {
	v, ok := m.Extra[extraSystemPrompt]
	if !ok {
		return sysprompt.ClientPrompt{}, nil
	}
	p, ierr := clientPrompt(v, extraSystemPrompt)
	if ierr != nil {
		return sysprompt.ClientPrompt{}, ierr
	}
	return p, nil
}

// keptPrompt is the system prompt from the client that session m keeps;
// a value that is not one (the metadata edited by hand) is left out, with
// a warning.
func keptPrompt(m session.Meta, logger *slog.Logger) sysprompt.ClientPrompt {
	p, err := storedPrompt(m)
	if err != nil {
		logger.Warn("the system prompt from the client kept with the session is not one; left out", "session", m.ID, "err", err)
	}
	return p
}

// changes reports whether c changes what m keeps.
func (c promptChange) changes(m session.Meta) bool {
	kept, err := storedPrompt(m)
	return c.set && (err != nil || kept != c.prompt)
}

// apply makes m keep c's prompt, when c gives one: a blank one removes
// the kept one.
func (c promptChange) apply(m *session.Meta) {
	if !c.set {
		return
	}
	delete(m.Extra, extraSystemPrompt)
	switch {
	case c.prompt.Text == "":
	case c.prompt.Append:
		m.Extra[extraSystemPrompt] = map[string]any{"append": c.prompt.Text}
	default:
		m.Extra[extraSystemPrompt] = c.prompt.Text
	}
}
