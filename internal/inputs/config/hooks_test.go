package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/gateway/hooks"
	"github.com/acpgate/acpgate/internal/inputs/config"
)

// TestHooksKey: hooks at the top level and in a profile are kept for the
// profile's sessions (ParseHooks reads them); a hook in error is an error
// naming where it is, an event acpgate does not run a warning.
func TestHooksKey(t *testing.T) {
	t.Parallel()
	c, warnings, err := config.Parse([]byte(`{
  "hooks": {"PreToolUse": [{"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "./check.sh"}]}],
            "Notification": [{"hooks": [{"type": "command", "command": "true"}]}]},
  "agents": {"list": [{"id": "ci", "hooks": {"Stop": [{"hooks": [{"type": "command", "args": ["make", "test"], "timeout": 300}]}]}}]}
}`), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0].String(), "hooks.Notification") {
		t.Errorf("warnings %v", warnings)
	}
	eff, err := c.Effective("ci")
	if err != nil {
		t.Fatal(err)
	}
	top, _, err := config.ParseHooks(eff.Hooks, "configuration")
	if err != nil || len(top.Matching(hooks.PreToolUse, "mcp__s__echo", false)) != 1 {
		t.Errorf("top-level hooks: %v %v", top.All(), err)
	}
	prof, _, err := config.ParseHooks(eff.ProfileHooks, "profile")
	if err != nil || len(prof.Matching(hooks.Stop, "", false)) != 1 {
		t.Errorf("profile hooks: %v %v", prof.All(), err)
	}
	_, _, err = config.Parse([]byte(`{"hooks": {"PreToolUse": [{"matcher": "(", "hooks": [{"type": "command", "command": "x"}]}]}}`), "c.json")
	if err == nil || !strings.Contains(err.Error(), "hooks") || !strings.Contains(err.Error(), "not a regular expression") {
		t.Errorf("bad matcher: %v", err)
	}
	if _, _, err := config.ParseHooks([]byte(`{"Stop": [{"hooks": [{"type": "agent"}]}]}`), "x"); !errors.Is(err, hooks.ErrInvalid) {
		t.Errorf("agent hook: %v", err)
	}
}
