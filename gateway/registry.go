package gateway

import (
	"slices"
	"strings"
	"sync"
)

// Registry holds the native tools every session has and the extra tools of
// each session (its MCP tools). A session sees its own extra tools and the
// native ones, never another session's. Safe for concurrent use.
type Registry struct {
	native []Tool

	mu    sync.RWMutex
	extra map[string][]Tool // session key -> tools, in the order given
}

// NewRegistry returns a Registry with the given native tools.
func NewRegistry(native ...Tool) *Registry {
	return &Registry{native: slices.Clone(native), extra: map[string][]Tool{}}
}

// SetExtraTools replaces the extra tools of session key. A tool whose name
// is a native tool's is left out (native tools are never shadowed).
func (r *Registry) SetExtraTools(key string, tools []Tool) {
	kept := make([]Tool, 0, len(tools))
	for _, t := range tools {
		if !r.isNative(t.Name) {
			kept = append(kept, t)
		}
	}
	r.mu.Lock()
	r.extra[key] = kept
	r.mu.Unlock()
}

// ClearExtraTools removes the extra tools of session key.
func (r *Registry) ClearExtraTools(key string) {
	r.mu.Lock()
	delete(r.extra, key)
	r.mu.Unlock()
}

func (r *Registry) isNative(name string) bool {
	return slices.ContainsFunc(r.native, func(t Tool) bool { return t.Name == name })
}

// Tools returns session key's tools: the native ones, then its extra tools.
func (r *Registry) Tools(key string) []Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append(slices.Clone(r.native), r.extra[key]...)
}

// Lookup finds tool name among session key's tools.
func (r *Registry) Lookup(key, name string) (Tool, bool) {
	for _, t := range r.native {
		if t.Name == name {
			return t, true
		}
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, t := range r.extra[key] {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// Filter returns session key's tools whose name or title contains substr
// (case-insensitive); all of them when substr is empty.
func (r *Registry) Filter(key, substr string) []Tool {
	all := r.Tools(key)
	if substr == "" {
		return all
	}
	substr = strings.ToLower(substr)
	return slices.DeleteFunc(all, func(t Tool) bool {
		return !strings.Contains(strings.ToLower(t.Name), substr) && !strings.Contains(strings.ToLower(t.Title), substr)
	})
}
