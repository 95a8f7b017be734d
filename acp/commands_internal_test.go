package acp

import (
	"testing"

	"github.com/acpgate/acpgate/gateway"
)

// TestSlashRegistry: the registry is the one list of slash commands: each
// command advertised is recognised at the start of a prompt (with its
// argument trimmed), in the registry's order, and nothing else is.
func TestSlashRegistry(t *testing.T) {
	co := &commands{}
	co.slashes = co.registry()
	list := co.commandList()
	if len(list) != len(co.slashes) || len(list) < 7 {
		t.Fatalf("advertised %d commands, the registry has %d", len(list), len(co.slashes))
	}
	for i, ac := range list {
		c, arg, ok := co.slashCommand([]gateway.Content{{Type: gateway.ContentText, Text: "  /" + ac.Name + "  some arg \n"}})
		if !ok || c != &co.slashes[i] || arg != "some arg" {
			t.Errorf("/%s: recognised %v (%v), arg %q", ac.Name, ok, c, arg)
		}
		if (co.slashes[i].hint != "") != (ac.Input != nil) {
			t.Errorf("/%s: hint %q, advertised input %v", ac.Name, co.slashes[i].hint, ac.Input)
		}
	}
	for _, text := range []string{"/nope", "mcp", "/mcpx", "/server.prompt"} {
		if _, _, ok := co.slashCommand([]gateway.Content{{Type: gateway.ContentText, Text: text}}); ok {
			t.Errorf("%q recognised as a slash command", text)
		}
	}
}
