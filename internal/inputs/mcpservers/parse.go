// Package mcpservers parses and normalises every shape in which MCP
// servers are listed: the ACP list of session/new, session/load and
// session/resume ([{"name", "command", "args", "env"}, {"type": "http",
// "name", "url", "headers"}, {"type": "acp", "name", "serverId"}], with the
// liberal forms real clients send),
// the Claude Desktop / Cursor object {"mcpServers": {NAME: {...}}} and VS
// Code's {"servers": {NAME: {...}}}. It returns [Server] values (acpgate's
// own type: this package is free of acp-go-sdk, which package
// acp/sdkservers converts to at the ACP edge), converts them into
// mcpclient specs, and names the transport of
// a "type" ([ParseType]) and of an entry without one ([Infer]) for the
// configuration file, whose servers have the same fields. Every error is
// an [*Error] naming the JSON path. Everything here is safe for
// concurrent use.
package mcpservers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/acpgate/acpgate/acp/jsonrpc"
	"github.com/acpgate/acpgate/mcpclient"
)

// Options says how strict a parse is.
type Options struct {
	// CheckURLs checks the url of every http and sse server with
	// mcpclient.CheckURL (AllowInsecureHTTP passed on). Without it a url
	// need only be a non-blank string: the agent leaves the rule to
	// mcpclient, which reports such a server as failed rather than
	// refusing the whole session.
	CheckURLs bool
	// AllowInsecureHTTP allows plain http to any host (with CheckURLs).
	AllowInsecureHTTP bool
	// ACP accepts servers of type "acp" (MCP over ACP: {"type": "acp",
	// "name", "serverId"}), which only an ACP client that saw
	// mcpCapabilities.acp may list; without it they are an error wrapping
	// ErrUnsupportedType.
	ACP bool
}

// ParseType returns the transport a "type" member names: "stdio", "http",
// "sse", or the aliases "streamable-http" and "streamableHttp" (Cursor, VS
// Code) for http. Anything else is an error wrapping ErrUnsupportedType.
func ParseType(typ string) (mcpclient.Transport, error) {
	switch typ {
	case "stdio", "http", "sse":
		return mcpclient.Transport(typ), nil
	case "streamable-http", "streamableHttp":
		return mcpclient.TransportHTTP, nil
	}
	return "", fmt.Errorf("%w %q (acpgate takes stdio, http, streamable-http and sse)", ErrUnsupportedType, typ)
}

// Infer returns the transport of an entry without a "type": stdio when it
// has a command, else http when it has a url, else "" (neither).
func Infer(hasCommand, hasURL bool) mcpclient.Transport {
	switch {
	case hasCommand:
		return mcpclient.TransportStdio
	case hasURL:
		return mcpclient.TransportHTTP
	}
	return ""
}

// Parse parses the contents of an MCP configuration file: an ACP list, or
// an object whose "mcpServers" (Claude Desktop, Cursor) or else "servers"
// (VS Code) member maps names to servers, its other members ignored. The
// servers keep the file's order; an object's servers with "disabled": true
// are left out. Paths are relative to the document ("[0].url",
// "mcpServers.fs.env"). The error is an [*Error].
func Parse(data []byte, opts Options) ([]Server, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, fail("", ErrSyntax, "empty document: want a JSON list of ACP MCP servers or an object with \"mcpServers\" or \"servers\"")
	}
	if err := json.Unmarshal(data, new(json.RawMessage)); err != nil {
		return nil, fail("", fmt.Errorf("%w: %w", ErrSyntax, err), "not JSON: %v", err)
	}
	switch data[0] {
	case '[':
		return ParseList(data, "", opts)
	case '{':
		return parseObject(data, opts)
	}
	return nil, wrongKind("", `a list of ACP MCP servers or an object with "mcpServers" or "servers"`, data)
}

// ParseList parses an ACP mcpServers list, raw, found at path (for error
// paths: "mcpServers" for a request's params.mcpServers). Every entry is
// returned normalised: a stdio entry with non-nil args and env, an http
// or sse entry with non-nil headers, an acp entry (with opts.ACP) with its
// serverId. An
// entry's "type" may be absent (stdio with a command, else http with a
// url, see [Infer]), "acp" or any [ParseType] accepts; env and headers may be
// objects ({"K": "V"}, sorted by key) or {"name", "value"} arrays; null is
// the same as absent. Names must be unique. The error is an [*Error].
func ParseList(raw json.RawMessage, path string, opts Options) ([]Server, error) {
	var entries []json.RawMessage
	if json.Unmarshal(raw, &entries) != nil {
		return nil, wrongKind(path, "an array", raw)
	}
	out := make([]Server, len(entries))
	seen := map[string]int{}
	for i, entry := range entries {
		at := fmt.Sprintf("%s[%d]", path, i)
		var e map[string]json.RawMessage
		if json.Unmarshal(entry, &e) != nil || e == nil {
			return nil, wrongKind(at, "an object", entry)
		}
		name, err := requiredString(e, at, "name")
		if err != nil {
			return nil, err
		}
		if err := mcpclient.CheckName(name); err != nil {
			return nil, fail(at+".name", err, "%v", err)
		}
		if j, dup := seen[name]; dup {
			return nil, fail(at+".name", ErrDuplicate, "duplicate server name %q (also %s[%d])", name, path, j)
		}
		seen[name] = i
		s, perr := parseEntry(at, name, e, opts)
		if perr != nil {
			return nil, perr
		}
		out[i] = s
	}
	return out, nil
}

// parseObject parses {"mcpServers": {...}} or {"servers": {...}}.
func parseObject(data []byte, opts Options) ([]Server, error) {
	top, err := orderedObject(data, "")
	if err != nil {
		return nil, err
	}
	key, body := "", json.RawMessage(nil)
	for _, kv := range top {
		if kv.key == "mcpServers" || (kv.key == "servers" && key != "mcpServers") {
			key, body = kv.key, kv.value
		}
	}
	if body == nil {
		return nil, fail("mcpServers", ErrMissing, `missing: want an object with "mcpServers" or "servers" (or an ACP list)`)
	}
	entries, err := orderedObject(body, key)
	if err != nil {
		return nil, err
	}
	out := make([]Server, 0, len(entries))
	seen := map[string]bool{}
	for _, kv := range entries {
		at := member(key, kv.key)
		var e map[string]json.RawMessage
		badName := mcpclient.CheckName(kv.key)
		switch {
		case strings.TrimSpace(kv.key) == "":
			return nil, fail(at, ErrEmpty, "empty server name")
		case seen[kv.key]:
			return nil, fail(at, ErrDuplicate, "duplicate server name %q", kv.key)
		case badName != nil:
			return nil, fail(at, badName, "%v", badName)
		case json.Unmarshal(kv.value, &e) != nil || e == nil:
			return nil, wrongKind(at, "an object", kv.value)
		}
		seen[kv.key] = true
		var disabled bool
		if v, ok := e["disabled"]; present(v, ok) && json.Unmarshal(v, &disabled) != nil {
			return nil, wrongKind(at+".disabled", "true or false", v)
		}
		if disabled {
			continue
		}
		s, err := parseEntry(at, kv.key, e, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// parseEntry parses the members of one server entry at path, named name.
func parseEntry(path, name string, e map[string]json.RawMessage, opts Options) (Server, error) {
	var typ string
	if v, ok := e["type"]; present(v, ok) && json.Unmarshal(v, &typ) != nil {
		return Server{}, wrongKind(path+".type", "a string", v)
	}
	if typ == "acp" {
		return parseACP(path, name, e, opts)
	}
	cmd, hasCmd := e["command"]
	u, hasURL := e["url"]
	t := Infer(present(cmd, hasCmd), present(u, hasURL))
	if typ != "" {
		var err error
		if t, err = ParseType(typ); err != nil {
			return Server{}, fail(path+".type", err, "%v", err)
		}
	} else if t == "" {
		return Server{}, fail(path, ErrNoTransport, "server %q needs a command (stdio) or a url (http, sse)", name)
	}
	if t == mcpclient.TransportStdio {
		command, err := requiredString(e, path, "command")
		if err != nil {
			return Server{}, err
		}
		args, err := stringArray(e["args"], path+".args")
		if err != nil {
			return Server{}, err
		}
		env, err := pairs(e["env"], path+".env")
		if err != nil {
			return Server{}, err
		}
		return Stdio(name, command, args, env), nil
	}
	url, err := requiredString(e, path, "url")
	if err != nil {
		return Server{}, err
	}
	if opts.CheckURLs {
		if err := mcpclient.CheckURL(url, opts.AllowInsecureHTTP); err != nil {
			return Server{}, fail(path+".url", err, "%v", err)
		}
	}
	hs, err := pairs(e["headers"], path+".headers")
	if err != nil {
		return Server{}, err
	}
	return Remote(t, name, url, hs), nil
}

// parseACP parses the members of an acp server entry at path, named name:
// its serverId is required.
func parseACP(path, name string, e map[string]json.RawMessage, opts Options) (Server, error) {
	if !opts.ACP {
		return Server{}, fail(path+".type", ErrUnsupportedType,
			`type "acp" (MCP over ACP) is taken only from an ACP client, once the agent's initialize response has advertised mcpCapabilities.acp (send initialize first)`)
	}
	id, err := requiredString(e, path, "serverId")
	if err != nil {
		if _, old := e["id"]; old && errors.Is(err, ErrMissing) {
			err.Problem += ` (the ACP schema names it serverId; "id" is its old name)`
		}
		return Server{}, err
	}
	return ACP(name, id), nil
}

// requiredString returns the member key of e, which must be a non-blank
// string.
func requiredString(e map[string]json.RawMessage, path, key string) (string, *Error) {
	v, ok := e[key]
	if !ok {
		return "", fail(path+"."+key, ErrMissing, "missing")
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", wrongKind(path+"."+key, "a string", v)
	}
	if strings.TrimSpace(s) == "" {
		return "", fail(path+"."+key, ErrEmpty, "must not be empty")
	}
	return s, nil
}

// stringArray decodes an array of strings; absent or null is empty.
func stringArray(raw json.RawMessage, path string) ([]string, *Error) {
	if !present(raw, len(raw) > 0) {
		return []string{}, nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil, wrongKind(path, "an array of strings", raw)
	}
	out := make([]string, len(items))
	for i, it := range items {
		if json.Unmarshal(it, &out[i]) != nil {
			return nil, wrongKind(fmt.Sprintf("%s[%d]", path, i), "a string", it)
		}
	}
	return out, nil
}

// pairs turns {"K": "V"}, [{"name": "K", "value": "V"}] or nothing (absent
// or null) into pairs: an array's in its order, an object's
// sorted by key.
func pairs(raw json.RawMessage, path string) ([]Pair, *Error) {
	const want = `an object of strings or an array of {"name", "value"} objects`
	switch jsonrpc.Kind(raw) {
	case "nothing", "null":
		return []Pair{}, nil
	case "object":
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return nil, wrongKind(path, want, raw)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([]Pair, len(keys))
		for i, k := range keys {
			if k == "" {
				return nil, fail(path, ErrEmpty, "has an empty name")
			}
			if json.Unmarshal(m[k], &out[i].Value) != nil {
				return nil, wrongKind(member(path, k), "a string", m[k])
			}
			out[i].Name = k
		}
		return out, nil
	case "array":
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil, wrongKind(path, want, raw)
		}
		out := make([]Pair, len(items))
		for i, it := range items {
			at := fmt.Sprintf("%s[%d]", path, i)
			var e map[string]json.RawMessage
			if json.Unmarshal(it, &e) != nil || e == nil {
				return nil, wrongKind(at, `an object with "name" and "value"`, it)
			}
			name, err := requiredString(e, at, "name")
			if err != nil {
				return nil, err
			}
			v, ok := e["value"]
			if !ok {
				return nil, fail(at+".value", ErrMissing, "missing")
			}
			if json.Unmarshal(v, &out[i].Value) != nil {
				return nil, wrongKind(at+".value", "a string", v)
			}
			out[i].Name = name
		}
		return out, nil
	}
	return nil, wrongKind(path, want, raw)
}

// keyValue is one member of a JSON object.
type keyValue struct {
	key   string
	value json.RawMessage
}

// orderedObject decodes data, a valid JSON value at path, as an object,
// keeping its members in order (duplicates included).
func orderedObject(data []byte, path string) ([]keyValue, error) {
	if jsonrpc.Kind(data) != "object" {
		return nil, wrongKind(path, "an object", data)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // the '{'
		return nil, fail(path, fmt.Errorf("%w: %w", ErrSyntax, err), "not JSON: %v", err)
	}
	var out []keyValue
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fail(path, fmt.Errorf("%w: %w", ErrSyntax, err), "not JSON: %v", err)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fail(member(path, key), fmt.Errorf("%w: %w", ErrSyntax, err), "not JSON: %v", err)
		}
		out = append(out, keyValue{key: key, value: v})
	}
	if _, err := dec.Token(); err != nil && err != io.EOF {
		return nil, fail(path, fmt.Errorf("%w: %w", ErrSyntax, err), "not JSON: %v", err)
	}
	return out, nil
}
