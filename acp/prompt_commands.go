package acp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/acpgate/acpgate/bridge"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/mcpclient"
)

// This file makes the prompts of a session's MCP servers slash commands:
// /<server>.<prompt> arg=value … (see promptCommands, runPrompt).

// maxSuggestions bounds the completions an error about a missing argument
// shows.
const maxSuggestions = 5

// errPromptArgs: a prompt command's arguments are not name=value pairs of
// the prompt's arguments.
var errPromptArgs = errors.New("bad prompt arguments")

// promptCommandName is the slash command of prompt of server.
func promptCommandName(server, prompt string) string { return server + "." + prompt }

// promptCommands are the prompts of the session's servers as commands,
// with their arguments as the input hint, in server and list order.
func (co *commands) promptCommands(s commandSession) []acpsdk.AvailableCommand {
	var out []acpsdk.AvailableCommand
	for _, p := range s.prompts() {
		desc := strings.TrimSpace(p.Item.Description)
		if desc == "" {
			desc = p.Item.Title
		}
		desc, _, _ = strings.Cut(desc, "\n")
		cmd := acpsdk.AvailableCommand{
			Name:        promptCommandName(p.Server, p.Item.Name),
			Description: fmt.Sprintf("Prompt of MCP server %s: %s", p.Server, gateway.DisplayText(desc, 200)),
		}
		if hint := argumentHint(p.Item.Arguments); hint != "" {
			cmd.Input = &acpsdk.AvailableCommandInput{Unstructured: &acpsdk.UnstructuredCommandInput{Hint: hint}}
		}
		out = append(out, cmd)
	}
	return out
}

// argumentHint shows a prompt's arguments: "style=… [topic=…]", the
// optional ones in brackets.
func argumentHint(args []mcp.PromptArgument) string {
	parts := make([]string, 0, len(args))
	for _, arg := range args {
		p := arg.Name + "=…"
		if !arg.Required {
			p = "[" + p + "]"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

// sessionCommands is what available_commands_update advertises to s: the
// built-in commands and its servers' prompts.
func (co *commands) sessionCommands(s commandSession) []acpsdk.AvailableCommand {
	return append(append(co.commandList(), co.skillCommands(s)...), co.promptCommands(s)...)
}

// advertiseCommands sends available_commands_update when the session's
// prompt commands differ from those last sent (always when force), once
// the client knows the session. It is no command: it takes the whole
// session, to tell the client of it (peer.update) only once the client
// knows it and while it is open.
func (co *commands) advertiseCommands(s advertSession, force bool) {
	s.advertising(func() { co.advertise(s, force) })
}

// advertise is advertiseCommands, run alone among the session's
// advertisements (liveSession.advertising).
func (co *commands) advertise(s advertSession, force bool) {
	cmds := co.sessionCommands(s.asCommands())
	var key strings.Builder
	for _, c := range cmds {
		key.WriteString(c.Name + "\x00" + c.Description + "\x00")
		if c.Input != nil && c.Input.Unstructured != nil {
			key.WriteString(c.Input.Unstructured.Hint)
		}
		key.WriteString("\x00")
	}
	if !s.known() {
		return
	}
	if same := s.advertised(key.String()); same && !force {
		return
	}
	co.peer.update(s, acpsdk.SessionUpdate{AvailableCommandsUpdate: &acpsdk.SessionAvailableCommandsUpdate{AvailableCommands: cmds}})
}

// promptCall is a prompt command the user typed.
type promptCall struct {
	server string
	prompt mcp.Prompt
	rest   string // the text after the command word
}

// promptCommand recognises /<server>.<prompt> at the start of the
// prompt's text, for a prompt of the session's servers (waiting for
// servers still connecting when the word names none yet).
func (co *commands) promptCommand(ctx context.Context, s commandSession, input []gateway.Content) (promptCall, bool) {
	if len(input) == 0 || input[0].Type != gateway.ContentText {
		return promptCall{}, false
	}
	text := strings.TrimSpace(input[0].Text)
	if !strings.HasPrefix(text, "/") {
		return promptCall{}, false
	}
	word, rest := cutWord(text[1:])
	if !strings.Contains(word, ".") {
		return promptCall{}, false
	}
	find := func() (promptCall, bool) {
		for _, p := range s.prompts() {
			if promptCommandName(p.Server, p.Item.Name) == word {
				return promptCall{server: p.Server, prompt: p.Item, rest: strings.TrimSpace(rest)}, true
			}
		}
		return promptCall{}, false
	}
	if pc, ok := find(); ok {
		return pc, true
	}
	s.waitServers(ctx, co.peer, func() bool { _, ok := find(); return ok })
	return find()
}

// parsePromptArgs reads "name=value …" for prompt p: values may be
// double-quoted (Go syntax) to hold spaces. A prompt with exactly one
// argument also takes the whole text as its value when it has no "=".
// Errors wrap errPromptArgs.
func parsePromptArgs(p mcp.Prompt, text string) (map[string]string, error) {
	out := map[string]string{}
	if text == "" {
		return out, nil
	}
	if len(p.Arguments) == 1 && !strings.Contains(text, "=") {
		out[p.Arguments[0].Name] = text
		return out, nil
	}
	known := func(name string) bool {
		return slices.ContainsFunc(p.Arguments, func(a mcp.PromptArgument) bool { return a.Name == name })
	}
	for text != "" {
		name, rest, ok := strings.Cut(text, "=")
		if !ok || name == "" || strings.IndexFunc(name, unicode.IsSpace) >= 0 {
			return nil, fmt.Errorf("%w: expected name=value, got %q", errPromptArgs, text)
		}
		if !known(name) {
			return nil, fmt.Errorf("%w: %s has no argument %q (it takes: %s)", errPromptArgs, p.Name, name, argumentHint(p.Arguments))
		}
		value, after, err := cutValue(rest)
		if err != nil {
			return nil, fmt.Errorf("%w: argument %s: %w", errPromptArgs, name, err)
		}
		out[name] = value
		text = strings.TrimLeftFunc(after, unicode.IsSpace)
	}
	return out, nil
}

// cutValue splits s into its first value (a double-quoted Go string, or
// the text up to white space) and what follows.
func cutValue(s string) (value, rest string, err error) {
	if strings.HasPrefix(s, `"`) {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return "", "", fmt.Errorf("unterminated quoted value")
		}
		v, _ := strconv.Unquote(q)
		return v, s[len(q):], nil
	}
	v, r := cutWord(s)
	return v, r, nil
}

// completeMissing fills the prompt's missing required arguments that the
// server's completion (completion/complete, where it supports it) answers
// with exactly one value: ACP has no completion request, so this is
// where completion helps — a user who left out an argument with a single
// possible value need not type it. It returns the arguments still missing
// and, for each, up to maxSuggestions of the server's suggestions.
func completeMissing(ctx context.Context, c sessionCaller, pc promptCall, args map[string]string) (missing []string, hints map[string][]string) {
	hints = map[string][]string{}
	for _, arg := range pc.prompt.Arguments {
		if !arg.Required || args[arg.Name] != "" {
			continue
		}
		values, err := c.manager(pc.server).CompletePrompt(ctx, pc.server, pc.prompt.Name, arg.Name, "", args)
		if err == nil && len(values) == 1 {
			args[arg.Name] = values[0]
			continue
		}
		missing = append(missing, arg.Name)
		if len(values) > maxSuggestions {
			values = values[:maxSuggestions]
		}
		hints[arg.Name] = values
	}
	return missing, hints
}

// runPrompt runs a prompt command: prompts/get with the arguments, then
// the messages go to the model as the user's turn (the last user message
// as the input, the ones before it as the conversation's), or, without
// a model, are shown as agent messages. It takes the whole session, not
// a commandSession: the model turn (turns.modelTurn) is the session's
// like any other, with its history, configuration and compactor; and it
// gets the prompt from the server that has it (sessionCaller.manager).
func (co *commands) runPrompt(ctx context.Context, s turnSession, t *turnLog, pc promptCall) gateway.StopReason {
	say := func(text string) { t.sink(gateway.Event{Kind: gateway.EventText, Text: text}) }
	name := "/" + promptCommandName(pc.server, pc.prompt.Name)
	args, err := parsePromptArgs(pc.prompt, pc.rest)
	if err != nil {
		say(fmt.Sprintf("%s: %v. Usage: %s %s", name, err, name, argumentHint(pc.prompt.Arguments)))
		return gateway.StopEndTurn
	}
	c := s.caller()
	missing, hints := completeMissing(ctx, c, pc, args)
	if ctx.Err() != nil {
		return gateway.StopCancelled
	}
	if len(missing) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "%s needs the argument", name)
		if len(missing) > 1 {
			b.WriteString("s")
		}
		fmt.Fprintf(&b, " %s. Usage: %s %s", strings.Join(missing, ", "), name, argumentHint(pc.prompt.Arguments))
		for _, m := range missing {
			if len(hints[m]) > 0 {
				fmt.Fprintf(&b, "\nSuggestions for %s: %s", m, strings.Join(hints[m], ", "))
			}
		}
		say(b.String())
		return gateway.StopEndTurn
	}
	res, err := c.manager(pc.server).GetPrompt(ctx, pc.server, pc.prompt.Name, args)
	switch {
	case ctx.Err() != nil:
		return gateway.StopCancelled
	case errors.Is(err, mcpclient.ErrNotReady):
		say(fmt.Sprintf("Cannot run %s now: %v", name, err))
		return gateway.StopEndTurn
	case err != nil:
		say(fmt.Sprintf("%s failed: %v", name, err))
		return gateway.StopEndTurn
	}
	msgs := promptMessages(res.Messages)
	if co.conf.model(ctx, s) == nil || len(msgs) == 0 {
		say(showPrompt(name, msgs))
		return gateway.StopEndTurn
	}
	last := len(msgs) - 1
	if msgs[last].Role != gateway.RoleUser {
		// The turn must be the user's: the conversation so far is all of it.
		msgs = append(msgs, gateway.Message{Role: gateway.RoleUser, Content: []gateway.Content{{Type: gateway.ContentText, Text: "Continue."}}})
		last++
	}
	return co.turns.modelTurn(ctx, s, t, msgs[last].Content, msgs[:last])
}

// promptMessages converts a prompt's messages, merging consecutive ones
// of the same role.
func promptMessages(in []mcp.PromptMessage) []gateway.Message {
	var out []gateway.Message
	for _, m := range in {
		role := gateway.RoleUser
		if m.Role == mcp.RoleAssistant {
			role = gateway.RoleAssistant
		}
		content := bridge.Content([]mcp.Content{m.Content})
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, content...)
			continue
		}
		out = append(out, gateway.Message{Role: role, Content: content})
	}
	return out
}

// showPrompt renders a prompt's messages for a session without a model.
func showPrompt(name string, msgs []gateway.Message) string {
	if len(msgs) == 0 {
		return name + " returned no messages."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (no model is configured, so here are its messages):", name)
	for _, m := range msgs {
		fmt.Fprintf(&b, "\n\n**%s**: %s", m.Role, gateway.PlainText(m.Content))
	}
	return b.String()
}
