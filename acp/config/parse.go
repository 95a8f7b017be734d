package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Parse parses and validates a configuration file's contents. source names
// the file in syntax errors ("config.json:12:5: invalid character ...");
// validation errors name the JSON path instead. Every validation error is
// reported, joined with [errors.Join] in document order, each a
// [*FieldError]; the warnings found are returned even then. An empty
// document is an error (an editor truncating the file must not look like an
// empty configuration to a watcher). Parse is safe for concurrent use.
func Parse(data []byte, source string) (*Config, []Warning, error) {
	if source == "" {
		source = "config"
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, fmt.Errorf("%s: empty file: want a JSON object", source)
	}
	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(data, se)
			return nil, nil, fmt.Errorf("%s:%d:%d: %w", source, line, col, err)
		}
		return nil, nil, fmt.Errorf("%s: %w", source, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	root, err := readNode(dec)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", source, err)
	}
	if root.kind != kindObject {
		return nil, nil, fmt.Errorf("%s: want a JSON object at the top level", source)
	}
	p := &parser{}
	c := p.config(root)
	if len(p.errs) > 0 {
		return nil, p.warns, errors.Join(p.errs...)
	}
	return c, p.warns, nil
}

// position returns the 1-based line and column (in runes) of a syntax error.
func position(data []byte, se *json.SyntaxError) (line, col int) {
	// Offset counts the bytes read up to and including the offending one;
	// at the end of the input it is just past the last byte.
	off := int(se.Offset) - 1
	if off >= len(data)-1 && strings.Contains(se.Error(), "end of JSON input") {
		off = len(data)
	}
	off = max(0, min(off, len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	if i := bytes.LastIndexByte(before, '\n'); i >= 0 {
		before = before[i+1:]
	}
	return line, utf8.RuneCount(before) + 1
}

// kind is the JSON type of a node.
type kind int

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// node is a decoded JSON value that keeps object members in document order,
// duplicates included.
type node struct {
	kind    kind
	text    string // a string's value or a number's literal
	b       bool
	members []member
	elems   []*node
}

// member is one key of an object.
type member struct {
	key string
	val *node
}

// readNode reads one value from dec (which must use json.Number).
func readNode(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			n := &node{kind: kindObject}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := kt.(string)
				v, err := readNode(dec)
				if err != nil {
					return nil, err
				}
				n.members = append(n.members, member{key, v})
			}
			_, err := dec.Token()
			return n, err
		}
		n := &node{kind: kindArray}
		for dec.More() {
			v, err := readNode(dec)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, v)
		}
		_, err := dec.Token()
		return n, err
	case string:
		return &node{kind: kindString, text: t}, nil
	case json.Number:
		return &node{kind: kindNumber, text: string(t)}, nil
	case bool:
		return &node{kind: kindBool, b: t}, nil
	default:
		return &node{kind: kindNull}, nil
	}
}

// parser collects the errors and warnings of one Parse, in document order.
type parser struct {
	errs  []error
	warns []Warning
}

func (p *parser) errorf(path, format string, args ...any) {
	p.errs = append(p.errs, &FieldError{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (p *parser) warnf(path, format string, args ...any) {
	p.warns = append(p.warns, Warning{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (p *parser) unknown(path string) { p.warnf(path, "unknown key") }

// key returns the path of an object member: parent.key, or parent["key"]
// when the key is not a plain word.
func key(parent, k string) string {
	plain := k != ""
	for _, r := range k {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-' && r != '$' {
			plain = false
			break
		}
	}
	switch {
	case !plain:
		return parent + "[" + strconv.Quote(k) + "]"
	case parent == "":
		return k
	default:
		return parent + "." + k
	}
}

// index returns the path of an array element.
func index(parent string, i int) string { return parent + "[" + strconv.Itoa(i) + "]" }

// object returns the members of an object node, the last of duplicate keys
// only (with a warning); ok is false (with an error) for a non-object and
// false (silently) for null.
func (p *parser) object(path string, n *node) (members []member, ok bool) {
	switch n.kind {
	case kindNull:
		return nil, false
	case kindObject:
	default:
		p.errorf(path, "want an object")
		return nil, false
	}
	last := make(map[string]int, len(n.members))
	for i, m := range n.members {
		last[m.key] = i
	}
	members = make([]member, 0, len(last))
	for i, m := range n.members {
		if last[m.key] != i {
			p.warnf(key(path, m.key), "duplicate key; the last one is used")
			continue
		}
		members = append(members, m)
	}
	return members, true
}

func (p *parser) str(path string, n *node) (string, bool) {
	switch n.kind {
	case kindNull:
		return "", false
	case kindString:
		return n.text, true
	}
	p.errorf(path, "want a string")
	return "", false
}

func (p *parser) boolean(path string, n *node) (bool, bool) {
	switch n.kind {
	case kindNull:
		return false, false
	case kindBool:
		return n.b, true
	}
	p.errorf(path, "want true or false")
	return false, false
}

// integer accepts a JSON number with an integral value.
func (p *parser) integer(path string, n *node) (int, bool) {
	switch n.kind {
	case kindNull:
		return 0, false
	case kindNumber:
		if i, err := strconv.ParseInt(n.text, 10, strconv.IntSize); err == nil {
			return int(i), true
		}
		if f, err := strconv.ParseFloat(n.text, 64); err == nil && f == math.Trunc(f) && math.Abs(f) <= math.MaxInt32 {
			return int(f), true
		}
	}
	p.errorf(path, "want an integer")
	return 0, false
}

func (p *parser) stringList(path string, n *node) ([]string, bool) {
	switch n.kind {
	case kindNull:
		return nil, false
	case kindArray:
	default:
		p.errorf(path, "want an array of strings")
		return nil, false
	}
	out := make([]string, 0, len(n.elems))
	ok := true
	for i, e := range n.elems {
		if e.kind != kindString {
			p.errorf(index(path, i), "want a string")
			ok = false
			continue
		}
		out = append(out, e.text)
	}
	return out, ok
}

func (p *parser) stringMap(path string, n *node) (map[string]string, bool) {
	if n.kind != kindObject && n.kind != kindNull {
		p.errorf(path, "want an object of strings")
		return nil, false
	}
	members, ok := p.object(path, n)
	if !ok {
		return nil, false
	}
	out := make(map[string]string, len(members))
	for _, m := range members {
		if m.val.kind != kindString {
			p.errorf(key(path, m.key), "want a string")
			ok = false
			continue
		}
		out[m.key] = m.val.text
	}
	return out, ok
}

// config decodes the top-level object.
func (p *parser) config(root *node) *Config {
	c := &Config{}
	members, _ := p.object("", root)
	for _, m := range members {
		path := key("", m.key)
		switch m.key {
		case "$schema":
		case "model":
			c.Model = p.model(path, m.val)
		case "limits":
			c.Limits = p.limits(path, m.val)
		case "agents":
			c.Agents = p.agents(path, m.val)
		case "mcpServers":
			c.MCPServers = p.servers(path, m.val)
		case "servers":
			c.Servers = p.servers(path, m.val)
		default:
			p.unknown(path)
		}
	}
	// Default servers defined twice: agents.defaults > mcpServers > servers.
	for _, name := range sortedKeys(c.Servers) {
		if _, ok := c.MCPServers[name]; ok {
			p.warnf(key("servers", name), "overridden by %s", key("mcpServers", name))
		} else if _, ok := c.Agents.Defaults.MCP.Servers[name]; ok {
			p.warnf(key("servers", name), "overridden by %s", key("agents.defaults.mcp.servers", name))
		}
	}
	for _, name := range sortedKeys(c.MCPServers) {
		if _, ok := c.Agents.Defaults.MCP.Servers[name]; ok {
			p.warnf(key("mcpServers", name), "overridden by %s", key("agents.defaults.mcp.servers", name))
		}
	}
	return c
}

func (p *parser) model(path string, n *node) Model {
	var m Model
	members, _ := p.object(path, n)
	for _, mb := range members {
		kp := key(path, mb.key)
		switch mb.key {
		case "baseUrl":
			if v, ok := p.str(kp, mb.val); ok {
				m.BaseURL = v
				if err := checkHTTPURL(v); err != nil {
					p.errs = append(p.errs, &FieldError{Path: kp, Message: err.Error(), Err: err})
				}
			}
		case "model":
			m.Model, _ = p.str(kp, mb.val)
		case "apiKey":
			m.APIKey, _ = p.str(kp, mb.val)
			p.credential(kp, m.APIKey)
		case "headers":
			m.Headers, _ = p.stringMap(kp, mb.val)
			p.credentials(kp, m.Headers, mb.val)
		default:
			p.unknown(kp)
		}
	}
	return m
}

func (p *parser) limits(path string, n *node) Limits {
	var l Limits
	members, _ := p.object(path, n)
	for _, m := range members {
		kp := key(path, m.key)
		var dst **int
		var ms bool
		switch m.key {
		case "maxServers":
			dst = &l.MaxServers
		case "maxTools":
			dst = &l.MaxTools
		case "callsPerMinute":
			dst = &l.CallsPerMinute
		case "maxResultBytes":
			dst = &l.MaxResultBytes
		case "maxStoredResultBytes":
			dst = &l.MaxStoredResultBytes
		case "startupBudget":
			dst, ms = &l.StartupBudget, true
		case "connectTimeout":
			dst, ms = &l.ConnectTimeout, true
		case "callTimeout":
			dst, ms = &l.CallTimeout, true
		default:
			p.unknown(kp)
			continue
		}
		v, ok := p.integer(kp, m.val)
		if !ok {
			continue
		}
		switch {
		case m.key == "callsPerMinute" && v < 0:
			p.errorf(kp, "must not be negative (0 disables the rate limit)")
		case m.key != "callsPerMinute" && v <= 0 && ms:
			p.errorf(kp, "must be a positive number of milliseconds")
		case m.key != "callsPerMinute" && v <= 0:
			p.errorf(kp, "must be positive")
		}
		*dst = &v
	}
	return l
}

func (p *parser) agents(path string, n *node) Agents {
	var a Agents
	members, _ := p.object(path, n)
	for _, m := range members {
		kp := key(path, m.key)
		switch m.key {
		case "defaults":
			a.Defaults = p.defaults(kp, m.val)
		case "list":
			a.List = p.profiles(kp, m.val)
		default:
			p.unknown(kp)
		}
	}
	return a
}

func (p *parser) defaults(path string, n *node) Defaults {
	var d Defaults
	members, _ := p.object(path, n)
	for _, m := range members {
		kp := key(path, m.key)
		switch m.key {
		case "mcp":
			d.MCP = p.mcp(kp, m.val)
		case "tools":
			d.Tools = p.tools(kp, m.val)
		default:
			p.unknown(kp)
		}
	}
	return d
}

func (p *parser) profiles(path string, n *node) []Profile {
	switch n.kind {
	case kindNull:
		return nil
	case kindArray:
	default:
		p.errorf(path, "want an array of profiles")
		return nil
	}
	seen := map[string]bool{}
	list := make([]Profile, 0, len(n.elems))
	for i, e := range n.elems {
		ip := index(path, i)
		members, ok := p.object(ip, e)
		if !ok {
			if e.kind == kindNull {
				p.errorf(ip, "want an object")
			}
			continue
		}
		var pr Profile
		hasID := false
		for _, m := range members {
			kp := key(ip, m.key)
			switch m.key {
			case "id":
				if v, ok := p.str(kp, m.val); ok {
					pr.ID, hasID = v, true
					switch {
					case strings.TrimSpace(v) == "":
						p.errorf(kp, "missing")
					case seen[v]:
						p.errorf(kp, "duplicate profile %q", v)
					}
					seen[v] = true
				} else if m.val.kind == kindNull {
					hasID = true
					p.errorf(kp, "missing")
				} else {
					hasID = true // type error already reported
				}
			case "model":
				pr.Model = p.model(kp, m.val)
			case "mcp":
				pr.MCP = p.mcp(kp, m.val)
			case "tools":
				pr.Tools = p.tools(kp, m.val)
			default:
				p.unknown(kp)
			}
		}
		if !hasID {
			p.errorf(key(ip, "id"), "missing")
		}
		list = append(list, pr)
	}
	return list
}

func (p *parser) mcp(path string, n *node) MCP {
	var m MCP
	members, _ := p.object(path, n)
	for _, mb := range members {
		kp := key(path, mb.key)
		switch mb.key {
		case "servers":
			m.Servers = p.servers(kp, mb.val)
		default:
			p.unknown(kp)
		}
	}
	return m
}

func (p *parser) tools(at string, n *node) ToolPolicy {
	var t ToolPolicy
	members, _ := p.object(at, n)
	for _, m := range members {
		kp := key(at, m.key)
		var dst *[]string
		switch m.key {
		case "allow":
			dst = &t.Allow
		case "deny":
			dst = &t.Deny
		case "autoApprove":
			dst = &t.AutoApprove
		default:
			p.unknown(kp)
			continue
		}
		list, _ := p.stringList(kp, m.val)
		for i, pat := range list {
			if _, err := path.Match(pat, ""); err != nil {
				p.errs = append(p.errs, &FieldError{Path: index(kp, i), Message: fmt.Sprintf("bad pattern %q: %v", pat, err), Err: err})
			}
		}
		if m.val.kind == kindArray {
			*dst = list
		}
	}
	return t
}

func (p *parser) servers(path string, n *node) map[string]Server {
	members, ok := p.object(path, n)
	if !ok {
		return nil
	}
	out := make(map[string]Server, len(members))
	for _, m := range members {
		kp := key(path, m.key)
		if strings.TrimSpace(m.key) == "" {
			p.errorf(kp, "empty server name")
		}
		if s, ok := p.server(kp, m.val); ok {
			out[m.key] = s
		}
	}
	return out
}

// transportName returns the transport named by a "transport" value, or by
// a "type" value when typ is set (which also accepts streamable-http).
func transportName(v string, typ bool) (Transport, bool) {
	switch v {
	case "stdio":
		return TransportStdio, true
	case "http":
		return TransportHTTP, true
	case "sse":
		return TransportSSE, true
	case "streamable-http", "streamableHttp":
		return TransportHTTP, typ
	}
	return "", false
}

// server decodes and validates one server object.
func (p *parser) server(path string, n *node) (Server, bool) {
	var s Server
	members, ok := p.object(path, n)
	if !ok {
		if n.kind == kindNull {
			p.errorf(path, "want an object")
		}
		return s, false
	}
	var transport, typ Transport
	var disabled *bool
	present := map[string]bool{}
	for _, m := range members {
		kp := key(path, m.key)
		if m.val.kind != kindNull {
			present[m.key] = true
		}
		switch m.key {
		case "enabled":
			if v, ok := p.boolean(kp, m.val); ok {
				s.Enabled = &v
			}
		case "disabled":
			if v, ok := p.boolean(kp, m.val); ok {
				disabled = &v
			}
		case "transport":
			if v, ok := p.str(kp, m.val); ok {
				if transport, ok = transportName(v, false); !ok {
					p.errorf(kp, "unknown transport %q (want stdio, http or sse)", v)
				}
			}
		case "type":
			if v, ok := p.str(kp, m.val); ok {
				if typ, ok = transportName(v, true); !ok {
					p.errorf(kp, "unknown type %q (want stdio, http, sse or streamable-http)", v)
				}
			}
		case "command":
			s.Command, _ = p.str(kp, m.val)
		case "args":
			s.Args, _ = p.stringList(kp, m.val)
		case "env":
			s.Env, _ = p.stringMap(kp, m.val)
			p.credentials(kp, s.Env, m.val)
		case "cwd":
			s.Cwd, _ = p.str(kp, m.val)
		case "url":
			s.URL, _ = p.str(kp, m.val)
		case "headers":
			s.Headers, _ = p.stringMap(kp, m.val)
			p.credentials(kp, s.Headers, m.val)
		case "timeout":
			s.Timeout = p.millis(kp, m.val)
		case "toolTimeout":
			s.ToolTimeout = p.millis(kp, m.val)
		case "restartOnCrash":
			if v, ok := p.boolean(kp, m.val); ok {
				s.RestartOnCrash = &v
			}
		case "maxRestarts":
			if v, ok := p.integer(kp, m.val); ok {
				if v < 0 {
					p.errorf(kp, "must not be negative")
				}
				s.MaxRestarts = &v
			}
		case "toolPrefix":
			if v, ok := p.str(kp, m.val); ok {
				if v != "" && !validPrefix(v) {
					p.errorf(kp, "bad prefix %q: want letters, digits, _ and - only", v)
				}
				s.ToolPrefix = v
			}
		case "trusted":
			s.Trusted, _ = p.boolean(kp, m.val)
		case "shared":
			s.Shared, _ = p.boolean(kp, m.val)
		case "allowInsecureHttp":
			s.AllowInsecureHTTP, _ = p.boolean(kp, m.val)
		default:
			p.unknown(kp)
		}
	}

	p.finishServer(path, &s, transport, typ, disabled, present)
	return s, true
}

// finishServer settles a server's transport and enabled flag from the keys
// read (transport, type, disabled) and checks that the transport has what
// it needs; present says which keys were given.
func (p *parser) finishServer(path string, s *Server, transport, typ Transport, disabled *bool, present map[string]bool) {
	switch {
	case transport != "" && typ != "" && transport != typ:
		p.errorf(path, "transport %q and type %q disagree", transport, typ)
	case transport != "":
		s.Transport = transport
	default:
		s.Transport = typ
	}
	if disabled != nil {
		if s.Enabled != nil && *s.Enabled == *disabled {
			p.errorf(path, "enabled and disabled disagree")
		}
		enabled := !*disabled
		s.Enabled = &enabled
	}

	switch t := s.ResolvedTransport(); t {
	case TransportStdio:
		if strings.TrimSpace(s.Command) == "" {
			p.errorf(path, "transport %q requires \"command\"", t)
		}
		for _, k := range []string{"url", "headers", "allowInsecureHttp"} {
			if present[k] {
				p.warnf(key(path, k), "ignored by transport %q", t)
			}
		}
	case TransportHTTP, TransportSSE:
		if s.URL == "" {
			p.errorf(path, "transport %q requires \"url\"", t)
		} else if err := checkServerURL(s.URL, s.AllowInsecureHTTP); err != nil {
			p.errs = append(p.errs, &FieldError{Path: key(path, "url"), Message: err.Error(), Err: err})
		}
		for _, k := range []string{"command", "args", "env", "cwd"} {
			if present[k] {
				p.warnf(key(path, k), "ignored by transport %q", t)
			}
		}
	}
}

// millis decodes a positive number of milliseconds.
func (p *parser) millis(path string, n *node) int {
	v, ok := p.integer(path, n)
	if ok && v <= 0 {
		p.errorf(path, "must be a positive number of milliseconds")
		return 0
	}
	return v
}

func validPrefix(s string) bool {
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return s != ""
}

// credentials warns about the literal credentials of an env or headers
// object, in document order.
func (p *parser) credentials(path string, m map[string]string, n *node) {
	if m == nil {
		return
	}
	members, _ := (&parser{}).object(path, n) // document order; problems already reported
	for _, mb := range members {
		if v, ok := m[mb.key]; ok && looksLikeCredential(mb.key) {
			p.credential(key(path, mb.key), v)
		}
	}
}

// credential warns when v is a literal (not empty, not a reference).
func (p *parser) credential(path, v string) {
	if isLiteral(v) {
		p.warnf(path, "literal credential; use a secret:// reference")
	}
}

// looksLikeCredential reports whether an env or header name looks like it
// holds a credential.
func looksLikeCredential(name string) bool {
	k := strings.ToLower(name)
	for _, w := range [...]string{"token", "secret", "password", "key", "auth"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// secretScheme starts a secret reference.
const secretScheme = "secret://"

// isLiteral reports whether v is a non-empty value with no reference in it.
func isLiteral(v string) bool {
	return v != "" && !strings.HasPrefix(v, secretScheme) && !strings.Contains(v, "${")
}

// isReference reports whether v is a secret:// reference or exactly one
// ${VAR}.
func isReference(v string) bool {
	if strings.HasPrefix(v, secretScheme) {
		return true
	}
	name, ok := strings.CutPrefix(v, "${")
	if !ok {
		return false
	}
	name, ok = strings.CutSuffix(name, "}")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if !(r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || i > 0 && '0' <= r && r <= '9') {
			return false
		}
	}
	return true
}

// checkHTTPURL accepts an absolute http or https URL.
func checkHTTPURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("bad URL %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("URL %q: scheme must be http or https", raw)
	}
	if u.Host == "" {
		return fmt.Errorf("URL %q has no host", raw)
	}
	return nil
}

// checkServerURL is checkHTTPURL, with plain http allowed to loopback hosts
// only unless insecure is set.
func checkServerURL(raw string, insecure bool) error {
	if err := checkHTTPURL(raw); err != nil {
		return err
	}
	u, _ := url.Parse(raw)
	if u.Scheme == "http" && !insecure && !isLoopback(u.Hostname()) {
		return fmt.Errorf("URL %q: plain http is only allowed to a loopback host; use https or set \"allowInsecureHttp\"", raw)
	}
	return nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
