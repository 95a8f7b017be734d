package config_test

import (
	"encoding/json"
	"errors"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/mcpclient"
)

const example = `{
  "model": {"baseUrl": "http://127.0.0.1:11434/v1", "model": "qwen3", "apiKey": "secret://env/OPENAI_API_KEY", "headers": {"X-Title": "acpgate"}},
  "limits": {"maxServers": 10, "maxTools": 100, "callsPerMinute": 100, "maxResultBytes": 102400, "maxStoredResultBytes": 1048576, "startupBudget": 5000, "connectTimeout": 30000, "callTimeout": 60000},
  "agents": {
    "defaults": {
      "mcp": {"servers": {"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "secret://env/GH_TOKEN"}}}},
      "tools": {"allow": ["*"], "deny": ["mcp__github__delete_*"], "autoApprove": ["mcp__github__get_*"]}
    },
    "list": [
      {"id": "work", "model": {"model": "gpt-4.1"}, "mcp": {"servers": {"tavily": {"transport": "sse", "url": "https://mcp.tavily.com/sse", "headers": {"Authorization": "Bearer ${TAVILY_KEY}"}}}}, "tools": {"deny": ["mcp__github__*"]}}
    ]
  },
  "mcpServers": {"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "env": {}}, "remote": {"url": "http://127.0.0.1:9000/mcp", "headers": {}, "type": "http"}}
}`

func intp(v int) *int    { return &v }
func boolp(v bool) *bool { return &v }

func mustParse(t *testing.T, src string) (*config.Config, []config.Warning) {
	t.Helper()
	c, w, err := config.Parse([]byte(src), "config.json")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c, w
}

func TestParseExample(t *testing.T) {
	c, warnings := mustParse(t, example)
	if len(warnings) != 0 {
		t.Errorf("warnings: %v", warnings)
	}
	want := &config.Config{
		Model: config.Model{BaseURL: "http://127.0.0.1:11434/v1", Model: "qwen3", APIKey: "secret://env/OPENAI_API_KEY", Headers: map[string]string{"X-Title": "acpgate"}},
		Limits: config.Limits{MaxServers: intp(10), MaxTools: intp(100), CallsPerMinute: intp(100), MaxResultBytes: intp(102400),
			MaxStoredResultBytes: intp(1048576), StartupBudget: intp(5000), ConnectTimeout: intp(30000), CallTimeout: intp(60000)},
		Agents: config.Agents{
			Defaults: config.Defaults{
				MCP: config.MCP{Servers: map[string]config.Server{"github": {Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-github"},
					Env: map[string]string{"GITHUB_TOKEN": "secret://env/GH_TOKEN"}}}},
				Tools: config.ToolPolicy{Allow: []string{"*"}, Deny: []string{"mcp__github__delete_*"}, AutoApprove: []string{"mcp__github__get_*"}},
			},
			List: []config.Profile{{
				ID:    "work",
				Model: config.Model{Model: "gpt-4.1"},
				MCP: config.MCP{Servers: map[string]config.Server{"tavily": {Transport: config.TransportSSE, URL: "https://mcp.tavily.com/sse",
					Headers: map[string]string{"Authorization": "Bearer ${TAVILY_KEY}"}}}},
				Tools: config.ToolPolicy{Deny: []string{"mcp__github__*"}},
			}},
		},
		MCPServers: map[string]config.Server{
			"fs":     {Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp"}, Env: map[string]string{}},
			"remote": {Transport: config.TransportHTTP, URL: "http://127.0.0.1:9000/mcp", Headers: map[string]string{}},
		},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got\n%s\nwant\n%s", c.JSON(), want.JSON())
	}
	if got := c.Profiles(); !slices.Equal(got, []string{"work"}) {
		t.Errorf("Profiles() = %v", got)
	}

	// JSON round-trips.
	again, _ := mustParse(t, string(c.JSON()))
	if !reflect.DeepEqual(again, c) {
		t.Errorf("JSON does not round-trip:\n%s", c.JSON())
	}
	if !json.Valid(c.JSON()) || !slices.Equal(c.JSON(), c.JSON()) {
		t.Error("JSON: invalid or unstable")
	}
}

func TestValidationErrors(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string // substrings of the error, in this order
	}{
		{"sse without url", `{"agents": {"list": [{"id": "a"}, {"id": "b", "mcp": {"servers": {"tavily": {"transport": "sse"}}}}]}}`,
			[]string{`agents.list[1].mcp.servers.tavily: transport "sse" requires "url"`}},
		{"stdio without command", `{"agents": {"defaults": {"mcp": {"servers": {"github": {"comand": "npx"}}}}}}`,
			[]string{`agents.defaults.mcp.servers.github: transport "stdio" requires "command"`}},
		{"server name with a newline", `{"mcpServers": {"x\n# SYSTEM": {"command": "c"}}}`,
			[]string{`mcpServers["x\n# SYSTEM"]: invalid MCP server name "x\n# SYSTEM": character 2 is U+000A`}},
		{"zero timeout", `{"mcpServers": {"x": {"command": "c", "timeout": 0}}}`,
			[]string{`mcpServers.x.timeout: must be a positive number of milliseconds`}},
		{"negative toolTimeout", `{"mcpServers": {"x": {"command": "c", "toolTimeout": -5}}}`,
			[]string{`mcpServers.x.toolTimeout: must be a positive number of milliseconds`}},
		{"missing id", `{"agents": {"list": [{"model": {"model": "m"}}]}}`,
			[]string{`agents.list[0].id: missing`}},
		{"empty id", `{"agents": {"list": [{"id": ""}]}}`,
			[]string{`agents.list[0].id: missing`}},
		{"bad skill pattern", `{"agents": {"list": [{"id": "p", "skills": {"deny": ["[x"]}}]}}`,
			[]string{`agents.list[0].skills.deny[0]: bad pattern "[x"`}},
		{"relative skills folder", `{"skills": {"dirs": ["/ok", "rel/skills"]}}`,
			[]string{`skills.dirs[1]: a folder of skills must be an absolute path, got "rel/skills"`}},
		{"duplicate id", `{"agents": {"list": [{"id": "work"}, {"id": "home"}, {"id": "work"}]}}`,
			[]string{`agents.list[2].id: duplicate profile "work"`}},
		{"bad pattern", `{"agents": {"defaults": {"tools": {"deny": ["["]}}}}`,
			[]string{`agents.defaults.tools.deny[0]: bad pattern "[": syntax error in pattern`}},
		{"maxTools zero", `{"limits": {"maxTools": 0}}`, []string{`limits.maxTools: must be positive`}},
		{"workspaceTools", `{"workspaceTools": "remote"}`, []string{`workspaceTools: unknown workspaceTools "remote" (want client, local or off)`}},
		{"maxStoredResultBytes zero", `{"limits": {"maxStoredResultBytes": 0}}`, []string{`limits.maxStoredResultBytes: must be positive`}},
		{"maxStoredResultBytes text", `{"limits": {"maxStoredResultBytes": "1MB"}}`, []string{`limits.maxStoredResultBytes: want an integer`}},
		{"negative calls", `{"limits": {"callsPerMinute": -1}}`, []string{`limits.callsPerMinute: must not be negative`}},
		{"zero budget", `{"limits": {"startupBudget": 0}}`, []string{`limits.startupBudget: must be a positive number of milliseconds`}},
		{"negative grace", `{"limits": {"startupGrace": -1}}`, []string{`limits.startupGrace: must not be negative (0 means off)`}},
		{"sampling mode", `{"sampling": "maybe"}`, []string{`sampling: unknown sampling "maybe" (want ask, allow or deny)`}},
		{"server sampling mode", `{"mcpServers": {"x": {"command": "c", "sampling": true}}}`, []string{`mcpServers.x.sampling: want a string`}},
		{"samplingMaxTokens zero", `{"limits": {"samplingMaxTokens": 0}}`, []string{`limits.samplingMaxTokens: must be positive`}},
		{"negative samplingPerMinute", `{"mcpServers": {"x": {"command": "c", "samplingPerMinute": -1}}}`, []string{`mcpServers.x.samplingPerMinute: must not be negative (0 means off)`}},
		{"non-integer", `{"limits": {"maxServers": 1.5}}`, []string{`limits.maxServers: want an integer`}},
		{"negative compactAt", `{"limits": {"compactAt": -5}}`, []string{`limits.compactAt: must be a percentage from 0 to 100 (0 means off)`}},
		{"compactAt over 100", `{"limits": {"compactAt": 120}}`, []string{`limits.compactAt: must be at most 100`}},
		{"syntax", "{\n  \"mcpServers\": {\n    \"fs\": {\"command\": \"x\",}\n  }\n}",
			[]string{`config.json:3:27: invalid character '}' looking for beginning of object key string`}},
		{"truncated", "{\"mcpServers\": {", []string{`config.json:1:17: unexpected end of JSON input`}},
		{"trailing data", `{"model": {}} x`, []string{`config.json:1:15: invalid character 'x' after top-level value`}},
		{"empty", "  \n", []string{`config.json: empty file`}},
		{"not an object", `[1]`, []string{`config.json: want a JSON object at the top level`}},
		{"args type", `{"mcpServers": {"fs": {"command": "x", "args": "-y"}}}`, []string{`mcpServers.fs.args: want an array of strings`}},
		{"args element", `{"mcpServers": {"fs": {"command": "x", "args": ["a", 1]}}}`, []string{`mcpServers.fs.args[1]: want a string`}},
		{"env value", `{"mcpServers": {"fs": {"command": "x", "env": {"PORT": 8080}}}}`, []string{`mcpServers.fs.env.PORT: want a string`}},
		{"env type", `{"mcpServers": {"fs": {"command": "x", "env": ["A=1"]}}}`, []string{`mcpServers.fs.env: want an object of strings`}},
		{"bool type", `{"mcpServers": {"fs": {"command": "x", "trusted": "yes"}}}`, []string{`mcpServers.fs.trusted: want true or false`}},
		{"server type", `{"mcpServers": {"fs": "npx"}}`, []string{`mcpServers.fs: want an object`}},
		{"list type", `{"agents": {"list": {"id": "a"}}}`, []string{`agents.list: want an array of profiles`}},
		{"transport and type disagree", `{"mcpServers": {"r": {"transport": "stdio", "type": "http", "command": "x", "url": "http://127.0.0.1/"}}}`,
			[]string{`mcpServers.r: transport "stdio" and type "http" disagree`}},
		{"unknown transport", `{"mcpServers": {"r": {"transport": "ws", "url": "http://127.0.0.1/"}}}`,
			[]string{`mcpServers.r.transport: unknown transport "ws" (want stdio, http or sse)`}},
		{"unknown type", `{"servers": {"r": {"type": "websocket", "url": "http://127.0.0.1/"}}}`,
			[]string{`servers.r.type: unknown type "websocket"`}},
		{"streamable-http only as type", `{"mcpServers": {"r": {"transport": "streamable-http", "url": "http://127.0.0.1/"}}}`,
			[]string{`mcpServers.r.transport: unknown transport "streamable-http"`}},
		{"negative maxRestarts", `{"mcpServers": {"x": {"command": "c", "maxRestarts": -1}}}`, []string{`mcpServers.x.maxRestarts: must not be negative`}},
		{"toolPrefix", `{"mcpServers": {"x": {"command": "c", "toolPrefix": "a.b"}}}`, []string{`mcpServers.x.toolPrefix: bad prefix "a.b"`}},
		{"url scheme", `{"mcpServers": {"x": {"url": "ftp://h/"}}}`, []string{`mcpServers.x.url: URL "ftp://h/": scheme must be http or https`}},
		{"insecure http", `{"mcpServers": {"x": {"url": "http://example.com/mcp"}}}`, []string{`mcpServers.x.url: URL "http://example.com/mcp": plain http is only allowed to a loopback host`}},
		{"model baseUrl", `{"model": {"baseUrl": "localhost:11434"}}`, []string{`model.baseUrl: URL "localhost:11434": scheme must be http or https`}},
		{"odd key", `{"mcpServers": {"my.server": {}}}`, []string{`mcpServers["my.server"]: transport "stdio" requires "command"`}},
		{"all errors in document order",
			`{"limits": {"maxTools": 0, "maxServers": -1}, "agents": {"list": [{}, {"id": "a", "mcp": {"servers": {"s": {"transport": "sse"}}}}]}, "mcpServers": {"x": {"command": "c", "timeout": 0}}}`,
			[]string{
				"limits.maxTools: must be positive\n",
				"limits.maxServers: must be positive\n",
				"agents.list[0].id: missing\n",
				`agents.list[1].mcp.servers.s: transport "sse" requires "url"` + "\n",
				"mcpServers.x.timeout: must be a positive number of milliseconds",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, err := config.Parse([]byte(tt.src), "config.json")
			if err == nil {
				t.Fatalf("no error; config:\n%s", c.JSON())
			}
			if c != nil {
				t.Error("a config with an error")
			}
			msg, at := err.Error(), 0
			for _, w := range tt.want {
				i := strings.Index(msg[at:], w)
				if i < 0 {
					t.Fatalf("error %q\nlacks (in order) %q", msg, w)
				}
				at += i + len(w)
			}
		})
	}
}

func TestFieldError(t *testing.T) {
	_, _, err := config.Parse([]byte(`{"agents": {"defaults": {"tools": {"allow": ["a", "[x"]}}}}`), "c.json")
	var fe *config.FieldError
	if !errors.As(err, &fe) || fe.Path != "agents.defaults.tools.allow[1]" {
		t.Fatalf("FieldError: %#v", err)
	}
	if !errors.Is(err, path.ErrBadPattern) {
		t.Errorf("%v does not wrap ErrBadPattern", err)
	}
}

// TestURLRule: server and model URLs follow mcpclient.CheckURL, the one
// URL rule; the errors wrap its sentinels at the URL's path.
func TestURLRule(t *testing.T) {
	for _, tc := range []struct {
		doc, path string
		want      error
	}{
		{`{"mcpServers": {"x": {"url": "http://example.com/mcp"}}}`, "mcpServers.x.url", mcpclient.ErrInsecureHTTP},
		{`{"servers": {"x": {"type": "sse", "url": "ftp://h/"}}}`, "servers.x.url", mcpclient.ErrURLScheme},
		{`{"mcpServers": {"x": {"url": "https:///mcp"}}}`, "mcpServers.x.url", mcpclient.ErrURLHost},
		{`{"model": {"baseUrl": "localhost:11434"}}`, "model.baseUrl", mcpclient.ErrURLScheme},
	} {
		_, _, err := config.Parse([]byte(tc.doc), "c.json")
		var fe *config.FieldError
		if !errors.As(err, &fe) || fe.Path != tc.path || !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %s wrapping %v", tc.doc, err, tc.path, tc.want)
		}
	}
	for _, doc := range []string{
		`{"mcpServers": {"x": {"url": "http://example.com/mcp", "allowInsecureHttp": true}}}`,
		`{"mcpServers": {"x": {"url": "http://[::1]:9/mcp"}}}`,
		`{"model": {"baseUrl": "http://example.com/v1"}}`,
	} {
		if _, _, err := config.Parse([]byte(doc), "c.json"); err != nil {
			t.Errorf("%s: %v", doc, err)
		}
	}
}

func TestWarnings(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"unknown keys at every level", `{"modle": 1, "model": {"name": "x"}, "limits": {"maxTool": 1},
			"agents": {"default": {}, "defaults": {"mcp": {"servers": {"github": {"command": "npx", "comand": "npx"}}, "x": 1}, "tools": {"ask": []}},
			           "list": [{"id": "a", "limits": {}}]},
			"mcpServers": {"fs": {"command": "x", "envFile": ".env"}}, "$schema": "https://example.com/schema.json"}`,
			[]string{
				"modle: unknown key",
				"model.name: unknown key",
				"limits.maxTool: unknown key",
				"agents.default: unknown key",
				"agents.defaults.mcp.servers.github.comand: unknown key",
				"agents.defaults.mcp.x: unknown key",
				"agents.defaults.tools.ask: unknown key",
				"agents.list[0].limits: unknown key",
				"mcpServers.fs.envFile: unknown key",
			}},
		{"retired startupGrace", `{"limits": {"startupGrace": 1000}}`,
			[]string{"limits.startupGrace: retired: no effect (session/new answers at once; prompts wait for servers within limits.startupBudget)"}},
		{"literal credentials", `{"model": {"apiKey": "sk-123", "headers": {"X-Api-Key": "abc", "X-Title": "t"}},
			"mcpServers": {"gh": {"command": "x", "env": {"GITHUB_TOKEN": "ghp_1", "PATH": "/bin", "DB_PASSWORD": "secret://env/DB", "MY_SECRET": "${S}", "AUTH_KEY": "pre${S}", "EMPTY_TOKEN": ""}},
			               "r": {"url": "https://h/", "headers": {"Authorization": "Bearer abc"}}},
			"agents": {"list": [{"id": "p", "model": {"apiKey": "lit"}}]}}`,
			[]string{
				"model.apiKey: literal credential; use a secret:// reference",
				"model.headers.X-Api-Key: literal credential; use a secret:// reference",
				"mcpServers.gh.env.GITHUB_TOKEN: literal credential; use a secret:// reference",
				"mcpServers.r.headers.Authorization: literal credential; use a secret:// reference",
				"agents.list[0].model.apiKey: literal credential; use a secret:// reference",
			}},
		{"duplicate keys", `{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}`,
			[]string{`mcpServers.a: duplicate key; the last one is used`}},
		{"default servers defined twice", `{"servers": {"a": {"command": "x"}, "b": {"command": "x"}}, "mcpServers": {"a": {"command": "y"}, "c": {"command": "y"}},
			"agents": {"defaults": {"mcp": {"servers": {"b": {"command": "z"}, "c": {"command": "z"}}}}}}`,
			[]string{
				"servers.a: overridden by mcpServers.a",
				"servers.b: overridden by agents.defaults.mcp.servers.b",
				"mcpServers.c: overridden by agents.defaults.mcp.servers.c",
			}},
		{"ignored fields", `{"mcpServers": {"a": {"command": "x", "url": "https://h/"}, "b": {"type": "http", "url": "https://h/", "command": "x", "env": {"A": "1"}}}}`,
			[]string{
				`mcpServers.a.url: ignored by transport "stdio"`,
				`mcpServers.b.command: ignored by transport "http"`,
				`mcpServers.b.env: ignored by transport "http"`,
			}},
		{"none", example, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, warnings := mustParse(t, tt.src)
			var got []string
			for _, w := range warnings {
				got = append(got, w.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestWarningsWithErrors(t *testing.T) {
	_, warnings, err := config.Parse([]byte(`{"mcpServers": {"x": {"comand": "y"}}}`), "c.json")
	if err == nil || len(warnings) != 1 || warnings[0].String() != "mcpServers.x.comand: unknown key" {
		t.Errorf("err %v, warnings %v", err, warnings)
	}
}

func TestServerFormats(t *testing.T) {
	tests := []struct {
		name, src string
		want      config.NamedServer
	}{
		{"Claude Desktop stdio", `{"mcpServers": {"s": {"command": "npx", "args": ["-y", "pkg"], "env": {"A": "1"}}}}`,
			config.NamedServer{Name: "s", Server: config.Server{Transport: config.TransportStdio, Command: "npx", Args: []string{"-y", "pkg"}, Env: map[string]string{"A": "1"}}}},
		{"url only", `{"mcpServers": {"s": {"url": "https://h/mcp"}}}`,
			config.NamedServer{Name: "s", Server: config.Server{Transport: config.TransportHTTP, URL: "https://h/mcp"}}},
		{"type http", `{"mcpServers": {"s": {"type": "http", "url": "https://h/mcp"}}}`,
			config.NamedServer{Name: "s", Server: config.Server{Transport: config.TransportHTTP, URL: "https://h/mcp"}}},
		{"type sse", `{"mcpServers": {"s": {"type": "sse", "url": "https://h/sse"}}}`,
			config.NamedServer{Name: "s", Server: config.Server{Transport: config.TransportSSE, URL: "https://h/sse"}}},
		{"type streamable-http", `{"mcpServers": {"s": {"type": "streamable-http", "url": "https://h/mcp"}}}`,
			config.NamedServer{Name: "s", Server: config.Server{Transport: config.TransportHTTP, URL: "https://h/mcp"}}},
		{"type streamableHttp", `{"mcpServers": {"s": {"type": "streamableHttp", "url": "https://h/mcp"}}}`,
			config.NamedServer{Name: "s", Server: config.Server{Transport: config.TransportHTTP, URL: "https://h/mcp"}}},
		{"type and transport agree", `{"mcpServers": {"s": {"type": "streamable-http", "transport": "http", "url": "https://h/mcp"}}}`,
			config.NamedServer{Name: "s", Server: config.Server{Transport: config.TransportHTTP, URL: "https://h/mcp"}}},
		{"VS Code servers", `{"servers": {"s": {"type": "stdio", "command": "node", "args": ["x.js"]}}}`,
			config.NamedServer{Name: "s", Server: config.Server{Transport: config.TransportStdio, Command: "node", Args: []string{"x.js"}}}},
		{"http with insecure", `{"mcpServers": {"s": {"url": "http://example.com/", "allowInsecureHttp": true}}}`,
			config.NamedServer{Name: "s", Server: config.Server{Transport: config.TransportHTTP, URL: "http://example.com/", AllowInsecureHTTP: true}}},
		{"every field", `{"mcpServers": {"s": {"enabled": false, "transport": "stdio", "command": "c", "cwd": "/w", "timeout": 100, "toolTimeout": 200,
			"restartOnCrash": false, "maxRestarts": 0, "toolPrefix": "gh-1_x", "trusted": true, "shared": true}}}`,
			config.NamedServer{Name: "s", Server: config.Server{Enabled: boolp(false), Transport: config.TransportStdio, Command: "c", Cwd: "/w",
				Timeout: 100, ToolTimeout: 200, RestartOnCrash: boolp(false), MaxRestarts: intp(0), ToolPrefix: "gh-1_x", Trusted: true, Shared: true}}},
		{"Cline disabled", `{"mcpServers": {"s": {"command": "c", "disabled": true}}}`,
			config.NamedServer{Name: "s", Server: config.Server{Enabled: boolp(false), Transport: config.TransportStdio, Command: "c"}}},
		{"nulls are absent", `{"mcpServers": {"s": {"command": "c", "args": null, "env": null, "timeout": null}}}`,
			config.NamedServer{Name: "s", Server: config.Server{Transport: config.TransportStdio, Command: "c"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := mustParse(t, tt.src)
			eff, err := c.Effective("")
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if want.Enabled == nil {
				want.Enabled = boolp(true)
			}
			if want.RestartOnCrash == nil {
				want.RestartOnCrash = boolp(true)
			}
			if want.MaxRestarts == nil {
				want.MaxRestarts = intp(config.DefaultMaxRestarts)
			}
			if len(eff.Servers) != 1 || !reflect.DeepEqual(eff.Servers[0], want) {
				t.Errorf("got %+v\nwant %+v", eff.Servers, want)
			}
			if eff.Servers[0].IsEnabled() != *want.Enabled {
				t.Error("IsEnabled")
			}
		})
	}
}

func TestEffective(t *testing.T) {
	const src = `{
	  "model": {"baseUrl": "http://127.0.0.1:11434/v1", "model": "qwen3", "apiKey": "secret://env/K", "headers": {"X-Title": "acpgate"}},
	  "limits": {"callsPerMinute": 0},
	  "instructions": "Answer briefly.",
	  "servers": {"vs": {"command": "vs"}},
	  "mcpServers": {"fs": {"command": "fs"}, "shadowed": {"command": "top"}},
	  "agents": {
	    "defaults": {
	      "mcp": {"servers": {"github": {"command": "gh", "env": {"A": "1"}, "trusted": true}, "shadowed": {"command": "defaults"}}},
	      "tools": {"allow": ["mcp__*"], "deny": ["mcp__github__delete_*"], "autoApprove": ["mcp__github__get_*"]}
	    },
	    "list": [
	      {"id": "work", "model": {"model": "gpt-4.1", "headers": {"X-Other": "o"}},
	       "mcp": {"servers": {"github": {"url": "https://gh/mcp"}, "tavily": {"transport": "sse", "url": "https://t/sse"}}},
	       "tools": {"deny": ["mcp__github__*"], "autoApprove": []}, "instructions": "Work in English."},
	      {"id": "home", "model": {"apiKey": "secret://env/HOME_KEY"}, "tools": {"allow": []}}
	    ]
	  }
	}`
	c, _ := mustParse(t, src)
	type server struct {
		name, command, url string
		transport          config.Transport
	}
	tests := []struct {
		profile string
		servers []server
		tools   config.ToolPolicy
		model   config.Model
	}{
		{"", []server{
			{"fs", "fs", "", "stdio"}, {"github", "gh", "", "stdio"}, {"shadowed", "defaults", "", "stdio"}, {"vs", "vs", "", "stdio"},
		}, config.ToolPolicy{Allow: []string{"mcp__*"}, Deny: []string{"mcp__github__delete_*"}, AutoApprove: []string{"mcp__github__get_*"}},
			config.Model{BaseURL: "http://127.0.0.1:11434/v1", Model: "qwen3", APIKey: "secret://env/K", Headers: map[string]string{"X-Title": "acpgate"}}},
		{"work", []server{
			{"fs", "fs", "", "stdio"}, {"github", "", "https://gh/mcp", "http"}, {"shadowed", "defaults", "", "stdio"}, {"tavily", "", "https://t/sse", "sse"}, {"vs", "vs", "", "stdio"},
		}, config.ToolPolicy{Allow: []string{"mcp__*"}, Deny: []string{"mcp__github__*"}, AutoApprove: []string{}},
			config.Model{BaseURL: "http://127.0.0.1:11434/v1", Model: "gpt-4.1", APIKey: "secret://env/K", Headers: map[string]string{"X-Other": "o"}}},
		{"home", []server{
			{"fs", "fs", "", "stdio"}, {"github", "gh", "", "stdio"}, {"shadowed", "defaults", "", "stdio"}, {"vs", "vs", "", "stdio"},
		}, config.ToolPolicy{Allow: []string{}, Deny: []string{"mcp__github__delete_*"}, AutoApprove: []string{"mcp__github__get_*"}},
			config.Model{BaseURL: "http://127.0.0.1:11434/v1", Model: "qwen3", APIKey: "secret://env/HOME_KEY", Headers: map[string]string{"X-Title": "acpgate"}}},
	}
	for _, tt := range tests {
		t.Run(tt.profile, func(t *testing.T) {
			eff, err := c.Effective(tt.profile)
			if err != nil {
				t.Fatal(err)
			}
			var got []server
			for _, s := range eff.Servers {
				got = append(got, server{s.Name, s.Command, s.URL, s.Transport})
			}
			if !slices.Equal(got, tt.servers) {
				t.Errorf("servers %v, want %v", got, tt.servers)
			}
			if want := map[string]string{"work": "Work in English."}[tt.profile]; eff.Instructions != "Answer briefly." || eff.ProfileInstructions != want {
				t.Errorf("instructions %q, %q", eff.Instructions, eff.ProfileInstructions)
			}
			if !reflect.DeepEqual(eff.Tools, tt.tools) {
				t.Errorf("tools %#v, want %#v", eff.Tools, tt.tools)
			}
			if !reflect.DeepEqual(eff.Model, tt.model) {
				t.Errorf("model %#v, want %#v", eff.Model, tt.model)
			}
			if eff.Limits.CallsPerMinute == nil || *eff.Limits.CallsPerMinute != 0 || eff.Limits.MaxTools != nil {
				t.Errorf("limits %+v", eff.Limits)
			}
			if eff.Profile != tt.profile {
				t.Errorf("Profile %q", eff.Profile)
			}
		})
	}

	// A profile's server replaces the default entirely: nothing of the
	// default github server (env, trusted) survives.
	eff, _ := c.Effective("work")
	for _, s := range eff.Servers {
		if s.Name == "github" && (s.Env != nil || s.Trusted) {
			t.Errorf("github server merged field by field: %+v", s)
		}
	}

	// Effective shares no memory with the Config.
	eff, _ = c.Effective("")
	eff.Servers[1].Env["A"] = "changed"
	eff.Tools.Deny[0] = "changed"
	eff.Model.Headers["X-Title"] = "changed"
	*eff.Limits.CallsPerMinute = 7
	if again, _ := c.Effective(""); again.Servers[1].Env["A"] != "1" || again.Tools.Deny[0] != "mcp__github__delete_*" ||
		again.Model.Headers["X-Title"] != "acpgate" || *again.Limits.CallsPerMinute != 0 {
		t.Error("Effective shares memory with the Config")
	}
}

func TestUnknownProfile(t *testing.T) {
	tests := []struct {
		name, src, profile, want string
	}{
		{"some profiles", `{"agents": {"list": [{"id": "work"}, {"id": "home"}]}}`, "nope", `unknown profile "nope" (known: work, home)`},
		{"no profiles", `{}`, "work", `unknown profile "work" (none are defined)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := mustParse(t, tt.src)
			_, err := c.Effective(tt.profile)
			if !errors.Is(err, config.ErrUnknownProfile) || err.Error() != tt.want {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
	var nilConfig *config.Config
	if eff, err := nilConfig.Effective(""); err != nil || len(eff.Servers) != 0 {
		t.Errorf("nil config: %v %v", eff, err)
	}
}

func TestPolicy(t *testing.T) {
	tests := []struct {
		name     string
		policy   config.ToolPolicy
		tool     string
		allowed  bool
		approved bool
	}{
		{"empty allows all", config.ToolPolicy{}, "mcp__x__y", true, false},
		{"empty non-nil allow allows all", config.ToolPolicy{Allow: []string{}}, "mcp__x__y", true, false},
		{"allow glob", config.ToolPolicy{Allow: []string{"mcp__github__*"}}, "mcp__github__get_me", true, false},
		{"not allowed", config.ToolPolicy{Allow: []string{"mcp__github__*"}}, "mcp__fs__read", false, false},
		{"whole name", config.ToolPolicy{Allow: []string{"mcp__git"}}, "mcp__github__x", false, false},
		{"deny wins", config.ToolPolicy{Allow: []string{"*"}, Deny: []string{"mcp__github__delete_*"}}, "mcp__github__delete_repo", false, false},
		{"deny other", config.ToolPolicy{Allow: []string{"*"}, Deny: []string{"mcp__github__delete_*"}}, "mcp__github__get_repo", true, false},
		{"question mark", config.ToolPolicy{Allow: []string{"mcp__fs__read?"}}, "mcp__fs__read1", true, false},
		{"question mark is one character", config.ToolPolicy{Allow: []string{"mcp__fs__read?"}}, "mcp__fs__read12", false, false},
		{"auto-approve", config.ToolPolicy{AutoApprove: []string{"mcp__github__get_*"}}, "mcp__github__get_me", true, true},
		{"auto-approve other", config.ToolPolicy{AutoApprove: []string{"mcp__github__get_*"}}, "mcp__github__put", true, false},
		{"denied is never auto-approved", config.ToolPolicy{Deny: []string{"*"}, AutoApprove: []string{"*"}}, "mcp__a__b", false, false},
		{"not allowed is never auto-approved", config.ToolPolicy{Allow: []string{"x"}, AutoApprove: []string{"*"}}, "mcp__a__b", false, false},
		{"bad pattern matches nothing", config.ToolPolicy{Deny: []string{"["}}, "[", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.policy.Allowed(tt.tool); got != tt.allowed {
				t.Errorf("Allowed(%q) = %v", tt.tool, got)
			}
			if got := tt.policy.AutoApproved(tt.tool); got != tt.approved {
				t.Errorf("AutoApproved(%q) = %v", tt.tool, got)
			}
		})
	}
}

func TestRedacted(t *testing.T) {
	c, _ := mustParse(t, `{
	  "model": {"apiKey": "sk-literal", "headers": {"X-Title": "acpgate", "X-Ref": "secret://env/H"}},
	  "mcpServers": {"gh": {"command": "gh", "args": ["--token-file", "/t"], "env": {"GITHUB_TOKEN": "ghp_literal", "REF": "secret://env/GH", "VAR": "${GH}", "EMPTY": ""}}},
	  "servers": {"vs": {"url": "https://h/", "headers": {"Authorization": "Bearer ${KEY}"}}},
	  "agents": {"defaults": {"mcp": {"servers": {"d": {"command": "d", "env": {"LEVEL": "one"}}}}},
	             "list": [{"id": "p", "model": {"apiKey": "${KEY}"}, "mcp": {"servers": {"ps": {"url": "https://p/", "headers": {"X-Key": "lit"}}}}}]}
	}`)
	before := string(c.JSON())
	r := c.Redacted()
	if string(c.JSON()) != before {
		t.Error("Redacted modified the Config")
	}
	checks := []struct{ name, got, want string }{
		{"model.apiKey", r.Model.APIKey, "[REDACTED]"},
		{"model.headers.X-Title", r.Model.Headers["X-Title"], "[REDACTED]"},
		{"model.headers.X-Ref", r.Model.Headers["X-Ref"], "secret://env/H"},
		{"literal env", r.MCPServers["gh"].Env["GITHUB_TOKEN"], "[REDACTED]"},
		{"secret env", r.MCPServers["gh"].Env["REF"], "secret://env/GH"},
		{"pure var env", r.MCPServers["gh"].Env["VAR"], "${GH}"},
		{"empty env", r.MCPServers["gh"].Env["EMPTY"], ""},
		{"args untouched", r.MCPServers["gh"].Args[1], "/t"},
		{"var among text", r.Servers["vs"].Headers["Authorization"], "[REDACTED]"},
		{"defaults env", r.Agents.Defaults.MCP.Servers["d"].Env["LEVEL"], "[REDACTED]"},
		{"profile apiKey", r.Agents.List[0].Model.APIKey, "${KEY}"},
		{"profile header", r.Agents.List[0].MCP.Servers["ps"].Headers["X-Key"], "[REDACTED]"},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s = %q, want %q", ck.name, ck.got, ck.want)
		}
	}
	out := string(r.JSON())
	for _, secret := range []string{"sk-literal", "ghp_literal", "lit\""} {
		if strings.Contains(out, secret) {
			t.Errorf("JSON of Redacted holds %q:\n%s", secret, out)
		}
	}
	if !strings.Contains(out, `"apiKey": "[REDACTED]"`) {
		t.Errorf("JSON:\n%s", out)
	}
}

func TestJSONStable(t *testing.T) {
	c, _ := mustParse(t, `{"mcpServers": {"b": {"command": "b", "env": {"Z": "1", "A": "2"}}, "a": {"url": "https://h/?a=1&b=<2>"}}, "limits": {"callsPerMinute": 0}}`)
	want := `{
  "limits": {
    "callsPerMinute": 0
  },
  "mcpServers": {
    "a": {
      "url": "https://h/?a=1&b=<2>"
    },
    "b": {
      "command": "b",
      "env": {
        "A": "2",
        "Z": "1"
      }
    }
  }
}`
	if got := string(c.JSON()); got != want {
		t.Errorf("JSON:\n%s\nwant:\n%s", got, want)
	}
	var nilConfig *config.Config
	if got := string(nilConfig.JSON()); got != "{}" {
		t.Errorf("nil JSON %q", got)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	if err := os.WriteFile(good, []byte(`{"mcpServers": {"fs": {"command": "x", "comand": "y"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{\n  \"model\": nope\n}"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.json")
	tests := []struct {
		name      string
		path      string
		mustExist bool
		servers   int
		warnings  int
		err       string
	}{
		{"good", good, true, 1, 1, ""},
		{"missing, optional", missing, false, 0, 0, ""},
		{"missing, required", missing, true, 0, 0, missing},
		{"syntax error names the file", bad, false, 0, 0, bad + ":2:13: invalid character 'o' in literal null (expecting 'u')"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, warnings, err := config.Load(tt.path, tt.mustExist)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(c.MCPServers) != tt.servers || len(warnings) != tt.warnings {
				t.Errorf("servers %d, warnings %v", len(c.MCPServers), warnings)
			}
		})
	}
}

func TestDefaultPath(t *testing.T) {
	home := t.TempDir()
	tests := []struct{ xdg, want string }{
		{"/xdg", "/xdg/acpgate/config.json"},
		{"relative/xdg", filepath.Join(home, ".config", "acpgate", "config.json")},
		{"", filepath.Join(home, ".config", "acpgate", "config.json")},
	}
	for _, tt := range tests {
		t.Run(tt.xdg, func(t *testing.T) {
			t.Setenv("HOME", home)
			t.Setenv("XDG_CONFIG_HOME", tt.xdg)
			got, err := config.DefaultPath()
			if err != nil || got != tt.want {
				t.Errorf("DefaultPath() = %q, %v; want %q", got, err, tt.want)
			}
			if dir, err := config.Dir(); err != nil || dir != filepath.Dir(tt.want) {
				t.Errorf("Dir() = %q, %v", dir, err)
			}
		})
	}
}

// BenchmarkParse measures Parse of the example (the schema is compiled
// once, on the first Parse).
func BenchmarkParse(b *testing.B) {
	for b.Loop() {
		if _, _, err := config.Parse([]byte(example), "config.json"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestWorkspaceTools: the file's workspaceTools reaches every profile's
// Effective; the flag's values are checked alike.
func TestWorkspaceTools(t *testing.T) {
	c, _ := mustParse(t, `{"workspaceTools": "local", "agents": {"list": [{"id": "p"}]}}`)
	for _, profile := range []string{"", "p"} {
		if e, err := c.Effective(profile); err != nil || e.WorkspaceTools != config.WorkspaceLocal {
			t.Errorf("profile %q: %q %v", profile, e.WorkspaceTools, err)
		}
	}
	for _, s := range []string{"client", "local", "off"} {
		if w, err := config.ParseWorkspaceTools(s); err != nil || string(w) != s {
			t.Errorf("%s: %q %v", s, w, err)
		}
	}
	if _, err := config.ParseWorkspaceTools("remote"); err == nil {
		t.Error("remote accepted")
	}
}

// TestDocumentedExample: the example of the "Configuration file" section
// of docs/configuration.md is valid and draws no warning.
func TestDocumentedExample(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "## Configuration file")
	_, block, ok := strings.Cut(section, "```json\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("no JSON example in the configuration section of docs/configuration.md")
	}
	if _, warnings := mustParse(t, block); len(warnings) > 0 {
		t.Errorf("warnings: %v", warnings)
	}
}

// TestSkillPolicy: agents.defaults.skills and a profile's skills merge
// list by list, as tool policies do; skills.dirs is kept.
func TestSkillPolicy(t *testing.T) {
	c, _, err := config.Parse([]byte(`{"skills": {"dirs": ["/team/skills"]},
		"agents": {"defaults": {"skills": {"deny": ["docs:*"]}}, "list": [{"id": "p", "skills": {"allow": ["deploy", "docs:*"]}}]}}`), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	def, _ := c.Effective("")
	prof, _ := c.Effective("p")
	if !slices.Equal(def.SkillDirs, []string{"/team/skills"}) || !def.Skills.Allowed("deploy") || def.Skills.Allowed("docs:api") {
		t.Errorf("defaults: %+v", def)
	}
	if !prof.Skills.Allowed("deploy") || prof.Skills.Allowed("review") || prof.Skills.Allowed("docs:api") {
		t.Errorf("profile: %+v (deny is inherited and wins)", prof.Skills)
	}
}
