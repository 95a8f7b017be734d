package config

import (
	"runtime"
	"strconv"

	"github.com/acpgate/acpgate/internal/base/sandbox"
)

// DefaultClientServerSandbox is the policy of the stdio servers a client
// passes when the configuration sets none: workspace-write (read all but
// the secret stores, write the workspace, the caches and its own
// temporary directory; network all, as most servers exist to reach a
// service), best effort (where the system cannot enforce it the server
// runs unconfined, and /mcp and a notice say so). On Windows, which has
// no sandbox, it is off. docs/sandbox.md gives the evidence.
func DefaultClientServerSandbox() sandbox.Policy {
	if runtime.GOOS == "windows" {
		return sandbox.Policy{Files: sandbox.FilesOff}
	}
	best := false
	return sandbox.Policy{Files: sandbox.FilesWorkspaceWrite, FailIfUnavailable: &best}
}

// DefaultCommandSandbox is the policy of the local run tool's commands
// when the configuration sets none: the same as the client servers'.
func DefaultCommandSandbox() sandbox.Policy { return DefaultClientServerSandbox() }

// builtinSandboxes are the defaults of every policy.
func builtinSandboxes() Sandboxes {
	off, client, command := sandbox.Policy{Files: sandbox.FilesOff}, DefaultClientServerSandbox(), DefaultCommandSandbox()
	return Sandboxes{Sandbox: &off, ClientServerSandbox: &client, CommandSandbox: &command}
}

// over returns s with every policy o sets over it.
func (s Sandboxes) over(o Sandboxes) Sandboxes {
	overNil(&s.Sandbox, o.Sandbox)
	overNil(&s.ClientServerSandbox, o.ClientServerSandbox)
	overNil(&s.CommandSandbox, o.CommandSandbox)
	return s
}

// ServerSandbox is the policy of a configured stdio server: its own, else
// the profile's "sandbox".
func (e Effective) ServerSandbox(s Server) sandbox.Policy {
	if s.Sandbox != nil {
		return *s.Sandbox
	}
	if e.Sandbox != nil {
		return *e.Sandbox
	}
	return sandbox.Policy{}
}

// policies returns every sandbox policy of c with its location.
func (c *Config) policies() []located[*sandbox.Policy] {
	var out []located[*sandbox.Policy]
	add := func(loc []string, s Sandboxes) {
		out = append(out,
			located[*sandbox.Policy]{child(loc, "sandbox"), s.Sandbox},
			located[*sandbox.Policy]{child(loc, "clientServerSandbox"), s.ClientServerSandbox},
			located[*sandbox.Policy]{child(loc, "commandSandbox"), s.CommandSandbox})
	}
	add([]string{"agents", "defaults"}, c.Agents.Defaults.Sandboxes)
	for i, p := range c.Agents.List {
		add([]string{"agents", "list", strconv.Itoa(i)}, p.Sandboxes)
	}
	for _, set := range c.serverSets() {
		for _, name := range sortedKeys(set.v) {
			out = append(out, located[*sandbox.Policy]{child(set.loc, name, "sandbox"), set.v[name].Sandbox})
		}
	}
	return out
}

// sandboxes checks every policy's values (the schema checks their shape).
func (r *report) sandboxes(c *Config) {
	for _, p := range c.policies() {
		if p.v == nil || r.isBad(p.loc) {
			continue
		}
		if err := p.v.Check(); err != nil {
			r.errorAt(p.loc, err, "%v", err)
		}
	}
}
