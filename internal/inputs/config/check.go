package config

import (
	"errors"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/acpgate/acpgate/internal/inputs/mcpservers"
	"github.com/acpgate/acpgate/internal/inputs/secrets"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/acpgate/acpgate/mcpclient/oauth"
)

// located is a part of a Config with its location in the file.
type located[T any] struct {
	loc []string
	v   T
}

// child returns a new location: loc followed by keys.
func child(loc []string, keys ...string) []string {
	return append(slices.Clip(loc), keys...)
}

// serverSets returns every "servers" object of c with its location.
func (c *Config) serverSets() []located[map[string]Server] {
	sets := []located[map[string]Server]{
		{[]string{"servers"}, c.Servers},
		{[]string{"mcpServers"}, c.MCPServers},
		{[]string{"agents", "defaults", "mcp", "servers"}, c.Agents.Defaults.MCP.Servers},
	}
	for i, p := range c.Agents.List {
		sets = append(sets, located[map[string]Server]{[]string{"agents", "list", strconv.Itoa(i), "mcp", "servers"}, p.MCP.Servers})
	}
	return sets
}

// models returns every "model" object of c with its location.
func (c *Config) models() []located[*Model] {
	models := []located[*Model]{{[]string{"model"}, &c.Model}}
	for i := range c.Agents.List {
		models = append(models, located[*Model]{[]string{"agents", "list", strconv.Itoa(i), "model"}, &c.Agents.List[i].Model})
	}
	return models
}

// check makes the checks the schema cannot express on c, the decoded
// document, skipping the values the schema rejected; it settles each
// server's Transport and Enabled from the "type" and "disabled" keys.
func (r *report) check(c *Config) {
	if c.Limits.StartupGrace != nil {
		r.warn([]string{"limits", "startupGrace"}, "retired: no effect (session/new answers at once; prompts wait for servers within limits.startupBudget)")
	}
	for _, set := range c.serverSets() {
		for _, name := range sortedKeys(set.v) {
			if loc := child(set.loc, name); !r.isBad(loc) {
				s := set.v[name]
				r.server(loc, &s)
				set.v[name] = s
			}
		}
	}
	r.overrides(c)
	r.checkHooks(c)
	r.sandboxes(c)
	policies := []located[ToolPolicy]{{[]string{"agents", "defaults", "tools"}, c.Agents.Defaults.Tools},
		{[]string{"agents", "defaults", "skills"}, ToolPolicy{Allow: c.Agents.Defaults.Skills.Allow, Deny: c.Agents.Defaults.Skills.Deny}}}
	for i, d := range c.Skills.Dirs {
		if at := []string{"skills", "dirs", strconv.Itoa(i)}; !filepath.IsAbs(d) && !r.isBad(at) {
			r.errorAt(at, nil, "a folder of skills must be an absolute path, got %q", d)
		}
	}
	seen := map[string]bool{}
	for i, p := range c.Agents.List {
		loc := []string{"agents", "list", strconv.Itoa(i)}
		if id := child(loc, "id"); seen[p.ID] && strings.TrimSpace(p.ID) != "" && !r.isBad(id) {
			r.errorAt(id, nil, "duplicate profile %q", p.ID)
		}
		seen[p.ID] = true
		policies = append(policies, located[ToolPolicy]{child(loc, "tools"), p.Tools},
			located[ToolPolicy]{child(loc, "skills"), ToolPolicy{Allow: p.Skills.Allow, Deny: p.Skills.Deny}})
	}
	for _, m := range c.models() {
		if at := child(m.loc, "baseUrl"); m.v.BaseURL != "" && !r.isBad(at) {
			if err := mcpclient.CheckURL(m.v.BaseURL, true); err != nil {
				r.errorAt(at, err, "%v", err)
			}
		}
		if m.v.Audio != nil && *m.v.Audio && m.v.ResolvedProvider() == ProviderAnthropic {
			r.warn(child(m.loc, "audio"), "no effect: the anthropic API takes no audio (audio reaches the model as a note)")
		}
		r.values(m.loc, map[string]string{"apiKey": m.v.APIKey})
		r.values(child(m.loc, "headers"), m.v.Headers)
	}
	r.telemetry(c.Telemetry)
	for _, p := range policies {
		for list, patterns := range map[string][]string{"allow": p.v.Allow, "deny": p.v.Deny, "autoApprove": p.v.AutoApprove} {
			for i, pat := range patterns {
				if _, err := path.Match(pat, ""); err != nil {
					r.errorAt(child(p.loc, list, strconv.Itoa(i)), err, "bad pattern %q: %v", pat, err)
				}
			}
		}
	}
}

// telemetry checks the "telemetry" object: an http(s) endpoint, and
// headers whose values are secrets (literal ones draw a warning, whatever
// their names).
func (r *report) telemetry(t Telemetry) {
	loc := []string{"telemetry"}
	if at := child(loc, "endpoint"); t.Endpoint != "" && !r.isBad(at) {
		if err := mcpclient.CheckURL(t.Endpoint, true); err != nil {
			r.errorAt(at, err, "%v", err)
		}
	}
	for k, v := range t.Headers {
		at := child(loc, "headers", k)
		if r.isBad(at) {
			continue
		}
		if err := secrets.Check(v); err != nil {
			r.errorAt(at, err, "%v", err)
		} else if v != "" && !secrets.ContainsReference(v) {
			r.warn(at, "literal header value; the collector's headers are secrets: use a secret:// reference")
		}
	}
}

// server checks the server at loc.
func (r *report) server(loc []string, s *Server) {
	raw, _ := r.value(loc).(map[string]any)
	if strings.TrimSpace(loc[len(loc)-1]) == "" {
		r.errorAt(loc, nil, "empty server name")
	} else if err := mcpclient.CheckName(loc[len(loc)-1]); err != nil {
		r.errorAt(loc, err, "%v", err)
	}
	if typ, ok := raw["type"].(string); ok {
		mt, err := mcpservers.ParseType(typ) // the schema's enum: never an error
		if err != nil {
			r.errorAt(child(loc, "type"), err, "%v", err)
			return
		}
		if t := Transport(mt); s.Transport != "" && s.Transport != t {
			r.errorAt(loc, nil, "transport %q and type %q disagree", s.Transport, t)
		} else {
			s.Transport = t
		}
	}
	if disabled, ok := raw["disabled"].(bool); ok {
		if s.Enabled != nil && *s.Enabled == disabled {
			r.errorAt(loc, nil, "enabled and disabled disagree")
		}
		s.Enabled = ptr(!disabled)
	}

	t := s.ResolvedTransport()
	needs, ignored := "command", []string{"url", "headers", "allowInsecureHttp", "oauth"}
	if t != TransportStdio {
		needs, ignored = "url", []string{"command", "args", "env", "cwd"}
	}
	switch {
	case t == TransportStdio && strings.TrimSpace(s.Command) == "", t != TransportStdio && s.URL == "":
		r.errorAt(loc, nil, "transport %q requires %q", t, needs)
	case t != TransportStdio:
		if err := mcpclient.CheckURL(s.URL, s.AllowInsecureHTTP); errors.Is(err, mcpclient.ErrInsecureHTTP) {
			r.errorAt(child(loc, "url"), err, `%v ("allowInsecureHttp": true)`, err)
		} else if err != nil {
			r.errorAt(child(loc, "url"), err, "%v", err)
		}
	}
	for _, k := range ignored {
		if _, ok := raw[k]; ok {
			r.warn(child(loc, k), "ignored by transport %q", t)
		}
	}
	r.values(child(loc, "env"), s.Env)
	r.values(child(loc, "headers"), s.Headers)
	if o := s.OAuth; o != nil && t != TransportStdio {
		r.oauth(child(loc, "oauth"), o)
	}
}

// oauth checks a server's oauth settings at loc: its secrets, and the
// settings each grant needs.
func (r *report) oauth(loc []string, o *OAuth) {
	r.values(loc, map[string]string{"clientSecret": o.ClientSecret, "privateKey": o.PrivateKey, "identityAssertion": o.IdentityAssertion})
	if o.ClientMetadataURL != "" {
		if err := mcpclient.CheckURL(o.ClientMetadataURL, false); err != nil {
			r.errorAt(child(loc, "clientMetadataUrl"), err, "%v", err)
		}
	}
	switch {
	case o.GrantType == "client_credentials" && o.ClientID == "":
		r.errorAt(child(loc, "clientId"), nil, `missing (grantType "client_credentials" needs a client)`)
	case o.TokenEndpointAuthMethod == "private_key_jwt" && o.PrivateKey == "":
		r.errorAt(child(loc, "privateKey"), nil, `missing (tokenEndpointAuthMethod "private_key_jwt" signs with it)`)
	case o.IdentityAssertion != "" && (o.IDPClientID == "" || o.IDPTokenEndpoint == ""):
		r.errorAt(loc, nil, "cross-app access needs idpClientId and idpTokenEndpoint with identityAssertion")
	case o.GrantType == oauth.GrantJWTBearer && (o.WorkloadToken == nil || (o.WorkloadToken.File == "") == (len(o.WorkloadToken.Command) == 0)):
		r.errorAt(child(loc, "workloadToken"), nil, `needs "file" or "command" (one of them): grantType %q reads the workload token there`, oauth.GrantJWTBearer)
	case o.WorkloadToken != nil && o.GrantType != oauth.GrantJWTBearer:
		r.warn(child(loc, "workloadToken"), "ignored unless grantType is %q", oauth.GrantJWTBearer)
	}
}

// values checks the values of an env, headers or model object at loc: a
// malformed secret reference is an error, a literal value under a key that
// looks like a credential a warning.
func (r *report) values(loc []string, m map[string]string) {
	for k, v := range m {
		at := child(loc, k)
		if r.isBad(at) {
			continue
		}
		if err := secrets.Check(v); err != nil {
			r.errorAt(at, err, "%v", err)
		} else if v != "" && !secrets.ContainsReference(v) && secrets.LooksLikeCredential(k) {
			r.warn(at, "literal credential; use a secret:// reference")
		}
	}
}

// overrides warns about default servers defined more than once:
// agents.defaults wins over mcpServers, which wins over servers.
func (r *report) overrides(c *Config) {
	sets := c.serverSets()[:3]
	for i, set := range sets {
		for name := range set.v {
			for _, over := range sets[i+1:] {
				if _, ok := over.v[name]; ok {
					r.warn(child(set.loc, name), "overridden by %s", r.path(child(over.loc, name)))
					break
				}
			}
		}
	}
}

// value returns the value at loc in the document, or nil.
func (r *report) value(loc []string) any {
	var node any = r.doc
	for _, k := range loc {
		switch n := node.(type) {
		case map[string]any:
			node = n[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(n) {
				return nil
			}
			node = n[i]
		default:
			return nil
		}
	}
	return node
}
