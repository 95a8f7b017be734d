package wire

import (
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// RawSchemas keeps each tool's inputSchema exactly as the server sent it.
// mcp-go decodes schemas into a struct that keeps only type, properties,
// required, additionalProperties and $defs at the top level, so a
// top-level anyOf, description or $schema would be lost; tools are handed
// on with these raw schemas instead ([RawSchemas.Apply]). The zero value
// is ready; safe for concurrent use.
type RawSchemas struct {
	mu sync.Mutex
	m  map[string]json.RawMessage
}

// Capture keeps the input schemas of a tools/list result page (a result
// that is not one is ignored: mcp-go reports it).
func (r *RawSchemas) Capture(result json.RawMessage) {
	var page struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &page) != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]json.RawMessage{}
	}
	for _, t := range page.Tools {
		if len(t.InputSchema) > 0 {
			r.m[t.Name] = t.InputSchema
		}
	}
}

// Apply replaces the decoded input schemas of tools by the raw ones
// captured for their names.
func (r *RawSchemas) Apply(tools []mcp.Tool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range tools {
		if raw, ok := r.m[tools[i].Name]; ok {
			tools[i].RawInputSchema = raw
			tools[i].InputSchema = mcp.ToolInputSchema{}
		}
	}
}
