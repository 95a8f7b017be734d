package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/acpgate/acpgate/session"
)

// commandList is what available_commands_update advertises.
func commandList() []acpsdk.AvailableCommand {
	hint := func(h string) *acpsdk.AvailableCommandInput {
		return &acpsdk.AvailableCommandInput{Unstructured: &acpsdk.UnstructuredCommandInput{Hint: h}}
	}
	return []acpsdk.AvailableCommand{
		{Name: "mcp", Description: "Show this session's MCP servers: transport, state, tools, last error; /mcp login|logout <server> signs in or out", Input: hint("optional: login <server> or logout <server>")},
		{Name: "tools", Description: "List the tools of this session", Input: hint("optional filter")},
		{Name: "call", Description: "Call a tool directly: /call <tool> <json-arguments>", Input: hint("<tool> <json-arguments>")},
		{Name: "resources", Description: "List the resources and resource templates of this session's MCP servers", Input: hint("optional: server")},
		{Name: "reload", Description: "Apply the current configuration file: restart configured servers whose settings changed"},
	}
}

// slashCommand recognises "/mcp", "/tools [filter]" and "/call ..." as the
// start of the prompt's text.
func slashCommand(input []gateway.Content) (cmd, arg string, ok bool) {
	if len(input) == 0 || input[0].Type != gateway.ContentText {
		return "", "", false
	}
	text := strings.TrimSpace(input[0].Text)
	if !strings.HasPrefix(text, "/") {
		return "", "", false
	}
	name, rest := cutWord(text[1:])
	switch name {
	case "mcp", "tools", "call", "reload", "resources":
		return name, strings.TrimSpace(rest), true
	}
	return "", "", false
}

// cutWord splits s at its first white space (a newline included): the
// word before it and the rest.
func cutWord(s string) (word, rest string) {
	if i := strings.IndexFunc(s, unicode.IsSpace); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}

// command runs a slash command; its output is agent text and, for /call, a
// tool call.
func (a *Agent) command(ctx context.Context, s *liveSession, t *turnLog, cmd, arg string) gateway.StopReason {
	say := func(text string) { t.sink(gateway.Event{Kind: gateway.EventText, Text: text}) }
	switch cmd {
	case "mcp":
		switch sub, server := cutWord(arg); sub {
		case "login":
			say(a.login(ctx, s, strings.TrimSpace(server)))
		case "logout":
			say(a.logout(ctx, s, strings.TrimSpace(server)))
		case "":
			say(a.mcpReport(s))
		default:
			say(fmt.Sprintf("Unknown /mcp subcommand %q: /mcp, /mcp login <server> or /mcp logout <server>.", sub))
		}
	case "reload":
		say(a.reload(ctx, s))
	case "tools":
		say(a.toolsReport(s, arg))
	case "resources":
		a.waitServers(ctx, s)
		say(a.resourcesReport(s, arg))
	case "call":
		name, args := cutWord(arg)
		if _, ok := s.sync.Current().Lookup(name); !ok {
			// It may belong to a server that is still connecting.
			a.waitServers(ctx, s)
		}
		args = strings.TrimSpace(args)
		if name == "" {
			say("Usage: /call <tool> <json-arguments>, for example /call mcp__github__get_me {}. /tools lists the tools.")
			break
		}
		if args == "" {
			args = "{}"
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(args), &obj); err != nil {
			say(fmt.Sprintf("The arguments for %s must be a JSON object: %v", name, err))
			break
		}
		res, err := a.runner.Execute(ctx, s.id, s.access, name, json.RawMessage(args), t.sink)
		switch {
		case errors.Is(err, gateway.ErrUnknownTool) && a.serverAway(s, name) != "":
			say(fmt.Sprintf("Cannot call %s now: %s.", name, a.serverAway(s, name)))
		case errors.Is(err, gateway.ErrUnknownTool) || errors.Is(err, gateway.ErrToolDenied):
			say(fmt.Sprintf("Cannot call %s: %v", name, err))
		case err != nil:
			say(fmt.Sprintf("Calling %s failed: %v", name, err))
		case ctx.Err() != nil:
			return gateway.StopCancelled
		case res.IsError:
			say(fmt.Sprintf("%s failed.", name))
		}
	}
	if ctx.Err() != nil {
		return gateway.StopCancelled
	}
	return gateway.StopEndTurn
}

// serverAway says why the tool a bridged name stood for is not offered
// now: its server is restarting, connecting or failed. "" if the name was
// never a tool of this session or its server is ready.
func (a *Agent) serverAway(s *liveSession, name string) string {
	t, ok := s.sync.Known(name)
	if !ok {
		return ""
	}
	st, ok := s.mgr.Status(t.Server)
	if !ok && a.shared != nil {
		st, ok = a.shared.Status(t.Server)
	}
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
func (a *Agent) mcpReport(s *liveSession) string {
	statuses := s.mgr.Statuses()
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

// toolsReport lists the session's tools matching filter.
func (a *Agent) toolsReport(s *liveSession, filter string) string {
	tools := slices.DeleteFunc(s.sync.Current().Filter(filter), func(t gateway.Tool) bool { return !s.allowed(t) })
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
	for _, st := range s.mgr.Statuses() {
		if st.State == mcpclient.StateConnecting || st.State == mcpclient.StateRestarting {
			fmt.Fprintf(&b, "\n\n(%s is %s; its tools are not listed yet)", st.Name, st.State)
		}
	}
	return b.String()
}

// Permission option ids.
const (
	optAllowOnce    = "allow_once"
	optAllowAlways  = "allow_always"
	optRejectOnce   = "reject_once"
	optRejectAlways = "reject_always"
)

// approve is session s's Approver: "always" decisions and auto mode
// answer at once (except for tools that ask even in auto mode, such as
// run_command); tools that need no approval run; anything else asks the
// user, showing what the call will do (its preview).
func (a *Agent) approve(ctx context.Context, s *liveSession, call gateway.CallInfo, tool gateway.Tool) (gateway.Decision, error) {
	s.mu.Lock()
	mode, always := s.mode, s.always[tool.Name]
	s.mu.Unlock()
	switch {
	case always == "allow":
		return gateway.Allow, nil
	case always == "reject":
		return gateway.Reject, nil
	case !tool.AskApproval && !tool.AskInAuto, mode == modeAuto && !tool.AskInAuto:
		return gateway.Allow, nil
	}
	s.mu.Lock()
	auto := s.cfg.policy.AutoApproved(tool.Name)
	s.mu.Unlock()
	if auto {
		return gateway.Allow, nil
	}
	kind := acpsdk.ToolKind(call.Kind)
	// "Always" holds for the tool, whatever the call's arguments: name
	// the tool, not the call.
	toolTitle := tool.Title
	if toolTitle == "" {
		toolTitle = tool.Name
	}
	resp, err := a.conn.RequestPermission(ctx, acpsdk.RequestPermissionRequest{
		SessionId: acpsdk.SessionId(s.id),
		ToolCall: acpsdk.ToolCallUpdate{
			ToolCallId: acpsdk.ToolCallId(call.ID), Title: acpsdk.Ptr(call.Title), Kind: &kind,
			Status: acpsdk.Ptr(acpsdk.ToolCallStatusPending), RawInput: rawJSON(call.RawInput),
			Content: toolContent(call.Content), Locations: locations(call.Content),
		},
		Options: []acpsdk.PermissionOption{
			{OptionId: optAllowOnce, Name: "Allow once", Kind: acpsdk.PermissionOptionKindAllowOnce},
			{OptionId: optAllowAlways, Name: "Always allow " + toolTitle, Kind: acpsdk.PermissionOptionKindAllowAlways},
			{OptionId: optRejectOnce, Name: "Reject", Kind: acpsdk.PermissionOptionKindRejectOnce},
			{OptionId: optRejectAlways, Name: "Always reject " + toolTitle, Kind: acpsdk.PermissionOptionKindRejectAlways},
		},
	})
	if err != nil {
		return gateway.Reject, fmt.Errorf("asking the client for permission: %w", err)
	}
	if resp.Outcome.Selected == nil {
		return gateway.Reject, nil // cancelled
	}
	var decision gateway.Decision
	var remember string
	switch string(resp.Outcome.Selected.OptionId) {
	case optAllowOnce:
		decision = gateway.Allow
	case optAllowAlways:
		decision, remember = gateway.Allow, "allow"
	case optRejectAlways:
		decision, remember = gateway.Reject, "reject"
	default:
		decision = gateway.Reject
	}
	if remember != "" {
		a.remember(s, tool.Name, remember)
	}
	return decision, nil
}

// remember keeps an "always" decision ("allow" or "reject") about key (a
// tool name, or samplingKey of a server) for the session, and saves it.
func (a *Agent) remember(s *liveSession, key, decision string) {
	s.mu.Lock()
	s.always[key] = decision
	s.mu.Unlock()
	if err := s.store.UpdateMeta(func(m *session.Meta) {
		if m.Always == nil {
			m.Always = map[string]string{}
		}
		m.Always[key] = decision
	}); err != nil {
		a.logger.Warn("saving a permission decision", "session", s.id, "err", err)
	}
}

// reload applies the current configuration to a session: its configured
// servers whose spec changed are restarted, its policy, model and bridge
// options replaced, its tools refreshed.
func (a *Agent) reload(ctx context.Context, s *liveSession) string {
	s.mu.Lock()
	profile := s.cfg.profile
	s.mu.Unlock()
	sc, err := a.sessionConfigFor(profile)
	if err != nil {
		return fmt.Sprintf("Reload failed: %v", err)
	}
	specs := a.merge(sc.servers, s.client)
	sc.applyLimits(&mcpclient.Options{}, specs) // timeouts; other limits stay
	restarted, err := s.mgr.Reconfigure(ctx, specs)
	if err != nil {
		return fmt.Sprintf("Reload failed: %v", err)
	}
	s.mu.Lock()
	chosen := s.pick.chosen
	s.mu.Unlock()
	model := a.provider(ctx, sc, chosen)
	s.mu.Lock()
	s.cfg, s.provider = sc, model
	s.mu.Unlock()
	s.sync.SetOptions(sc.bridgeOptions(a.bridgeBase(s.id)))
	if len(restarted) == 0 {
		return "Configuration reloaded; no server changed."
	}
	return fmt.Sprintf("Configuration reloaded; restarted: %s.", strings.Join(restarted, ", "))
}
