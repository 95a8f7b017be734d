package acp

import (
	"github.com/acpgate/acpgate/acp/clientws"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/plan"
	"github.com/acpgate/acpgate/gateway/workspace"
	"github.com/acpgate/acpgate/internal/inputs/config"
)

// This file is the native tools every session has: the workspace tools
// (read_file, edit_file, run_command), through the editor or local, and
// update_plan (plan.go).

// workspaceMode is where the workspace tools of a session with
// configuration sc work: Options.WorkspaceTools (the flag), else the
// file's, else through the client.
func (cf *agentConfig) workspaceMode(sc sessionConfig) config.WorkspaceTools {
	switch {
	case cf.opts.WorkspaceTools != "":
		return cf.opts.WorkspaceTools
	case sc.workspace != "":
		return sc.workspace
	}
	return config.WorkspaceClient
}

// nativeTools returns the native tools of session id, which it offers
// before its MCP tools: its workspace tools, then update_plan.
func (cf *agentConfig) nativeTools(id, cwd string, dirs []string, sc sessionConfig) []gateway.Tool {
	return append(cf.workspaceTools(id, cwd, dirs, sc), plan.Tool())
}

// workspaceTools returns the workspace tools of session id (working
// directory cwd, additional directories dirs): the file tools through the client
// when it can read and write files, else locally in local mode, else
// read_file alone through a client that can only read; run_command in the
// client's terminals when it has them, else locally in local mode.
func (cf *agentConfig) workspaceTools(id, cwd string, dirs []string, sc sessionConfig) []gateway.Tool {
	mode := cf.workspaceMode(sc)
	if mode == config.WorkspaceOff {
		return nil
	}
	caps := cf.peer.capabilities()
	client := clientws.New(cf.peer.conn, id)
	local := workspace.NewLocal(&workspace.LocalOptions{Env: cf.opts.WorkspaceEnv,
		// The local run tool runs under the profile's commandSandbox (a
		// command in the client's terminal is outside acpgate's reach).
		Sandbox: cf.opts.MCP.Sandbox, Policy: policyOf(sc.sandboxes.CommandSandbox), Workspace: append([]string{cwd}, dirs...)})
	base := workspace.Options{Cwd: cwd, Dirs: dirs}
	if l := sc.limits.MaxResultBytes; l != nil {
		base.MaxResultBytes = *l
	}
	if r := cf.opts.Secrets; r != nil && r.Redactor != nil {
		base.Redact = r.Redactor.Redact
	}
	files, terms := base, base
	switch {
	case caps.Fs.ReadTextFile && caps.Fs.WriteTextFile:
		files.Files, files.Meta = client, workspaceMeta("client")
	case mode == config.WorkspaceLocal:
		files.Files, files.Meta = local, workspaceMeta("local")
	case caps.Fs.ReadTextFile:
		files.Files, files.ReadOnly, files.Meta = client, true, workspaceMeta("client")
	}
	switch {
	case caps.Terminal:
		terms.Terminals, terms.Meta = client, workspaceMeta("client")
	case mode == config.WorkspaceLocal:
		terms.Terminals, terms.Meta = local, workspaceMeta("local")
	}
	return append(workspace.Tools(files), workspace.Tools(terms)...)
}

// workspaceMeta is the Meta of workspace tools working at where: it
// reaches the client in each call's _meta.acpgate.
func workspaceMeta(where string) map[string]any { return map[string]any{"workspace": where} }
