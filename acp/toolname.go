package acp

import (
	"encoding/json"

	"github.com/acpgate/acpgate/gateway"
)

// This file is the schema's name member of a tool call (ToolCall.name,
// ToolCallUpdate.name, stable since ACP v1.22): the programmatic name of
// the tool called, beside its human title. acp-go-sdk v0.13.0's types
// lack it.

// callName is the name a call's updates carry: an MCP tool's own name
// (the bridge's Meta "mcpTool"), a native tool's name otherwise.
func callName(c *gateway.CallInfo) string {
	if c == nil {
		return ""
	}
	if name, ok := c.Meta["mcpTool"].(string); ok && name != "" {
		return name
	}
	return c.Name
}

// toolUpdate is a tool_call or tool_call_update session update (or a
// permission request's ToolCallUpdate) with its name ("" sends none:
// absent means unchanged). It marshals as the SDK's value with the name
// member added.
type toolUpdate struct {
	update any // an acpsdk.SessionUpdate or acpsdk.ToolCallUpdate
	name   string
}

// named returns u, a tool_call or tool_call_update (or a ToolCallUpdate),
// carrying the name of call c.
func named(u any, c *gateway.CallInfo) toolUpdate {
	return toolUpdate{update: u, name: callName(c)}
}

// MarshalJSON implements json.Marshaler.
func (t toolUpdate) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(encodable(t.update))
	if err != nil || t.name == "" || len(b) < 2 || b[0] != '{' {
		return b, err
	}
	name, err := json.Marshal(t.name)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(b)+len(name)+9)
	out = append(append(append(out, `{"name":`...), name...), ',')
	if len(b) == 2 { // {}: nothing else to add
		out = out[:len(out)-1]
	}
	return append(out, b[1:]...), nil
}
