package gateway

import (
	"slices"
	"strings"
	"sync"
)

// Toolset is an immutable, ordered set of tools with unique names: the
// tools one session offers at one moment. A nil *Toolset is empty. Safe
// for concurrent use (its tools never change once built; the tool search
// index it memoizes is guarded by a lock).
type Toolset struct {
	tools  []Tool
	index  map[string]int
	native int // tools[:native] are the native tools

	searchMu sync.Mutex
	search   *searchMemo // the last tool search index built over these tools
}

// NewToolset returns the set of native tools followed by extra ones (the
// tools a session gets from elsewhere, its tool servers'), in order. An extra tool whose name is a native
// tool's, or an earlier extra tool's, is left out: native tools are never
// shadowed.
func NewToolset(native, extra []Tool) *Toolset {
	ts := &Toolset{tools: make([]Tool, 0, len(native)+len(extra)), index: make(map[string]int, len(native)+len(extra))}
	for i, t := range slices.Concat(native, extra) {
		if _, dup := ts.index[t.Name]; dup {
			continue
		}
		ts.index[t.Name] = len(ts.tools)
		ts.tools = append(ts.tools, t)
		if i < len(native) {
			ts.native++
		}
	}
	return ts
}

// Native returns the native tools (the first of Tools). The slice is
// shared: do not modify it.
func (ts *Toolset) Native() []Tool {
	if ts == nil {
		return nil
	}
	return ts.tools[:ts.native:ts.native]
}

// Extra returns the tools after the native ones (a session's tools from
// elsewhere).
// The slice is shared: do not modify it.
func (ts *Toolset) Extra() []Tool {
	if ts == nil {
		return nil
	}
	return ts.tools[ts.native:]
}

// Current returns ts itself: a fixed Toolset is a ToolView that never
// changes.
func (ts *Toolset) Current() *Toolset { return ts }

// Tools returns the tools in order. The slice is shared: do not modify it.
func (ts *Toolset) Tools() []Tool {
	if ts == nil {
		return nil
	}
	return ts.tools
}

// Len is the number of tools.
func (ts *Toolset) Len() int {
	if ts == nil {
		return 0
	}
	return len(ts.tools)
}

// Lookup finds the tool called name.
func (ts *Toolset) Lookup(name string) (Tool, bool) {
	if ts == nil {
		return Tool{}, false
	}
	i, ok := ts.index[name]
	if !ok {
		return Tool{}, false
	}
	return ts.tools[i], true
}

// Filter returns, in a new slice, the tools whose name or title contains
// substr (case-insensitive); all of them when substr is empty.
func (ts *Toolset) Filter(substr string) []Tool {
	all := slices.Clone(ts.Tools())
	if substr == "" {
		return all
	}
	substr = strings.ToLower(substr)
	return slices.DeleteFunc(all, func(t Tool) bool {
		return !strings.Contains(strings.ToLower(t.Name), substr) && !strings.Contains(strings.ToLower(t.Title), substr)
	})
}

// ToolView gives the tools a session offers now. The Runner calls Current
// once per model call (the tools offered, and the tools the answer's calls
// are looked up in), so a view that changes (as the session's tool
// servers come and go) reaches the next model call. Current must be cheap and safe for concurrent use.
type ToolView interface {
	Current() *Toolset
}
