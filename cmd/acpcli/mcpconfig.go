package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"sort"
	"strings"
	"unicode"

	acp "github.com/coder/acp-go-sdk"
)

// splitCommand splits a command line into words the way a POSIX shell would
// for simple quoting: words are separated by unquoted whitespace, single
// quotes keep everything literally, double quotes keep everything except that
// a backslash escapes `"` and `\`, and outside quotes a backslash escapes the
// next character. Variables, globs and operators are not interpreted.
func splitCommand(s string) ([]string, error) {
	var (
		words  []string
		cur    strings.Builder
		inWord bool
		quote  rune // 0, '\'' or '"'
		escape bool
	)
	for _, r := range s {
		switch {
		case escape:
			if quote == '"' && r != '"' && r != '\\' {
				cur.WriteRune('\\')
			}
			cur.WriteRune(r)
			escape = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\\':
			escape, inWord = true, true
		case quote == '"':
			if r == '"' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case unicode.IsSpace(r):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	switch {
	case escape:
		return nil, errors.New("command ends with a lone backslash")
	case quote != 0:
		return nil, fmt.Errorf("unterminated %c quote in command", quote)
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, errors.New("empty command")
	}
	return words, nil
}

// cutNamed splits a "name=value" flag argument.
func cutNamed(v, what string) (name, value string, err error) {
	name, value, ok := strings.Cut(v, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.TrimSpace(value) == "" {
		return "", "", fmt.Errorf("want name=%s, got %q", what, v)
	}
	return name, value, nil
}

// parseStdioFlag parses the value of --mcp: name='command args'.
func parseStdioFlag(v string) (acp.McpServer, error) {
	name, cmdline, err := cutNamed(v, "'command args'")
	if err != nil {
		return acp.McpServer{}, err
	}
	words, err := splitCommand(cmdline)
	if err != nil {
		return acp.McpServer{}, fmt.Errorf("server %q: %w", name, err)
	}
	return stdioServer(name, words[0], words[1:], nil), nil
}

// parseURLFlag parses the value of --mcp-http or --mcp-sse (kind "http" or
// "sse"): name=url.
func parseURLFlag(kind, v string) (acp.McpServer, error) {
	name, u, err := cutNamed(v, "url")
	if err != nil {
		return acp.McpServer{}, err
	}
	if err := checkURL(u); err != nil {
		return acp.McpServer{}, fmt.Errorf("server %q: %w", name, err)
	}
	return urlServer(kind, name, u, nil), nil
}

// checkURL accepts absolute http and https URLs.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("bad url: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("bad url %q: want an absolute http:// or https:// URL", raw)
	}
	return nil
}

// stdioServer builds a stdio entry whose args and env are never null.
func stdioServer(name, command string, args []string, env []acp.EnvVariable) acp.McpServer {
	if args == nil {
		args = []string{}
	}
	if env == nil {
		env = []acp.EnvVariable{}
	}
	return acp.McpServer{Stdio: &acp.McpServerStdio{Name: name, Command: command, Args: args, Env: env}}
}

// urlServer builds an http or sse entry whose headers are never null.
func urlServer(kind, name, u string, headers []acp.HttpHeader) acp.McpServer {
	if headers == nil {
		headers = []acp.HttpHeader{}
	}
	if kind == "sse" {
		return acp.McpServer{Sse: &acp.McpServerSseInline{Type: "sse", Name: name, Url: u, Headers: headers}}
	}
	return acp.McpServer{Http: &acp.McpServerHttpInline{Type: "http", Name: name, Url: u, Headers: headers}}
}

// serverName returns the name of any MCP server entry.
func serverName(s acp.McpServer) string {
	switch {
	case s.Stdio != nil:
		return s.Stdio.Name
	case s.Http != nil:
		return s.Http.Name
	case s.Sse != nil:
		return s.Sse.Name
	case s.Acp != nil:
		return s.Acp.Name
	}
	return ""
}

// checkDuplicates rejects two servers with the same name.
func checkDuplicates(servers []acp.McpServer) error {
	seen := make(map[string]bool, len(servers))
	for _, s := range servers {
		n := serverName(s)
		if seen[n] {
			return fmt.Errorf("MCP server name %q is used twice", n)
		}
		seen[n] = true
	}
	return nil
}

// loadMCPConfig reads an MCP configuration file: either the ACP-shaped JSON
// list that session/new takes, or an object with "mcpServers" (Claude
// Desktop, Cursor) or "servers" (VS Code) mapping names to servers.
func loadMCPConfig(path string) ([]acp.McpServer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read MCP config: %w", err)
	}
	servers, err := parseMCPConfig(data)
	if err != nil {
		return nil, fmt.Errorf("MCP config %s: %w", path, err)
	}
	return servers, nil
}

// parseMCPConfig parses the contents of an MCP configuration file; see
// loadMCPConfig.
func parseMCPConfig(data []byte) ([]acp.McpServer, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, errors.New("file is empty")
	}
	switch trimmed[0] {
	case '[':
		return parseACPList(trimmed)
	case '{':
		return parseServersObject(trimmed)
	}
	return nil, errors.New(`want a JSON list of ACP MCP servers or an object with "mcpServers" or "servers"`)
}

// acpEntry is one element of the ACP-shaped list.
type acpEntry struct {
	Type    string          `json:"type"`
	Name    string          `json:"name"`
	Command string          `json:"command"`
	Args    []string        `json:"args"`
	Env     json.RawMessage `json:"env"`
	URL     string          `json:"url"`
	Headers json.RawMessage `json:"headers"`
}

// parseACPList parses `[{"name","command","args","env"}, {"type":"http",...}]`.
func parseACPList(data []byte) ([]acp.McpServer, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("parse JSON list: %w", err)
	}
	servers := make([]acp.McpServer, 0, len(raw))
	for i, r := range raw {
		var e acpEntry
		if err := json.Unmarshal(r, &e); err != nil {
			return nil, fmt.Errorf("entry %d: want an object with name and command or url: %w", i, err)
		}
		if e.Name == "" {
			return nil, fmt.Errorf("entry %d: missing \"name\"", i)
		}
		s, err := acpEntryServer(e)
		if err != nil {
			return nil, fmt.Errorf("entry %d (%q): %w", i, e.Name, err)
		}
		servers = append(servers, s)
	}
	return servers, nil
}

// acpEntryServer converts one ACP-shaped entry.
func acpEntryServer(e acpEntry) (acp.McpServer, error) {
	switch e.Type {
	case "", "stdio":
		if e.Command == "" {
			if e.URL != "" {
				return acp.McpServer{}, errors.New(`an entry with "url" needs "type": "http" or "sse"`)
			}
			return acp.McpServer{}, errors.New(`neither "command" nor "url" given`)
		}
		env, err := decodePairs(e.Env, "env")
		if err != nil {
			return acp.McpServer{}, err
		}
		return stdioServer(e.Name, e.Command, e.Args, envVars(env)), nil
	case "http", "sse":
		if err := checkURL(e.URL); err != nil {
			return acp.McpServer{}, err
		}
		headers, err := decodePairs(e.Headers, "headers")
		if err != nil {
			return acp.McpServer{}, err
		}
		return urlServer(e.Type, e.Name, e.URL, httpHeaders(headers)), nil
	}
	return acp.McpServer{}, fmt.Errorf("unknown type %q (want stdio, http or sse)", e.Type)
}

// pair is a name/value pair of an env or headers list.
type pair struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// decodePairs accepts either an ACP list of {"name","value"} objects or an
// object of string values (sorted by key), and null or absent for none.
func decodePairs(raw json.RawMessage, field string) ([]pair, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '[' {
		var list []pair
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("%q: want a list of {\"name\", \"value\"} strings: %w", field, err)
		}
		return list, nil
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%q: want an object of strings or a list of {\"name\", \"value\"}: %w", field, err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	list := make([]pair, 0, len(keys))
	for _, k := range keys {
		list = append(list, pair{Name: k, Value: m[k]})
	}
	return list, nil
}

func envVars(ps []pair) []acp.EnvVariable {
	out := make([]acp.EnvVariable, 0, len(ps))
	for _, p := range ps {
		out = append(out, acp.EnvVariable{Name: p.Name, Value: p.Value})
	}
	return out
}

func httpHeaders(ps []pair) []acp.HttpHeader {
	out := make([]acp.HttpHeader, 0, len(ps))
	for _, p := range ps {
		out = append(out, acp.HttpHeader{Name: p.Name, Value: p.Value})
	}
	return out
}

// desktopEntry is one server of the {"mcpServers": {...}} format.
type desktopEntry struct {
	Type     string          `json:"type"`
	Command  string          `json:"command"`
	Args     []string        `json:"args"`
	Env      json.RawMessage `json:"env"`
	URL      string          `json:"url"`
	Headers  json.RawMessage `json:"headers"`
	Disabled bool            `json:"disabled"`
}

// parseServersObject parses {"mcpServers": {name: entry}} or VS Code's
// {"servers": {name: entry}}, keeping the servers in file order.
func parseServersObject(data []byte) ([]acp.McpServer, error) {
	top, err := orderedObject(data)
	if err != nil {
		return nil, err
	}
	var body json.RawMessage
	for _, kv := range top {
		if kv.key == "mcpServers" || (kv.key == "servers" && body == nil) {
			body = kv.value
		}
	}
	if body == nil {
		return nil, errors.New(`no "mcpServers" or "servers" object (or give an ACP-shaped JSON list)`)
	}
	entries, err := orderedObject(body)
	if err != nil {
		return nil, fmt.Errorf("servers: %w", err)
	}
	servers := make([]acp.McpServer, 0, len(entries))
	for _, kv := range entries {
		var e desktopEntry
		if err := json.Unmarshal(kv.value, &e); err != nil {
			return nil, fmt.Errorf("server %q: want an object with \"command\" or \"url\": %w", kv.key, err)
		}
		if e.Disabled {
			continue
		}
		s, err := desktopServer(kv.key, e)
		if err != nil {
			return nil, fmt.Errorf("server %q: %w", kv.key, err)
		}
		servers = append(servers, s)
	}
	return servers, nil
}

// desktopServer converts one {"command"...} or {"url"...} entry.
func desktopServer(name string, e desktopEntry) (acp.McpServer, error) {
	kind := e.Type
	switch kind {
	case "":
		switch {
		case e.Command != "" && e.URL != "":
			return acp.McpServer{}, errors.New(`both "command" and "url" given`)
		case e.Command != "":
			kind = "stdio"
		case e.URL != "":
			kind = "http"
		default:
			return acp.McpServer{}, errors.New(`neither "command" nor "url" given`)
		}
	case "streamable-http", "streamableHttp", "http":
		kind = "http"
	case "stdio", "sse":
	default:
		return acp.McpServer{}, fmt.Errorf("unknown type %q (want stdio, http, streamable-http or sse)", e.Type)
	}
	if kind == "stdio" {
		return acpEntryServer(acpEntry{Name: name, Command: e.Command, Args: e.Args, Env: e.Env, URL: e.URL})
	}
	return acpEntryServer(acpEntry{Type: kind, Name: name, URL: e.URL, Headers: e.Headers})
}

// keyValue is one member of a JSON object.
type keyValue struct {
	key   string
	value json.RawMessage
}

// orderedObject decodes a JSON object keeping its members in order.
func orderedObject(data []byte) ([]keyValue, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("parse JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("want a JSON object")
	}
	var out []keyValue
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("parse JSON: %w", err)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("parse JSON at %q: %w", key, err)
		}
		out = append(out, keyValue{key: key, value: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("parse JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("parse JSON: trailing data after the object")
	}
	return out, nil
}
