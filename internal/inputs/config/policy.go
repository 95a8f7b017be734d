package config

import "path"

// ToolPolicy says which tools a session may use and which run without
// asking. Each list holds glob patterns matched against whole tool names
// with path.Match (* matches any run of characters, ? one character; tool
// names never contain '/'). A nil list is unset (a profile inherits the
// defaults' list); an empty non-nil list is set. A ToolPolicy is plain data:
// its methods are safe for concurrent use as long as nobody modifies it.
type ToolPolicy struct {
	// Allow lists the tools offered; empty means every tool.
	Allow []string `json:"allow,omitzero"`
	// Deny lists tools never offered nor callable; it wins over Allow.
	Deny []string `json:"deny,omitzero"`
	// AutoApprove lists allowed tools that run without a permission request.
	AutoApprove []string `json:"autoApprove,omitzero"`
}

// Allowed reports whether the tool called name may be used: it matches no
// Deny pattern, and Allow is empty or one of its patterns matches.
func (t ToolPolicy) Allowed(name string) bool {
	if matchAny(t.Deny, name) {
		return false
	}
	return len(t.Allow) == 0 || matchAny(t.Allow, name)
}

// AutoApproved reports whether the tool called name is allowed (see
// Allowed) and matches an AutoApprove pattern.
func (t ToolPolicy) AutoApproved(name string) bool {
	return t.Allowed(name) && matchAny(t.AutoApprove, name)
}

// matchAny reports whether a pattern matches name; a malformed pattern
// (rejected when the file is parsed) matches nothing.
func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, err := path.Match(p, name); ok && err == nil {
			return true
		}
	}
	return false
}

// SkillPolicy says which skills a session offers, by glob patterns
// matched against whole skill IDs with path.Match: a file skill's ID is
// its name, a server skill's "<server>:<name>". A nil list is unset (a
// profile inherits the defaults' list); an empty non-nil list is set.
// Plain data, as ToolPolicy.
type SkillPolicy struct {
	// Allow lists the skills offered; empty means every skill.
	Allow []string `json:"allow,omitzero"`
	// Deny lists skills never offered; it wins over Allow.
	Deny []string `json:"deny,omitzero"`
}

// Allowed reports whether the skill id is offered: it matches no Deny
// pattern, and Allow is empty or one of its patterns matches.
func (p SkillPolicy) Allowed(id string) bool {
	return ToolPolicy{Allow: p.Allow, Deny: p.Deny}.Allowed(id)
}
