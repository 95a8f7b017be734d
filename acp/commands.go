package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/acpgate/acpgate/bridge"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/sysprompt"
	"github.com/acpgate/acpgate/mcpclient"
)

// This file is the slash commands: /mcp (with login and logout; add,
// remove and restart are in server_edits.go), /tools, /call, /resources,
// /reload, /compact (compaction.go) and /context (system_prompt.go). They
// see a session only through commandSession.

// commands runs the slash commands of a prompt (/mcp, /tools, /call,
// /resources, /reload) and the MCP servers' prompts as commands
// (prompt_commands.go), and advertises them to the editor. A prompt
// command's messages go to the model through turns. Safe for concurrent
// use.
type commands struct {
	peer   *peer
	conf   *agentConfig
	runner *gateway.Runner
	turns  *turns
	// slashes is the registry of slash commands (registry); set once.
	slashes []slash
}

// commandSession is what the slash commands need of a session, and all
// they see of it: commandView implements it (command_session.go). Every
// method is safe for concurrent use (the session's other requests and its
// servers' events go on while a command runs) and takes the session's
// locks it needs itself; none is called with a lock held, and those that
// wait hold no lock while waiting and end with ctx. cf and pe, where a
// method takes them, are the agent's agentConfig and peer: what the session's
// configuration is read through, and the connection its cards go to.
type commandSession interface {
	// sessionID is the session's id. Fixed.
	sessionID() string

	// ownStatuses is the state of the session's own servers (not the
	// shared ones), in their order.
	ownStatuses() []mcpclient.Status
	// serverStatus is the state of the session's server called name: its
	// own, else a shared one it sees (shared says which); ok is false when
	// it has none.
	serverStatus(name string) (st mcpclient.Status, shared, ok bool)
	// waitServers waits for the servers still connecting, within the
	// session's startup budget, showing a card on pe for those still
	// connecting when it ends; with found, only until found reports true
	// (checked after each of the servers' events).
	waitServers(ctx context.Context, pe *peer, found func() bool)
	// login signs in to the session's own server called server, waiting
	// for the sign-in or ctx (the sign-in then goes on).
	login(ctx context.Context, server string) error
	// logout removes the stored tokens of the session's own server.
	logout(ctx context.Context, server string) error
	// restartServer restarts the session's own server called name and
	// waits for it within the startup budget; a restart the budget cuts
	// short is no error (the server goes on connecting).
	// mcpclient.ErrUnknownServer: the session has no such server.
	restartServer(ctx context.Context, cf *agentConfig, name string) error
	// edits is what /mcp add and remove changed in the session's servers:
	// a value, to change with serverEdits.add and remove.
	edits() serverEdits
	// applyEdits makes edits the session's servers: it stores them with
	// the session, starts and stops servers and waits for the new ones
	// within the startup budget (a wait the budget cuts short is no
	// error). Edits that do not apply change nothing; an error
	// reconfiguring the servers leaves the edits applied.
	applyEdits(ctx context.Context, cf *agentConfig, edits serverEdits) error
	// tellModel queues note about the session's servers for the model's
	// next turn.
	tellModel(note string)

	// tools is the tools the session offers now that match filter
	// (gateway.Toolset.Filter) and its policy allows.
	tools(filter string) []gateway.Tool
	// offersTool reports whether the session offers a tool called name
	// now.
	offersTool(name string) bool
	// toolServer is the MCP server of the tool a bridged name stands, or
	// stood, for: ok is false if it was never a tool of the session.
	toolServer(name string) (server string, ok bool)
	// toolAccess is what the session's tool calls go through (its tool
	// view, policy and approver), to call a tool with. Fixed.
	toolAccess() gateway.ToolAccess

	// reload reads the configuration again for the session's profile and
	// applies it: its servers whose settings changed are restarted (their
	// names returned), its policy, model, bridge options and instructions
	// replaced. On an error the session keeps its configuration.
	reload(ctx context.Context, cf *agentConfig) (restarted []string, err error)
	// systemPrompt is the system prompt of the session's next model turn,
	// and the instructions files it could not read. ctx bounds reading
	// them (the first time, and after reload).
	systemPrompt(ctx context.Context, cf *agentConfig) (sysprompt.Prompt, []sysprompt.Skipped)

	// historySize is the size of the conversation the model has: its
	// messages and their bytes as stored.
	historySize() (messages, bytes int)
	// historyMedia counts the images and audio clips of the conversation
	// and their bytes of base64.
	historyMedia() (images, audio, bytes int)
	// compact summarises every turn of the conversation but the last now
	// with the session's model (focus: what the summary should keep above
	// all), calling started when the compaction starts; nil when there is
	// nothing to compact. The history is not changed (turnLog.addHistory
	// does). errNoModel: the session has no model.
	compact(ctx context.Context, cf *agentConfig, focus string, started func()) (*gateway.Compaction, error)

	// resources is the resources of the session's servers, own and
	// shared.
	resources() bridge.ResourceCaller
	// prompts is the prompts of the session's servers, own and shared.
	prompts() []mcpclient.ServerResource[mcp.Prompt]
	// skills is the session's skills.
	skills() *sessionSkills
}

// slash is one slash command: what available_commands_update says of it
// and what runs it. The registry (commands.slashes) is the one list of
// them: what is advertised, recognised and run.
type slash struct {
	name, description string
	hint              string // the input hint ("": takes none)
	// wait: the command waits for the session's servers still connecting
	// (within its startup budget) before it runs.
	wait bool
	// run runs the command on arg (the text after its name, trimmed),
	// writing its answer with say; it returns the turn's stop reason.
	run func(ctx context.Context, s commandSession, t *turnLog, arg string, say func(string)) gateway.StopReason
}

// registry is the slash commands, in the order they are advertised.
func (co *commands) registry() []slash {
	text := func(f func(ctx context.Context, s commandSession, t *turnLog, arg string) string) func(context.Context, commandSession, *turnLog, string, func(string)) gateway.StopReason {
		return func(ctx context.Context, s commandSession, t *turnLog, arg string, say func(string)) gateway.StopReason {
			say(f(ctx, s, t, arg))
			return gateway.StopEndTurn
		}
	}
	return []slash{
		{name: "mcp", description: "Show this session's MCP servers: transport, state, tools, last error; /mcp add|remove|restart <server> changes them; /mcp login|logout <server> signs in or out",
			hint: "optional: add NAME -- COMMAND…, add NAME URL, remove NAME, restart NAME, login NAME, logout NAME", run: text(co.mcpCommand)},
		{name: "tools", description: "List the tools of this session", hint: "optional filter", wait: true,
			run: text(func(_ context.Context, s commandSession, _ *turnLog, arg string) string {
				return co.toolsReport(s, arg)
			})},
		{name: "call", description: "Call a tool directly: /call <tool> <json-arguments>", hint: "<tool> <json-arguments>", run: co.call},
		{name: "resources", description: "List the resources and resource templates of this session's MCP servers", hint: "optional: server", wait: true,
			run: text(func(_ context.Context, s commandSession, _ *turnLog, arg string) string {
				return co.resourcesReport(s, arg)
			})},
		{name: "reload", description: "Apply the current configuration file: restart configured servers whose settings changed; read the instructions files and skills again",
			run: text(func(ctx context.Context, s commandSession, _ *turnLog, _ string) string { return co.reload(ctx, s) })},
		{name: "compact", description: "Compact the conversation now: the model summarises every turn but the last", hint: "optional: what the summary should keep above all", run: text(co.compact)},
		{name: "skills", description: "List this session's skills: their source, where they are, whether loaded; and the skills not taken, with why", wait: true,
			run: text(func(ctx context.Context, s commandSession, _ *turnLog, _ string) string {
				return skillsReport(ctx, s.skills())
			})},
		{name: "context", description: "Show the system prompt: its sections, their sizes and its text; and the history's size", wait: true,
			run: text(func(ctx context.Context, s commandSession, _ *turnLog, _ string) string {
				return co.contextReport(ctx, s)
			})},
	}
}

// commandList is what available_commands_update advertises of the slash
// commands.
func (co *commands) commandList() []acpsdk.AvailableCommand {
	out := make([]acpsdk.AvailableCommand, 0, len(co.slashes))
	for _, c := range co.slashes {
		ac := acpsdk.AvailableCommand{Name: c.name, Description: c.description}
		if c.hint != "" {
			ac.Input = &acpsdk.AvailableCommandInput{Unstructured: &acpsdk.UnstructuredCommandInput{Hint: c.hint}}
		}
		out = append(out, ac)
	}
	return out
}

// slashCommand recognises a slash command of the registry at the start of
// the prompt's text: the command and the rest of the text, trimmed.
func (co *commands) slashCommand(input []gateway.Content) (cmd *slash, arg string, ok bool) {
	if len(input) == 0 || input[0].Type != gateway.ContentText {
		return nil, "", false
	}
	text := strings.TrimSpace(input[0].Text)
	if !strings.HasPrefix(text, "/") {
		return nil, "", false
	}
	name, rest := cutWord(text[1:])
	for i := range co.slashes {
		if co.slashes[i].name == name {
			return &co.slashes[i], strings.TrimSpace(rest), true
		}
	}
	return nil, "", false
}

// cutWord splits s at its first white space (a newline included): the
// word before it and the rest.
func cutWord(s string) (word, rest string) {
	if i := strings.IndexFunc(s, unicode.IsSpace); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}

// command runs slash command c; its output is agent text and, for /call,
// a tool call.
func (co *commands) command(ctx context.Context, s commandSession, t *turnLog, c *slash, arg string) gateway.StopReason {
	say := func(text string) { t.sink(gateway.Event{Kind: gateway.EventText, Text: text}) }
	if c.wait {
		s.waitServers(ctx, co.peer, nil)
	}
	stop := c.run(ctx, s, t, arg, say)
	if ctx.Err() != nil {
		return gateway.StopCancelled
	}
	return stop
}

// mcpCommand runs /mcp and its subcommands.
func (co *commands) mcpCommand(ctx context.Context, s commandSession, _ *turnLog, arg string) string {
	switch sub, server := cutWord(arg); sub {
	case "login":
		return co.login(ctx, s, strings.TrimSpace(server))
	case "logout":
		return co.logout(ctx, s, strings.TrimSpace(server))
	case "add", "remove", "restart":
		return co.liveEdit(ctx, s, sub, server)
	case "":
		return co.mcpReport(s)
	default:
		return fmt.Sprintf("Unknown /mcp subcommand %q: /mcp, /mcp add|remove|restart <server>, /mcp login|logout <server>.", sub)
	}
}

// call runs /call <tool> <json-arguments>: the tool call is shown as any
// other, and what went wrong is said.
func (co *commands) call(ctx context.Context, s commandSession, t *turnLog, arg string, say func(string)) gateway.StopReason {
	name, args := cutWord(arg)
	// It may belong to a server that is still connecting.
	s.waitServers(ctx, co.peer, func() bool { return s.offersTool(name) })
	args = strings.TrimSpace(args)
	if name == "" {
		say("Usage: /call <tool> <json-arguments>, for example /call mcp__github__get_me {}. /tools lists the tools.")
		return gateway.StopEndTurn
	}
	if args == "" {
		args = "{}"
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(args), &obj); err != nil {
		say(fmt.Sprintf("The arguments for %s must be a JSON object: %v", name, err))
		return gateway.StopEndTurn
	}
	res, err := co.runner.Execute(ctx, s.sessionID(), s.toolAccess(), name, json.RawMessage(args), t.sink)
	// A tool whose server went away is not offered; a call that failed
	// because it went away (its tool still in the session's view when
	// the call began) says so too.
	away := ""
	if errors.Is(err, gateway.ErrUnknownTool) || (err == nil && ctx.Err() == nil && res.IsError) {
		away = co.serverAway(s, name)
	}
	switch {
	case away != "" && err != nil:
		say(fmt.Sprintf("Cannot call %s now: %s.", name, away))
	case away != "":
		say(fmt.Sprintf("%s failed: %s.", name, away))
	case errors.Is(err, gateway.ErrUnknownTool):
		say(fmt.Sprintf("Cannot call %s: %v (see /tools)", name, err))
	case errors.Is(err, gateway.ErrToolDenied):
		say(fmt.Sprintf("Cannot call %s: %v", name, err))
	case err != nil:
		say(fmt.Sprintf("Calling %s failed: %v", name, err))
	case ctx.Err() != nil:
		return gateway.StopCancelled
	case res.IsError:
		say(fmt.Sprintf("%s failed.", name))
	}
	return gateway.StopEndTurn
}

// serverAway says why the tool a bridged name stood for is not offered
// now: its server is restarting, connecting or failed. "" if the name was
// never a tool of this session or its server is ready.
func (co *commands) serverAway(s commandSession, name string) string {
	server, ok := s.toolServer(name)
	if !ok {
		return ""
	}
	st, _, ok := s.serverStatus(server)
	if !ok || st.State == mcpclient.StateReady {
		return ""
	}
	why := fmt.Sprintf("MCP server %s is %s", st.Name, st.State)
	if st.State == mcpclient.StateRestarting && st.Restarts > 0 {
		why += fmt.Sprintf(" (restart %d)", st.Restarts)
	}
	if st.Error != "" {
		why += "; last error: " + st.Error
	}
	return why
}

// mcpReport describes each server of the session.
func (co *commands) mcpReport(s commandSession) string {
	statuses := s.ownStatuses()
	if len(statuses) == 0 {
		return "This session has no MCP servers. Pass them in mcpServers when the session is created."
	}
	var b strings.Builder
	b.WriteString("MCP servers of this session:\n")
	for _, st := range statuses {
		fmt.Fprintf(&b, "\n- **%s** (%s): %s, %d tools", st.Name, st.Transport, st.State, st.Tools)
		if st.ProtocolVersion != "" {
			fmt.Fprintf(&b, ", protocol %s", st.ProtocolVersion)
		}
		if st.Restarts > 0 {
			fmt.Fprintf(&b, ", %d restarts", st.Restarts)
		}
		if st.Error != "" {
			fmt.Fprintf(&b, "\n  last error: %s", st.Error)
		}
		if line := sandboxLine(st); line != "" {
			b.WriteString("\n  " + line)
		}
		if st.Warning != "" {
			fmt.Fprintf(&b, "\n  warning: %s", st.Warning)
		}
		if p := st.SignIn; p.URL != "" || p.UserCode != "" {
			if p.UserCode != "" {
				fmt.Fprintf(&b, "\n  sign in: open %s and enter the code %s", p.VerificationURI, p.UserCode)
			} else {
				fmt.Fprintf(&b, "\n  sign in: [open the sign-in page](%s)", p.URL)
			}
		} else if st.State == mcpclient.StateNeedsAuth {
			fmt.Fprintf(&b, "\n  `/mcp login %s` signs in", st.Name)
		}
	}
	return b.String()
}

// sandboxLine is what /mcp says of a stdio server's sandbox: its policy,
// whether it is enforced (and why not), and the hint of a failure it may
// have caused; "" for other transports.
func sandboxLine(st mcpclient.Status) string {
	sb := st.Sandbox
	switch {
	case sb == nil && st.Transport == mcpclient.TransportStdio:
		return "sandbox: off"
	case sb == nil:
		return ""
	}
	line := "sandbox: " + sb.Policy + ", enforced"
	switch {
	case sb.Pending:
		line = "sandbox: " + sb.Policy + ", not started yet"
	case !sb.Enforced:
		line = "sandbox: " + sb.Policy + ", NOT enforced"
		if sb.Note != "" {
			line += ": " + sb.Note
		}
	}
	if sb.Hint != "" {
		line += "\n  " + sb.Hint
	}
	return line
}

// toolsReport lists the session's tools matching filter.
func (co *commands) toolsReport(s commandSession, filter string) string {
	tools := s.tools(filter)
	if len(tools) == 0 {
		if filter != "" {
			return fmt.Sprintf("No tool matches %q.", filter)
		}
		return "This session has no tools."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d tools:\n", len(tools))
	for _, t := range tools {
		desc, _, _ := strings.Cut(strings.TrimSpace(t.Description), "\n")
		fmt.Fprintf(&b, "\n- `%s` (%s) %s", t.Name, t.Kind, desc)
	}
	for _, st := range s.ownStatuses() {
		if st.State == mcpclient.StateConnecting || st.State == mcpclient.StateRestarting {
			fmt.Fprintf(&b, "\n\n(%s is %s; its tools are not listed yet)", st.Name, st.State)
		}
	}
	return b.String()
}

// reload is /reload: it applies the current configuration to session s
// (commandSession.reload) and says which servers were restarted.
func (co *commands) reload(ctx context.Context, s commandSession) string {
	restarted, err := s.reload(ctx, co.conf)
	switch {
	case err != nil:
		return fmt.Sprintf("Reload failed: %v", err)
	case len(restarted) == 0:
		return "Configuration reloaded; no server changed."
	}
	return fmt.Sprintf("Configuration reloaded; restarted: %s.", strings.Join(restarted, ", "))
}

// login is /mcp login <server>: it signs in (the prompt is shown as a
// URL elicitation or a card) and waits for the sign-in, or the turn's
// cancellation (the sign-in then goes on).
func (co *commands) login(ctx context.Context, s commandSession, server string) string {
	if server == "" {
		return "Usage: /mcp login <server>. /mcp lists the servers and which need a sign-in."
	}
	err := s.login(ctx, server)
	switch {
	case err == nil:
		st, _, _ := s.serverStatus(server)
		return fmt.Sprintf("Signed in to MCP server %s (%s).", server, st.State)
	case ctx.Err() != nil:
		return fmt.Sprintf("Stopped waiting; the sign-in to %s goes on until it completes or times out.", server)
	case errors.Is(err, mcpclient.ErrUnknownServer), errors.Is(err, mcpclient.ErrNoOAuth):
		return fmt.Sprintf("Cannot sign in to %s: %v", server, err)
	}
	return fmt.Sprintf("Sign-in to MCP server %s failed: %v", server, err)
}

// logout is /mcp logout <server>: it removes the server's stored tokens.
func (co *commands) logout(ctx context.Context, s commandSession, server string) string {
	if server == "" {
		return "Usage: /mcp logout <server>."
	}
	if err := s.logout(ctx, server); err != nil {
		return fmt.Sprintf("Cannot sign out of %s: %v", server, err)
	}
	return fmt.Sprintf("Signed out of MCP server %s: its stored tokens are removed. `/mcp login %s` signs in again.", server, server)
}
