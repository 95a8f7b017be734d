package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/acpgate/acpgate/gateway/toolsearch"
)

// SearchToolName is the name of the tool the model gets instead of a
// session's extra tools when they are too many (see RunOptions.SearchThreshold).
const SearchToolName = "search_tools"

// CallToolName is the name of the tool through which, in tool search, the
// model calls the tools it found: {"name": the tool, "arguments": its
// arguments}. The Runner runs such a call as a call of the tool it names
// (policy, approval, card and result as for any call of that tool).
const CallToolName = "call_tool"

// DefaultSearchThreshold is how many tools a model sees before tool search
// takes over (RunOptions.SearchThreshold).
const DefaultSearchThreshold = 40

// NoToolSearch, as RunOptions.SearchThreshold, turns tool search off:
// the model always gets every tool.
const NoToolSearch = -1

// searchLimit bounds the matches one search returns.
const (
	searchDefault = 8
	searchMax     = 20
)

// toolSearch is tool search over the tools of one model request: the
// tools the model may use but is not offered (the deferred ones), and
// their index. Read-only once built.
type toolSearch struct {
	threshold int
	tools     []Tool // the deferred tools, in the index's order
	index     *toolsearch.Index
}

// DeferredToolser is implemented by a Provider that searches a request's
// deferred tools itself (Anthropic's defer_loading with its tool search
// tool): it is given every tool, those behind tool search marked
// ToolSpec.Deferred, and offers the model its own search over them.
// DeferredTools reports whether it does; it is called once per model
// request and must be safe for concurrent use.
type DeferredToolser interface {
	DeferredTools() bool
}

// offer decides the tools of one model request. This is the one place
// that does: it returns the definitions the request carries and the tool
// set the answer's calls are looked up in.
//
// With few tools (see deferring) the request carries every tool the
// policy allows. With more, a provider that loads deferred tools itself
// (DeferredToolser) is given every tool the policy allows, the extra ones
// marked Deferred, and the model calls the tools its search finds by
// their names; any other provider gets the native tools, search_tools
// and call_tool: the model finds tools with search_tools, whose result
// gives their definitions, and calls them through call_tool. Either way
// the list is the same on every request while the session's tools and
// policy stay the same — in particular, what a search finds never
// changes it — so that a provider's prompt cache, which serves only a
// byte-identical prefix (the tools come first), keeps serving the whole
// conversation (docs/benchmarks.md, "Requests a prompt cache can
// serve").
func offer(opts *RunOptions) ([]ToolSpec, *Toolset) {
	tools := opts.current()
	deferred, threshold := deferring(tools, opts)
	if deferred == nil {
		return exposed(tools.Tools(), &opts.ToolAccess), tools
	}
	if d, ok := opts.Model.(DeferredToolser); ok && d.DeferredTools() {
		specs := exposed(tools.Native(), &opts.ToolAccess)
		for _, t := range deferred {
			spec := t.spec()
			spec.Deferred = true
			specs = append(specs, spec)
		}
		return specs, tools
	}
	search := &toolSearch{threshold: threshold, tools: deferred, index: tools.searchIndex(deferred)}
	own := []Tool{search.tool(), callTool()}
	specs := exposed(tools.Native(), &opts.ToolAccess)
	for _, t := range own {
		specs = append(specs, t.spec())
	}
	return specs, NewToolset(append(slices.Clone(tools.Native()), own...), tools.Extra())
}

// deferring decides whether a model request uses tool search: the tools
// the policy exposes, not counting native ones, are more than the
// threshold, or their schemas take more than a tenth of the model's
// context window (when known, in tokens, estimated at 4 bytes a token).
// It returns those tools, in order, or nil when every tool is to be
// offered, and the threshold in effect.
func deferring(tools *Toolset, opts *RunOptions) ([]Tool, int) {
	threshold, acc, contextWindow := opts.SearchThreshold, &opts.ToolAccess, opts.ContextWindow
	switch {
	case threshold == NoToolSearch:
		return nil, threshold
	case threshold <= 0:
		threshold = DefaultSearchThreshold
	}
	var deferred []Tool
	size := 0
	for _, t := range tools.Extra() {
		if acc.allowed(t) {
			deferred = append(deferred, t)
			size += len(t.Name) + len(t.Description) + len(t.InputSchema)
		}
	}
	if len(deferred) <= threshold && (contextWindow <= 0 || size/4 <= contextWindow/10) {
		return nil, threshold
	}
	return deferred, threshold
}

// searchMemo is a search index and the names of the tools it indexes, in
// order.
type searchMemo struct {
	names []string
	index *toolsearch.Index
}

// searchIndex returns the search index over deferred (some of ts's tools,
// in order), built once for each distinct list: a session whose tools and
// policy do not change between turns indexes them once, not per turn.
func (ts *Toolset) searchIndex(deferred []Tool) *toolsearch.Index {
	names := make([]string, len(deferred))
	for i, t := range deferred {
		names[i] = t.Name
	}
	ts.searchMu.Lock()
	defer ts.searchMu.Unlock()
	if ts.search != nil && slices.Equal(ts.search.names, names) {
		return ts.search.index
	}
	docs := make([]toolsearch.Doc, len(deferred))
	for i, t := range deferred {
		docs[i] = toolsearch.Doc{Name: t.Name, ShortName: t.ShortName, Title: t.Title, Description: t.Description, Schema: t.InputSchema}
	}
	ts.search = &searchMemo{names: names, index: toolsearch.New(docs)}
	return ts.search.index
}

// tool is the search tool of this model request.
func (s *toolSearch) tool() Tool {
	return Tool{
		Name:  SearchToolName,
		Title: "Search tools",
		Description: fmt.Sprintf("This session has %d more tools than are listed here. Search them by what you need to do "+
			"(or by a tool's exact name); the best matches are listed with their names, descriptions and parameters. "+
			"Call one with %s.", len(s.tools), CallToolName),
		InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"What the tool should do, in a few words, or its name."},` +
			`"limit":{"type":"integer","minimum":1,"maximum":20,"description":"How many matches to return (default 8)."}},"required":["query"]}`),
		Kind:        KindSearch,
		Annotations: Annotations{ReadOnly: true, Idempotent: true},
		Execute:     s.execute,
		builtin:     true,
	}
}

// callTool is the tool the model calls the tools it found through. The
// Runner never executes it: it runs the call of the tool it names
// (throughCallTool).
func callTool() Tool {
	return Tool{
		Name:  CallToolName,
		Title: "Call a tool",
		Description: "Calls a tool that " + SearchToolName + " found: give its name and its arguments, an object " +
			"following the parameters the search listed for it.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"The tool's name, as ` + SearchToolName + ` listed it."},` +
			`"arguments":{"type":"object","description":"The tool's arguments."}},"required":["name"]}`),
		Kind: KindOther,
		Execute: func(context.Context, json.RawMessage, func(Progress)) (Result, error) {
			return Result{}, fmt.Errorf("%w: %s runs the tool it names", ErrUnknownTool, CallToolName)
		},
		builtin: true,
	}
}

// throughCallTool returns the call c makes through call_tool: of the tool
// it names, with its arguments, under c's id. A call of another tool, or
// in a request that did not offer call_tool (tools is the set the model
// was offered), is returned as it is. A call_tool call that names no tool
// (or call_tool itself) returns a failed result to give the model.
func throughCallTool(tools *Toolset, c ToolCall) (ToolCall, *Result) {
	if c.Name != CallToolName {
		return c, nil
	}
	if t, ok := tools.Lookup(CallToolName); !ok || !t.builtin {
		return c, nil
	}
	var in struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(orEmpty(c.Arguments), &in); err != nil || in.Name == "" || in.Name == CallToolName {
		return c, ptr(ErrorResult(CallToolName + ` needs {"name": "<a tool ` + SearchToolName + ` found>", "arguments": {…}}.`))
	}
	args := in.Arguments
	var quoted string
	if json.Unmarshal(args, &quoted) == nil { // some models quote the object
		args = json.RawMessage(quoted)
	}
	if string(args) == "null" {
		args = nil
	}
	return ToolCall{ID: c.ID, Name: in.Name, Arguments: args}, nil
}

// execute runs a search: it lists the matches with their definitions.
func (s *toolSearch) execute(_ context.Context, args json.RawMessage, _ func(Progress)) (Result, error) {
	var in struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := json.Unmarshal(args, &in); err != nil || strings.TrimSpace(in.Query) == "" {
		return ErrorResult(`search_tools needs {"query": "<what the tool should do>"}`), nil
	}
	limit := in.Limit
	if limit <= 0 {
		limit = searchDefault
	}
	limit = min(limit, searchMax, max(s.threshold, 1))
	hits := s.index.Search(in.Query, limit)
	if len(hits) == 0 {
		return TextResult(fmt.Sprintf("No tool matches %q. Try other words.", in.Query)), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d tools match %q. Call one with %s: {\"name\": \"<its name>\", \"arguments\": {…}}.\n", len(hits), in.Query, CallToolName)
	for _, h := range hits {
		t := s.tools[h.Index]
		fmt.Fprintf(&b, "\n## %s\n%s\nParameters: %s\n", t.Name, RunePrefix(strings.TrimSpace(t.Description), maxFoundDescription), compactSchema(t.InputSchema))
	}
	return TextResult(b.String()), nil
}

// maxFoundDescription bounds the description of a tool in a search result.
const maxFoundDescription = 1000

// compactSchema is a tool's input schema on one line.
func compactSchema(schema json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, schema) != nil {
		return `{"type":"object"}`
	}
	return b.String()
}
