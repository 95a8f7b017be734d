package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/mark3labs/mcp-go/mcp"
)

// Caller is what the bridge needs of a session's MCP servers;
// *mcpclient.Manager implements it. Its results are mcp-go's
// *mcp.CallToolResult on purpose, as mcpclient returns them (see package
// mcpclient): the bridge converts them once, into gateway results.
// Implementations must be safe for concurrent use.
type Caller interface {
	Tools() []mcpclient.ServerTool
	CallTool(ctx context.Context, server, tool string, args any, opts ...mcpclient.CallOption) (*mcp.CallToolResult, error)
}

// Options configures the bridge. A nil *Options means all defaults.
type Options struct {
	// MaxResultBytes caps what the model sees of one result
	// (DefaultMaxResultBytes); the user always sees all of it.
	MaxResultBytes int
	// Trusted reports whether a server's results may reach the model
	// without the untrusted-content frame. Default: none is trusted.
	Trusted func(server string) bool
	// Logger receives warnings about suspicious results. Default: discard.
	Logger *slog.Logger
	// Redact, when set, is applied to everything the model is given of a
	// server (result and error text, tool descriptions) before it is capped
	// and framed: the model never needs a raw secret. The user still sees
	// results as the server sent them. It must be safe for concurrent use.
	Redact func(string) string
	// Prefix returns the name to use for server in bridged tool names
	// (mcp__<prefix>__<tool>); "" or a nil Prefix means the server's name.
	Prefix func(server string) string
}

// prefix is the name standing for server in bridged names.
func (o *Options) prefix(server string) string {
	if o != nil && o.Prefix != nil {
		if p := o.Prefix(server); p != "" {
			return p
		}
	}
	return server
}

func (o *Options) framer() *framer {
	f := &framer{maxBytes: DefaultMaxResultBytes, logger: slog.New(slog.DiscardHandler), redact: func(s string) string { return s }}
	if o != nil {
		if o.MaxResultBytes > 0 {
			f.maxBytes = o.MaxResultBytes
		}
		f.trusted = o.Trusted
		if o.Logger != nil {
			f.logger = o.Logger
		}
		if o.Redact != nil {
			f.redact = o.Redact
		}
	}
	return f
}

// Target is the MCP tool a bridged name stands for.
type Target struct{ Server, Tool string }

// Tools converts the tools c offers into gateway tools, in c's order, and
// returns the map from each bridged name to its MCP tool. Names are never
// parsed back: use the map.
func Tools(c Caller, opts *Options) ([]gateway.Tool, map[string]Target) {
	return tools(c, opts, nil)
}

// schemaCache remembers normalised schemas by their raw bytes, so that
// re-bridging a session's tools after every server event does not parse
// every schema again.
type schemaCache map[string]json.RawMessage

func tools(c Caller, opts *Options, cache schemaCache) ([]gateway.Tool, map[string]Target) {
	f := opts.framer()
	namer := NewNamer()
	st := c.Tools()
	tools := make([]gateway.Tool, 0, len(st))
	targets := make(map[string]Target, len(st))
	for _, t := range st {
		name := namer.Name(opts.prefix(t.Server), t.Tool.Name)
		targets[name] = Target{Server: t.Server, Tool: t.Tool.Name}
		tools = append(tools, convertTool(c, f, name, t, cache))
	}
	return tools, targets
}

// maxTitleBytes caps the tool's name or title in the title the editor
// shows.
const maxTitleBytes = 128

// title is the title the editor shows for an MCP tool: the server's name
// and the tool's title (its title, else its title annotation, else its
// name), one line of display text.
func title(server string, t mcp.Tool) string {
	name := t.Title
	if name == "" {
		name = t.Annotations.Title
	}
	if strings.TrimSpace(name) == "" {
		name = t.Name
	}
	return server + ": " + gateway.DisplayText(name, maxTitleBytes)
}

// convertTool makes the gateway tool for one MCP tool.
func convertTool(c Caller, f *framer, name string, st mcpclient.ServerTool, cache schemaCache) gateway.Tool {
	server, tool := st.Server, st.Tool.Name
	src := source{server: server, tool: tool, name: name}
	kind, ask := classify(st.Tool)
	return gateway.Tool{
		Name:        name,
		ShortName:   sanitize(tool),
		Title:       title(server, st.Tool),
		Description: f.description(server, st.Tool),
		InputSchema: cachedSchema(st.Tool, cache),
		Kind:        kind,
		Annotations: annotations(st.Tool.Annotations),
		AskApproval: ask,
		Meta:        map[string]any{"server": server, "mcpTool": tool},
		Execute: func(ctx context.Context, args json.RawMessage, progress func(gateway.Progress)) (gateway.Result, error) {
			res, err := c.CallTool(ctx, server, tool, args, mcpclient.WithProgress(func(p mcpclient.Progress) {
				if progress != nil {
					progress(gatewayProgress(p))
				}
			}))
			if err != nil {
				// Transport errors, timeouts, unavailable servers and the
				// server's own error answers are results the model can
				// read, never a failed turn.
				return f.callError(src, err), nil
			}
			return f.convert(src, res), nil
		},
	}
}

// cachedSchema is inputSchema, looked up in cache (if any) by the raw
// schema first.
func cachedSchema(t mcp.Tool, cache schemaCache) json.RawMessage {
	if cache == nil || t.RawInputSchema == nil {
		return inputSchema(t)
	}
	key := string(t.RawInputSchema)
	if s, ok := cache[key]; ok {
		return s
	}
	s := inputSchema(t)
	cache[key] = s
	return s
}

// inputSchema returns the tool's schema as the server sent it, normalised
// only where a provider would reject it: a schema with no "type" gets
// "type": "object", and an object schema with no "properties" gets empty
// ones; and where its text is a danger to the model (see untrustedSchema).
func inputSchema(t mcp.Tool) json.RawMessage {
	raw := t.RawInputSchema
	if raw == nil {
		raw, _ = json.Marshal(t.InputSchema)
	}
	raw = untrustedSchema(raw)
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	changed := false
	if _, ok := m["type"]; !ok {
		m["type"] = json.RawMessage(`"object"`)
		changed = true
	}
	if _, ok := m["properties"]; !ok && bytes.Equal(m["type"], []byte(`"object"`)) {
		m["properties"] = json.RawMessage(`{}`)
		changed = true
	}
	if !changed {
		return raw
	}
	out, _ := json.Marshal(m)
	return out
}

func annotations(a mcp.ToolAnnotation) gateway.Annotations {
	return gateway.Annotations{
		ReadOnly:    isTrue(a.ReadOnlyHint),
		Destructive: a.DestructiveHint == nil || *a.DestructiveHint, // MCP default: destructive
		Idempotent:  isTrue(a.IdempotentHint),
		OpenWorld:   a.OpenWorldHint == nil || *a.OpenWorldHint, // MCP default: open world
	}
}

func isTrue(b *bool) bool { return b != nil && *b }

// classify maps a tool to the editor's kind and whether the user is asked
// before it runs. The question follows the annotations: a tool not marked
// read-only asks. The kind of a read-only tool is search, fetch or read;
// any other tool's kind comes from what its name says it does (see
// kindOf), never from destructiveHint: mcp-go marks every tool
// destructive unless its author says otherwise, so a calculator's "add"
// would show as a deletion.
func classify(t mcp.Tool) (gateway.ToolKind, bool) {
	a := t.Annotations
	if isTrue(a.ReadOnlyHint) {
		name := strings.ToLower(t.Name)
		switch {
		case strings.Contains(name, "search") || strings.Contains(name, "find") || strings.Contains(name, "grep") || strings.Contains(name, "query"):
			return gateway.KindSearch, false
		case isTrue(a.OpenWorldHint) || strings.Contains(name, "fetch"):
			return gateway.KindFetch, false
		default:
			return gateway.KindRead, false
		}
	}
	return kindOf(t.Name), true
}

// kindOf is the kind of a tool that may change things, from the words of
// its name (split at '_', '-', '.', spaces, digits and lower-to-upper case
// changes): delete for delete, remove, drop or destroy; edit for write,
// update, create, set, edit and their kin; execute for run, exec, shell,
// command and their kin; other for anything else. The first word that
// says something decides ("create_or_delete" is an edit).
func kindOf(name string) gateway.ToolKind {
	for _, w := range nameWords(name) {
		switch w {
		case "delete", "remove", "drop", "destroy", "del", "rm", "erase", "purge":
			return gateway.KindDelete
		case "write", "update", "create", "set", "edit", "modify", "patch", "put", "insert", "append",
			"rename", "move", "replace", "save", "upsert", "change":
			return gateway.KindEdit
		case "run", "exec", "execute", "shell", "command", "cmd", "bash", "eval", "evaluate", "spawn", "launch":
			return gateway.KindExecute
		}
	}
	return gateway.KindOther
}

// nameWords splits a tool name into lower-case words: at every character
// that is not a letter, and where a lower-case letter is followed by an
// upper-case one (deleteFile: delete, file).
func nameWords(name string) []string {
	var words []string
	var cur []rune
	prevLower := false
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for _, r := range name {
		switch {
		case !unicode.IsLetter(r):
			flush()
			prevLower = false
			continue
		case unicode.IsUpper(r) && prevLower:
			flush()
		}
		cur = append(cur, r)
		prevLower = unicode.IsLower(r)
	}
	flush()
	return words
}

// Sync derives one session's tool view from its MCP servers' catalogs
// (the Manager is the source): on Attach, on the Manager's events (OnEvent)
// and when the bridge options change (SetOptions), and at no other time.
// Current gives the view in force; it implements gateway.ToolView, so a
// session passes its Sync to the Runner as its tools. Safe for concurrent
// use.
type Sync struct {
	native []gateway.Tool
	cur    atomic.Pointer[gateway.Toolset]

	mu      sync.Mutex
	opts    *Options
	caller  Caller
	known   map[string]Target // every target ever bridged in this session
	schemas schemaCache
}

var _ gateway.ToolView = (*Sync)(nil)

// NewSync returns a Sync whose view is the native tools followed by the
// session's bridged MCP tools (a bridged tool never shadows a native one),
// the resource tools first among them when the attached Caller is also a
// ResourceCaller whose servers have resources (see ResourceTools).
// Attach the session's servers, and pass OnEvent as the Manager's event
// callback.
func NewSync(opts *Options, native ...gateway.Tool) *Sync {
	s := &Sync{native: native, opts: opts}
	s.cur.Store(gateway.NewToolset(native, nil))
	return s
}

// Current returns the session's tools now. It is one atomic load: the
// Runner calls it at every model call.
func (s *Sync) Current() *gateway.Toolset { return s.cur.Load() }

// Attach sets the session's servers and derives the session's tools from
// their catalogs.
func (s *Sync) Attach(c Caller) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.caller = c
	s.derive()
}

// OnEvent derives the session's tools again when a server's tools,
// resources or state changed (discovery, list_changed, restart, failure):
// the resource tools come and go with the resources. It is the
// Manager's OnEvent (or is called from it); the Manager's Wait and
// WaitSettled return only once it has seen the changes they waited for.
func (s *Sync) OnEvent(e mcpclient.Event) {
	if e.Kind == mcpclient.EventToolsChanged || e.Kind == mcpclient.EventStatus || e.Kind == mcpclient.EventResourcesChanged {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.derive()
	}
}

// derive sets the view to the servers' current tools. Called with s.mu
// held.
func (s *Sync) derive() {
	if s.caller == nil {
		return
	}
	if s.schemas == nil {
		s.schemas = schemaCache{}
	}
	tools, targets := tools(s.caller, s.opts, s.schemas)
	if rc, ok := s.caller.(ResourceCaller); ok {
		tools = append(ResourceTools(rc, s.opts), tools...)
	}
	if s.known == nil {
		s.known = map[string]Target{}
	}
	for name, t := range targets {
		s.known[name] = t
	}
	s.cur.Store(gateway.NewToolset(s.native, tools))
}

// SetOptions replaces the bridge options and derives the tools with them.
func (s *Sync) SetOptions(opts *Options) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts = opts
	s.derive()
}

// Target returns the MCP tool behind a bridged name the session offers
// now.
func (s *Sync) Target(name string) (Target, bool) {
	if _, offered := s.Current().Lookup(name); !offered {
		return Target{}, false
	}
	return s.Known(name)
}

// Known returns the MCP tool a bridged name stood for at any time since
// Attach, also while its server is away (restarting, reconnecting) and
// its tools are not offered: so a caller can say why the name is missing.
func (s *Sync) Known(name string) (Target, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.known[name]
	return t, ok
}

// Detach drops the session's MCP tools (the view keeps the native ones);
// later events change nothing.
func (s *Sync) Detach() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.caller = nil
	s.known = nil
	s.cur.Store(gateway.NewToolset(s.native, nil))
}
