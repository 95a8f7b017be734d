package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ErrUnknownProfile is wrapped by the error of [Config.Effective] for a
// profile that agents.list does not define.
var ErrUnknownProfile = errors.New("unknown profile")

// Effective is the configuration in force for one profile: the defaults
// merged with the profile. It shares no memory with the Config it came from
// and is plain data: not safe for concurrent modification.
type Effective struct {
	// Profile is the profile's ID, "" for the defaults alone.
	Profile string
	// Servers are the servers, sorted by name, with Transport, Enabled,
	// RestartOnCrash and MaxRestarts filled in. Disabled servers are
	// included.
	Servers []NamedServer
	// Tools is the tool policy.
	Tools ToolPolicy
	// Skills is the skill policy; SkillDirs the top-level skills.dirs.
	Skills    SkillPolicy
	SkillDirs []string
	// Model holds the model settings.
	Model Model
	// Limits holds the limits (top-level only).
	Limits Limits
	// Sampling is the top-level sampling mode (SamplingAsk when unset).
	Sampling SamplingMode
	// WorkspaceTools is where the workspace tools work (top-level only;
	// "" when the file does not say).
	WorkspaceTools WorkspaceTools
	// Instructions are the top-level instructions, ProfileInstructions
	// the profile's ("" for none).
	Instructions, ProfileInstructions string
	// Sandboxes are the sandbox policies in force, every one set (the
	// profile's over the defaults' over the built-in defaults); a server's
	// own "sandbox" is in its Server.
	Sandboxes
	// Hooks are the top-level hooks, ProfileHooks the profile's (nil:
	// none), each the value of a "hooks" key (see ParseHooks).
	Hooks, ProfileHooks json.RawMessage
}

// NamedServer is a server with its name. It is plain data: not safe for
// concurrent modification.
type NamedServer struct {
	// Name is the server's key in its "servers" object.
	Name string
	Server
}

// Profiles returns the profile IDs in file order. It is safe for concurrent
// use on an unmodified Config; a nil Config has none.
func (c *Config) Profiles() []string {
	if c == nil {
		return nil
	}
	ids := make([]string, 0, len(c.Agents.List))
	for _, p := range c.Agents.List {
		ids = append(ids, p.ID)
	}
	return ids
}

// Effective returns the configuration in force for profile: servers merged
// by name (top-level servers < mcpServers < agents.defaults.mcp.servers <
// the profile's, each replacing the previous one of the same name
// entirely), the tool and skill policies (each list the profile sets,
// even empty, replaces the defaults'; a nil one inherits), the model settings (the
// profile's non-empty fields override the top-level ones; its headers, when
// set, replace them), the limits and the instructions (the top-level ones
// and the profile's, both kept). Profile "" means the defaults alone; a
// profile not defined is an error wrapping [ErrUnknownProfile] that lists
// the known ones. A nil Config is empty. Effective is safe for concurrent
// use on an unmodified Config.
func (c *Config) Effective(profile string) (Effective, error) {
	c = c.clone() // the result shares no memory with the receiver
	var prof *Profile
	if profile != "" {
		i := slices.IndexFunc(c.Agents.List, func(p Profile) bool { return p.ID == profile })
		if i < 0 {
			known := "none are defined"
			if ids := c.Profiles(); len(ids) > 0 {
				known = "known: " + strings.Join(ids, ", ")
			}
			return Effective{}, fmt.Errorf("%w %q (%s)", ErrUnknownProfile, profile, known)
		}
		prof = &c.Agents.List[i]
	}

	servers := map[string]Server{}
	maps.Copy(servers, c.Servers)
	maps.Copy(servers, c.MCPServers)
	maps.Copy(servers, c.Agents.Defaults.MCP.Servers)
	tools := c.Agents.Defaults.Tools
	skills := c.Agents.Defaults.Skills
	model := c.Model
	if prof != nil {
		maps.Copy(servers, prof.MCP.Servers)
		if prof.Tools.Allow != nil {
			tools.Allow = prof.Tools.Allow
		}
		if prof.Tools.Deny != nil {
			tools.Deny = prof.Tools.Deny
		}
		if prof.Tools.AutoApprove != nil {
			tools.AutoApprove = prof.Tools.AutoApprove
		}
		if prof.Skills.Allow != nil {
			skills.Allow = prof.Skills.Allow
		}
		if prof.Skills.Deny != nil {
			skills.Deny = prof.Skills.Deny
		}
		model = model.Over(prof.Model)
	}

	eff := Effective{Profile: profile, Tools: tools, Skills: skills, SkillDirs: c.Skills.Dirs, Model: model, Limits: c.Limits, Sampling: c.Sampling, WorkspaceTools: c.WorkspaceTools, Instructions: c.Instructions, Hooks: slices.Clone(c.Hooks)}
	eff.Sandboxes = builtinSandboxes().over(c.Agents.Defaults.Sandboxes)
	if prof != nil {
		eff.ProfileInstructions = prof.Instructions
		eff.ProfileHooks = slices.Clone(prof.Hooks)
		eff.Sandboxes = eff.Sandboxes.over(prof.Sandboxes)
	}
	if eff.Sampling == "" {
		eff.Sampling = SamplingAsk
	}
	for _, name := range sortedKeys(servers) {
		eff.Servers = append(eff.Servers, NamedServer{Name: name, Server: servers[name].withDefaults()})
	}
	return eff, nil
}

// Over returns m with the set fields of o over it: o's non-empty Provider,
// BaseURL, Model, APIKey, ContextWindow, Thinking and ThinkingBudget, and
// its Headers, Choices, Pricing, PromptCacheKey, Vision and Audio when non-nil (each
// replacing m's whole). When o names another model, m's
// ContextWindow and Pricing, which were said of m's model, are dropped
// unless o sets its own.
// This is the one merge rule of model settings: a profile's over the
// file's (in [Config.Effective]), and acpgate's flags and environment over
// both.
func (m Model) Over(o Model) Model {
	if o.Model != "" && o.Model != m.Model {
		m.Model, m.ContextWindow, m.Pricing = o.Model, 0, nil
	}
	overZero(&m.Provider, o.Provider)
	overZero(&m.Thinking, o.Thinking)
	overZero(&m.ThinkingBudget, o.ThinkingBudget)
	overZero(&m.BaseURL, o.BaseURL)
	overZero(&m.APIKey, o.APIKey)
	overZero(&m.ContextWindow, o.ContextWindow)
	overNil(&m.Pricing, o.Pricing)
	overNil(&m.Vision, o.Vision)
	overNil(&m.Audio, o.Audio)
	overNil(&m.PromptCacheKey, o.PromptCacheKey)
	if o.Headers != nil {
		m.Headers = o.Headers
	}
	if o.Choices != nil {
		m.Choices = o.Choices
	}
	return m
}

// overZero sets *dst to v unless v is its type's zero value (unset): the
// merge rule of a layer's plain settings.
func overZero[T comparable](dst *T, v T) {
	var zero T
	if v != zero {
		*dst = v
	}
}

// overNil sets *dst to v unless v is nil (unset): the merge rule of a
// layer's optional settings, each replacing the one below whole.
func overNil[T any](dst **T, v *T) {
	if v != nil {
		*dst = v
	}
}

// withDefaults returns s with its defaults filled in.
func (s Server) withDefaults() Server {
	s.Transport = s.ResolvedTransport()
	s.Enabled = ptr(s.IsEnabled())
	if s.RestartOnCrash == nil {
		s.RestartOnCrash = ptr(true)
	}
	if s.MaxRestarts == nil {
		s.MaxRestarts = ptr(DefaultMaxRestarts)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// clone returns a deep copy of c, made by a trip through the file format
// (which keeps every field, and empty lists and maps apart from nil ones).
// A nil c yields an empty Config.
func (c *Config) clone() *Config {
	out := &Config{}
	if err := json.Unmarshal(c.JSON(), out); err != nil {
		// Unreachable: JSON writes what Unmarshal reads.
		return &Config{}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
