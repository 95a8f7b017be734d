package main

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
)

// recordMetaCapabilities records the client capabilities a 2026-07-28
// tools/list request carries in its _meta ("meta capabilities <json>"),
// the stateless revision's counterpart of initialize's "capabilities".
func (a *app) recordMetaCapabilities(method string, raw json.RawMessage) {
	if mcp.MCPMethod(method) != mcp.MethodToolsList {
		return
	}
	var m struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return
	}
	if caps, ok := m.Params.Meta[mcp.MetaKeyClientCapabilities]; ok {
		a.rec.event("meta capabilities %s", caps)
	}
}
