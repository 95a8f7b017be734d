package acp

import (
	"fmt"
	"slices"
	"strings"

	"github.com/acpgate/acpgate/bridge"
	"github.com/acpgate/acpgate/gateway/sysprompt"
	"github.com/acpgate/acpgate/mcpclient"
)

// This file is what the system prompt says of ACP and MCP, which
// gateway/sysprompt knows nothing of: acpgate's own instructions
// (agentIntro), the words for a session without workspace tools, and the
// last section, the session's MCP servers and their instructions
// (serversSection), which the Builder puts in as it is.

// agentIntro is acpgate's own instructions: the opening paragraphs of
// the prompt, which a client's system prompt replaces or follows
// (sysprompt.Options.Intro).
const agentIntro = "You are acpgate, an AI agent working for the user in their code editor through the Agent Client Protocol (ACP). " +
	"The user writes to you in the editor and sees your answers, your tool calls and their results there; " +
	"the editor may ask the user to approve a tool call before it runs, and the user may reject it. " +
	"Your tools are acpgate's own and those of the session's MCP servers.\n" +
	"Do what the user asks, with your tools rather than by guessing; be concise, and say briefly what you did and what is left."

// noWorkspaceTools is what the prompt says of a session without
// workspace tools (sysprompt.Options.NoWorkspaceTools).
const noWorkspaceTools = "This session has no workspace tools: you cannot read or change files or run commands yourself, except with MCP tools that do."

// promptOptions are the sysprompt.Options of a session's Builder: its
// instructions texts neutralised as the bridge frames untrusted text.
func promptOptions() sysprompt.Options {
	return sysprompt.Options{Intro: agentIntro, NoWorkspaceTools: noWorkspaceTools, Neutralize: bridge.Neutralize}
}

// The bounds of the servers' instructions in the prompt: one server's,
// and all of them together.
const (
	maxServerInstructionsBytes    = 2 << 10
	maxAllServerInstructionsBytes = 8 << 10
)

// serversSectionName is the Name of the servers' section.
const serversSectionName = "servers"

// serverState is what the prompt says of an MCP server's state.
type serverState string

// The server states the prompt knows.
const (
	serverReady      serverState = "ready"
	serverConnecting serverState = "connecting"
	serverRestarting serverState = "reconnecting"
	serverNeedsAuth  serverState = "needs sign-in"
	serverFailed     serverState = "failed"
)

// promptStates is what the prompt says of each server state; closed
// (disabled) servers are not in it.
var promptStates = map[mcpclient.State]serverState{
	mcpclient.StateReady: serverReady, mcpclient.StateConnecting: serverConnecting,
	mcpclient.StateRestarting: serverRestarting, mcpclient.StateNeedsAuth: serverNeedsAuth,
	mcpclient.StateFailed: serverFailed,
}

// promptServer is one MCP server of the session as the prompt shows it.
type promptServer struct {
	// name is the server's name, the key its instructions are framed
	// under (frameFunc); it never enters the prompt's text.
	name string
	// label is the server's name as the prompt shows it, already made one
	// safe line (bridge.ServerLabel): the prompt writes it as it is.
	label string
	state serverState
	// signIn says how the user signs in to a server that needs it ("":
	// the prompt only says the user must).
	signIn string
	// instructions are the server's own text (its initialize result's),
	// raw: the frameFunc prepares it. Only a ready server's are used.
	instructions string
}

// serverInPrompt is the server called name as the system prompt shows
// it: its name as a label (bridge.ServerLabel), and the sign-in command
// when the label is the name the command takes.
func serverInPrompt(name string, state serverState, instructions string) promptServer {
	out := promptServer{name: name, label: bridge.ServerLabel(name), state: state, instructions: instructions}
	if out.label == name {
		out.signIn = "/mcp login " + name
	}
	return out
}

// frameFunc prepares an MCP server's instructions text for the model: at
// most max bytes of it, redacted, and framed as the server's unless the
// server is trusted (bridge.Options.Instructions). "" leaves them out.
type frameFunc func(server, text string, max int) string

// serversSection lists the servers and their states, then the ready
// servers' instructions, framed by frame (nil leaves them all out),
// within the bounds.
func serversSection(servers []promptServer, frame frameFunc) sysprompt.Section {
	var b strings.Builder
	b.WriteString("# MCP servers\nThe session's MCP servers; their tools are among yours while they are ready.")
	for _, s := range servers {
		fmt.Fprintf(&b, "\n- %s: %s", s.label, s.state)
		switch s.state {
		case serverNeedsAuth:
			b.WriteString(" (its tools come once the user signs in")
			if s.signIn != "" {
				fmt.Fprintf(&b, ": %s", s.signIn)
			}
			b.WriteString(")")
		case serverFailed:
			b.WriteString(" (its tools are unavailable; /mcp shows why)")
		case serverConnecting, serverRestarting:
			b.WriteString(" (its tools are not available yet)")
		}
	}
	if frame != nil {
		left := maxAllServerInstructionsBytes
		for _, s := range servers {
			text := strings.TrimSpace(s.instructions)
			if s.state != serverReady || text == "" {
				continue
			}
			if left <= 0 {
				fmt.Fprintf(&b, "\n\n[The instructions of the MCP server %s are left out: the servers' instructions are limited to %d bytes in all.]", s.label, maxAllServerInstructionsBytes)
				continue
			}
			limit := min(maxServerInstructionsBytes, left)
			if framed := frame(s.name, text, limit); framed != "" {
				fmt.Fprintf(&b, "\n\n## Instructions of the MCP server %s\n%s", s.label, framed)
			}
			left -= min(len(text), limit)
		}
	}
	return sysprompt.Section{Name: serversSectionName, Title: "MCP servers", Text: b.String()}
}

// serversPrompt is the servers' section of a session's prompt, built
// again only when the servers it shows changed (framing their
// instructions redacts them and checks them for injections, and logs
// what it finds: once per change, not once per turn). The zero value has
// none built.
type serversPrompt struct {
	frame   frameFunc
	servers []promptServer // what section shows
	section sysprompt.Section
	built   bool
}

// sections returns the caller's sections of a prompt showing servers:
// the servers' section, none when there are no servers.
func (sp *serversPrompt) sections(servers []promptServer) []sysprompt.Section {
	if len(servers) == 0 {
		return nil
	}
	if !sp.built || !slices.Equal(sp.servers, servers) {
		sp.servers, sp.section, sp.built = slices.Clone(servers), serversSection(servers, sp.frame), true
	}
	return []sysprompt.Section{sp.section}
}
