package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/internal/base/sandbox"
	"github.com/acpgate/acpgate/internal/inputs/config"
)

func TestSandboxPolicies(t *testing.T) {
	c, _, err := config.Parse([]byte(`{
		"agents": {
			"defaults": {"sandbox": "read-only", "clientServerSandbox": {"files": "workspace-write", "network": "none"}},
			"list": [{"id": "open", "clientServerSandbox": "off", "commandSandbox": {"files": {"read": ["/usr"], "write": ["~/out"]}, "network": {"connect": [443]}}}]
		},
		"mcpServers": {"fs": {"command": "fs", "sandbox": "workspace-write"}, "plain": {"command": "plain"}}
	}`), "config.json")
	if err != nil {
		t.Fatal(err)
	}
	eff, err := c.Effective("")
	if err != nil {
		t.Fatal(err)
	}
	if got := eff.ClientServerSandbox.String(); got != "workspace-write, network none" {
		t.Errorf("clientServerSandbox = %s", got)
	}
	if got := eff.CommandSandbox.String(); got != config.DefaultCommandSandbox().String() {
		t.Errorf("commandSandbox = %s, want the default", got)
	}
	byName := map[string]config.Server{}
	for _, s := range eff.Servers {
		byName[s.Name] = s.Server
	}
	if got := eff.ServerSandbox(byName["fs"]).String(); got != "workspace-write" {
		t.Errorf("fs = %s", got)
	}
	if got := eff.ServerSandbox(byName["plain"]).String(); got != "read-only" {
		t.Errorf("plain = %s, want the profile's sandbox", got)
	}
	open, err := c.Effective("open")
	if err != nil {
		t.Fatal(err)
	}
	if !open.ClientServerSandbox.Off() || open.CommandSandbox.String() != "custom (read 1, write 1), network ports 443" || open.Sandbox.String() != "read-only" {
		t.Errorf("profile open: %s / %s / %s", open.ClientServerSandbox, open.CommandSandbox, open.Sandbox)
	}
}

func TestSandboxPolicyErrors(t *testing.T) {
	for doc, want := range map[string]string{
		`{"mcpServers": {"fs": {"command": "fs", "sandbox": {"files": {"read": ["relative"]}}}}}`: "mcpServers.fs.sandbox: invalid sandbox policy: files.read[0]",
		`{"agents": {"defaults": {"commandSandbox": {"network": {"connect": [0]}}}}}`:             "agents.defaults.commandSandbox",
		`{"agents": {"defaults": {"sandbox": "sealed"}}}`:                                         "agents.defaults.sandbox",
		`{"agents": {"list": [{"id": "p", "clientServerSandbox": {"network": "some"}}]}}`:         "agents.list[0].clientServerSandbox",
	} {
		_, _, err := config.Parse([]byte(doc), "config.json")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", doc, err, want)
		}
		var fe *config.FieldError
		if !errors.As(err, &fe) {
			t.Errorf("%s: %T is no FieldError", doc, err)
		}
	}
	_, _, err := config.Parse([]byte(`{"agents": {"defaults": {"sandbox": {"hide": ["x"]}}}}`), "config.json")
	if !errors.Is(err, sandbox.ErrPolicy) {
		t.Errorf("a relative hidden path: %v, want sandbox.ErrPolicy", err)
	}
}
