// Package config reads acpgate's JSON configuration file: the model, the
// limits, agent profiles with their MCP servers and tool policies, and the
// MCP servers of the Claude Desktop, Cursor and VS Code formats.
//
// # File format
//
// Every key is optional:
//
//	{
//	  "model": {"baseUrl": "http://127.0.0.1:11434/v1", "model": "qwen3",
//	            "apiKey": "secret://env/OPENAI_API_KEY", "headers": {"X-Title": "acpgate"}},
//	  "limits": {"maxServers": 10, "maxTools": 2000, "callsPerMinute": 100,
//	             "maxResultBytes": 102400, "maxStoredResultBytes": 1048576,
//	             "startupBudget": 5000, "connectTimeout": 30000, "callTimeout": 60000},
//	  "agents": {
//	    "defaults": {
//	      "mcp": {"servers": {"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
//	                                     "env": {"GITHUB_TOKEN": "secret://env/GH_TOKEN"}}}},
//	      "tools": {"allow": ["*"], "deny": ["mcp__github__delete_*"], "autoApprove": ["mcp__github__get_*"]}
//	    },
//	    "list": [
//	      {"id": "work", "model": {"model": "gpt-4.1"},
//	       "mcp": {"servers": {"tavily": {"transport": "sse", "url": "https://mcp.tavily.com/sse",
//	                                      "headers": {"Authorization": "Bearer ${TAVILY_KEY}"}}}},
//	       "tools": {"deny": ["mcp__github__*"]}}
//	    ]
//	  },
//	  "mcpServers": {"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
//	                 "remote": {"type": "http", "url": "http://127.0.0.1:9000/mcp"}}
//	}
//
// Durations (the limits startupBudget, connectTimeout and callTimeout, and
// a server's timeout and toolTimeout) are integer milliseconds. A JSON null
// is the same as an absent key. A top-level "$schema" key is ignored: it is
// there for editors, which complete and check the file against [Schema].
//
// Numbers follow one rule: an absent limit takes its default (a nil
// pointer in [Limits], in [Server].MaxRestarts); 0 means off, and only
// limits.callsPerMinute (no rate limit), limits.toolSearchThreshold (no
// tool search), limits.compactAt (no compaction before the endpoint
// refuses a request), limits.samplingPerMinute and a server's samplingPerMinute
// (no sampling rate limit) and a server's maxRestarts (never restart) can
// be off; every other limit and timeout must be positive.
//
// # Instructions
//
// "instructions", at the top level and per profile, is text for the model:
// it goes in the system prompt of every session (of the profile), before
// the user's and the project's AGENTS.md files; both are kept, the
// profile's after the top-level one.
//
// # Sampling
//
// "sampling" ("ask", the default, "allow" or "deny"), at the top level and
// per server (the server's wins), says whether an MCP server may use the
// session's model; limits.samplingMaxTokens and limits.samplingPerMinute,
// and a server's keys of the same names, bound what it may ask.
//
// # Validation
//
// [Parse] validates the file against a JSON Schema (draft 2020-12, [Schema],
// embedded from schema.json), decodes it with encoding/json and then makes
// the checks the schema cannot express, in Go: a transport's url or
// command, URL schemes (plain http only to loopback unless
// allowInsecureHttp), unique profile IDs, glob patterns and the syntax of
// secret references.
//
// The top-level "mcpServers" object (Claude Desktop, Cursor) and "servers"
// object (VS Code) hold default servers, like "agents.defaults.mcp.servers";
// when a name is defined in more than one of them, agents.defaults wins over
// mcpServers, which wins over servers, with a warning.
//
// # Servers
//
// A server object has these keys: enabled (default true; "disabled", as Cline
// writes it, is accepted as its inverse), transport ("stdio", "http" or
// "sse"; also spelled "type", which accepts "streamable-http" and
// "streamableHttp" for http), command, args, env, cwd, url, headers, timeout
// (connect timeout), toolTimeout (call timeout), restartOnCrash (default
// true), maxRestarts (default 5), toolPrefix ([A-Za-z0-9_-]+), trusted, shared
// (one instance per agent process rather than one per session),
// allowInsecureHttp, sampling, samplingMaxTokens and samplingPerMinute.
// Without a transport, a server with a url and no command is http, any
// other stdio.
//
// # Models
//
// The model object has provider ("openai", the default, or "anthropic",
// inferred for a baseUrl on api.anthropic.com; see
// [Model.ResolvedProvider]), baseUrl, model, apiKey, headers,
// contextWindow, choices (other models of the same endpoint for a
// session's model picker: ids, or objects with id, name, description,
// contextWindow and pricing; see [ModelChoice]), pricing (inputPerMTok,
// outputPerMTok, cacheWritePerMTok and cacheReadPerMTok — alias
// cachedInputPerMTok —, by default 1.25 times the input price for writes
// and, for reads, 0.1 times it for anthropic and the input price for
// openai; currency, default USD; see [Pricing]), promptCacheKey (whether
// requests carry the session as prompt_cache_key; default: to
// api.openai.com only) and, for anthropic, thinking ("adaptive" or "off")
// and thinkingBudget.
//
// The top-level "workspaceTools" ("client", the default, "local" or "off")
// says where every session's workspace tools work ([WorkspaceTools]).
//
// # Profiles
//
// [Config.Effective] merges the defaults with one profile of agents.list:
// a profile's server replaces the default server of the same name entirely,
// a tool-policy list set in the profile replaces the defaults' list, and the
// profile's model settings override the top-level ones field by field.
//
// # Secrets
//
// Values such as secret://env/NAME and ${VAR} are kept verbatim; they are
// resolved when a server starts, by package secrets, whose syntax check
// ([secrets.Check]) runs here. A literal value for
// model.apiKey, or for an env or headers key whose name looks like a
// credential (it contains token, secret, password, key or auth), draws a
// warning. [Config.Redacted] hides literal values for display.
//
// # Editing
//
// [SetModel] sets the top-level model block of a file's contents in place,
// keeping every other byte (`acpgate setup` writes the file with it).
//
// # Errors and warnings
//
// [Parse] and [Load] report every problem at once (joined with
// [errors.Join], in document order), each as a [*FieldError] naming the
// JSON path, such as
//
//	agents.list[1].mcp.servers.tavily: transport "sse" requires "url"
//
// Unknown keys, duplicate keys, literal credentials and keys a transport
// ignores are [Warning]s, not errors. A JSON syntax error names the source,
// line and column. testdata/*.golden holds the output for a file with every
// kind of error and warning.
//
// A [*Config] is not modified by any function or method of this package
// once returned; it may then be read from any number of goroutines, as long
// as no caller modifies it either.
package config
