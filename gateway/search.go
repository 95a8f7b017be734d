package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/acpgate/acpgate/gateway/toolsearch"
)

// SearchToolName is the name of the tool the model gets instead of a
// session's MCP tools when they are too many (see RunOptions.SearchThreshold).
const SearchToolName = "search_tools"

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

// toolSearch is the state of tool search in one turn: the index over the
// tools the model may use, and the tools found so far, whose definitions
// the next model requests carry (most recently found last, at most
// threshold of them). Used from the turn's goroutine only, except for the
// search tool's Execute, which runs while the turn waits for it.
type toolSearch struct {
	threshold int
	set       *Toolset // the tools indexed
	tools     []Tool   // the deferred tools, in the index's order
	index     *toolsearch.Index

	mu     sync.Mutex // the model may search twice in one answer
	loaded []string   // names, least recently found first
}

// searching decides whether this model call uses tool search: the tools
// the policy exposes, not counting native ones, are more than the
// threshold, or their schemas take more than a tenth of the model's
// context window (when known, in tokens, estimated at 4 bytes a token).
// It returns nil when every tool is to be offered.
func (r *Runner) searching(prev *toolSearch, tools *Toolset, opts *RunOptions) *toolSearch {
	threshold, acc, contextWindow := opts.SearchThreshold, &opts.ToolAccess, opts.ContextWindow
	switch {
	case threshold == NoToolSearch:
		return nil
	case threshold <= 0:
		threshold = DefaultSearchThreshold
	}
	if prev != nil && prev.set == tools {
		return prev
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
		return nil
	}
	s := &toolSearch{threshold: threshold, set: tools, tools: deferred, index: tools.searchIndex(deferred)}
	if prev != nil { // the tools changed mid-turn: keep what is still there
		for _, name := range prev.found() {
			if _, ok := tools.Lookup(name); ok {
				s.loaded = append(s.loaded, name)
			}
		}
	}
	return s
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
		docs[i] = toolsearch.Doc{Name: t.Name, Title: t.Title, Description: t.Description, Schema: t.InputSchema}
	}
	ts.search = &searchMemo{names: names, index: toolsearch.New(docs)}
	return ts.search.index
}

// specs returns the tool definitions of a model request in search mode:
// the native tools, the search tool and the tools found so far.
func (s *toolSearch) specs(tools *Toolset, acc *ToolAccess) []ToolSpec {
	specs := exposed(tools.Native(), acc)
	specs = append(specs, s.tool().spec())
	for _, name := range s.found() {
		if t, ok := tools.Lookup(name); ok && acc.allowed(t) {
			specs = append(specs, t.spec())
		}
	}
	return specs
}

// withSearch returns tools with the search tool added as a native tool, for
// looking the model's calls up in.
func (s *toolSearch) withSearch(tools *Toolset) *Toolset {
	return NewToolset(append(slices.Clone(tools.Native()), s.tool()), tools.Extra())
}

// tool is the search tool of this turn.
func (s *toolSearch) tool() Tool {
	return Tool{
		Name:  SearchToolName,
		Title: "Search tools",
		Description: fmt.Sprintf("This session has %d more tools than are listed here. Search them by what you need to do "+
			"(or by a tool's exact name); the best matches are listed with their names and descriptions, and from your next "+
			"step on you can call them by name like any other tool.", len(s.tools)),
		InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"What the tool should do, in a few words, or its name."},` +
			`"limit":{"type":"integer","minimum":1,"maximum":20,"description":"How many matches to return (default 8)."}},"required":["query"]}`),
		Kind:        KindSearch,
		Annotations: Annotations{ReadOnly: true, Idempotent: true},
		Execute:     s.execute,
		builtin:     true,
	}
}

// execute runs a search and loads the matches.
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
	fmt.Fprintf(&b, "%d tools match %q; you can call them now:\n", len(hits), in.Query)
	for i := len(hits) - 1; i >= 0; i-- { // the best one loaded last: kept longest
		s.load(s.tools[hits[i].Index].Name)
	}
	for _, h := range hits {
		t := s.tools[h.Index]
		fmt.Fprintf(&b, "- %s: %s\n", t.Name, oneLine(t.Description))
	}
	return TextResult(b.String()), nil
}

// found returns the names of the tools found so far.
func (s *toolSearch) found() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.loaded)
}

// load marks a tool found, dropping the least recently found beyond the
// threshold.
func (s *toolSearch) load(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loaded = slices.DeleteFunc(s.loaded, func(n string) bool { return n == name })
	s.loaded = append(s.loaded, name)
	if over := len(s.loaded) - max(s.threshold, 1); over > 0 {
		s.loaded = s.loaded[over:]
	}
}

// oneLine is the first line of a description, at most 160 characters.
func oneLine(desc string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(desc), "\n")
	return RunePrefix(line, 160)
}
