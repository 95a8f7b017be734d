package config

import (
	"encoding/json"
	"strconv"

	"github.com/acpgate/acpgate/gateway/hooks"
)

// ParseHooks reads raw, the value of a "hooks" key (Claude Code's
// format), into a set named source; skipped are the events acpgate does
// not run. Errors wrap hooks.ErrInvalid.
func ParseHooks(raw json.RawMessage, source string) (set hooks.Set, skipped []string, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return hooks.Set{}, nil, nil
	}
	doc := append(append([]byte(`{"hooks":`), raw...), '}')
	return hooks.Parse(doc, source, false)
}

// checkHooks checks every "hooks" value of c: an error for one that
// hooks.Parse refuses, a warning for events acpgate does not run.
func (r *report) checkHooks(c *Config) {
	sets := []located[json.RawMessage]{{[]string{"hooks"}, c.Hooks}}
	for i, p := range c.Agents.List {
		sets = append(sets, located[json.RawMessage]{[]string{"agents", "list", strconv.Itoa(i), "hooks"}, p.Hooks})
	}
	for _, s := range sets {
		if r.isBad(s.loc) {
			continue
		}
		_, skipped, err := ParseHooks(s.v, "hooks")
		if err != nil {
			r.errorAt(s.loc, err, "%v", err)
			continue
		}
		for _, ev := range skipped {
			r.warn(child(s.loc, ev), "acpgate runs no %s hooks (see docs/hooks.md for the events it runs); ignored", ev)
		}
	}
}
