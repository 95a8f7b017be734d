package acp

import (
	"context"
	"log/slog"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
)

// This file is authentication: acpgate needs none, and offers a terminal
// method (`acpgate setup`, which sets up a model) to clients that can run
// one.

// auth is the authentication methods: authenticate, logout, and the
// methods initialize offers. Safe for concurrent use.
type auth struct {
	opts     *Options
	logger   *slog.Logger
	sessions func() []*liveSession // the open sessions
}

// TerminalAuth is a terminal authentication method (ACP's
// AuthMethodTerminal): a client that advertises terminal auth runs the
// agent's own program, as it launched it, with Args appended, in a
// terminal, and starts the agent again after a zero exit status. It is
// plain data.
type TerminalAuth struct {
	// ID, Name and Description describe the method in initialize.
	ID, Name, Description string
	// Args are appended to the agent's command line.
	Args []string
	// Command, when set, is the agent's executable: it fills in the
	// legacy form, _meta["terminal-auth"] {command, args, label}, which
	// clients that advertise terminal auth as
	// clientCapabilities._meta["terminal-auth"] read (the form predates
	// the typed method; the ACP schema does not describe it).
	Command string
}

// methods returns the methods offered to a client with caps: the
// terminal method when there is one and the client advertises terminal
// auth (clientCapabilities.auth.terminal, or _meta["terminal-auth"] as the
// ACP registry's check and older clients send it); none otherwise. The
// result is never nil: authMethods is required.
func (au *auth) methods(caps acpsdk.ClientCapabilities) []acpsdk.AuthMethod {
	t := au.opts.TerminalAuth
	legacy := caps.Meta["terminal-auth"] == true
	if t == nil || !caps.Auth.Terminal && !legacy {
		return []acpsdk.AuthMethod{}
	}
	m := &acpsdk.AuthMethodTerminalInline{Id: t.ID, Name: t.Name, Type: "terminal", Args: t.Args}
	if t.Description != "" {
		m.Description = &t.Description
	}
	if legacy && t.Command != "" {
		m.Meta = map[string]any{"terminal-auth": map[string]any{"command": t.Command, "args": t.Args, "label": t.Name}}
	}
	return []acpsdk.AuthMethod{{Terminal: m}}
}

// authenticate answers authenticate. acpgate needs no authentication:
// every method fails with invalid params. The terminal method's ID gets
// an error saying to run it in a terminal (a client must not pass a
// terminal method to authenticate), any other ID one naming it unknown.
func (au *auth) authenticate(_ context.Context, p acpsdk.AuthenticateRequest) (acpsdk.AuthenticateResponse, error) {
	if t := au.opts.TerminalAuth; t != nil && p.MethodId == t.ID {
		return acpsdk.AuthenticateResponse{}, invalidParams("%q is a terminal method, not one for authenticate: run `%s %s` in a terminal to set up a model, then start the agent again (an editor with terminal auth does both); authenticate is never required",
			p.MethodId, au.opts.Name, strings.Join(t.Args, " "))
	}
	return acpsdk.AuthenticateResponse{}, invalidParams("unknown auth method %q: acpgate needs no authentication", p.MethodId)
}
