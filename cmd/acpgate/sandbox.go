package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/acpgate/acpgate/internal/base/sandbox"
	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/session"
)

// newLauncher is the sandbox launcher of the agent: acpgate itself
// (sandbox.LaunchArg) on Linux; the home, the caches every policy may
// write (npm's, as npx needs it even warm, and the XDG cache) and
// acpgate's own configuration and state directories, hidden.
func newLauncher(stateDir string) *sandbox.Launcher {
	exe, _ := os.Executable() // "": Linux policies cannot be enforced, and say so
	home, _ := os.UserHomeDir()
	l := &sandbox.Launcher{Exe: exe, Places: sandbox.Places{Home: home}}
	if dir, err := config.Dir(); err == nil {
		l.Places.Hidden = append(l.Places.Hidden, dir)
	}
	if dir, err := session.DefaultDir(); err == nil {
		l.Places.Hidden = append(l.Places.Hidden, dir)
	}
	if stateDir != "" {
		l.Places.Hidden = append(l.Places.Hidden, stateDir)
	}
	l.Places.Cache = cacheDirs(os.Getenv)
	return l
}

// cacheDirs are the package managers' caches a confined process may
// write: npm's (npm_config_cache, else ~/.npm) and the XDG cache
// (XDG_CACHE_HOME, else ~/.cache: uv, pip, go build).
func cacheDirs(getenv func(string) string) []string {
	npm := getenv("npm_config_cache")
	if npm == "" || !filepath.IsAbs(npm) {
		npm = "~/.npm"
	}
	xdg := getenv("XDG_CACHE_HOME")
	if xdg == "" || !filepath.IsAbs(xdg) {
		xdg = "~/.cache"
	}
	return []string{npm, xdg}
}

// sandboxReport writes what `acpgate config check` says of the sandbox:
// what the running system enforces, and for each policy in force whether
// it is enforced here, starts unconfined, or refuses to start.
func sandboxReport(w io.Writer, eff config.Effective, s sandbox.Support) {
	fmt.Fprintf(w, "sandbox: %s\n", s)
	type named struct {
		name string
		p    sandbox.Policy
	}
	list := []named{{"sandbox", *eff.Sandbox}, {"clientServerSandbox", *eff.ClientServerSandbox}, {"commandSandbox", *eff.CommandSandbox}}
	for _, srv := range eff.Servers {
		if srv.Sandbox != nil && srv.ResolvedTransport() == config.TransportStdio {
			list = append(list, named{"server " + srv.Name, *srv.Sandbox})
		}
	}
	for _, n := range list {
		fmt.Fprintf(w, "  %s: %s: %s\n", n.name, n.p, enforcement(n.p, s))
	}
}

// enforcement says what becomes of a process under p on a system that
// enforces s.
func enforcement(p sandbox.Policy, s sandbox.Support) string {
	if p.Off() {
		return "not confined"
	}
	err := s.Enforceable(p.Resolve(sandbox.Places{}))
	switch {
	case err == nil:
		return "enforced"
	case p.Strict():
		return "cannot be enforced here: refuses to start (" + s.Why + ")"
	default:
		return "cannot be enforced here: starts unconfined (" + s.Why + ")"
	}
}
