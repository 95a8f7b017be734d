package acp

import (
	"encoding/json"

	acpsdk "github.com/coder/acp-go-sdk"
)

// This file names the session and tool call an ACP elicitation belongs to.

// ACP's elicitation/create names the session (and tool call) it belongs
// to: its params carry sessionId and toolCallId next to mode, message and
// requestedSchema or url. acp-go-sdk v0.13.0's UnstableCreateElicitation
// types lack these members (its generator dropped the schema's allOf), and
// clients validating the request (the TypeScript SDK does) refuse one
// without a scope. So acpgate sends the scope in the request's _meta,
// under scopeKey, and the writer moves it to where the protocol has it
// before the frame leaves (scopeFrame).

// scopeKey is the _meta member carrying an elicitation's scope on its way
// to the writer.
const scopeKey = "acpgate.elicitationScope"

// elicitationScope is the scope of an elicitation: the session and,
// optionally, the tool call.
type elicitationScope struct {
	SessionID  string `json:"sessionId"`
	ToolCallID string `json:"toolCallId,omitempty"`
}

// scopeMeta is the _meta of an elicitation/create of scope sc.
func scopeMeta(sc elicitationScope) map[string]any {
	return map[string]any{scopeKey: sc}
}

// scopeFrame returns frame with the scope of an elicitation/create moved
// from its _meta to its params; any other frame is returned as it is.
func scopeFrame(frame []byte) []byte {
	var msg map[string]json.RawMessage
	if json.Unmarshal(frame, &msg) != nil {
		return frame
	}
	var method string
	if json.Unmarshal(msg["method"], &method) != nil || method != acpsdk.ClientMethodElicitationCreate {
		return frame
	}
	var params map[string]json.RawMessage
	var meta map[string]json.RawMessage
	if json.Unmarshal(msg["params"], &params) != nil || json.Unmarshal(params["_meta"], &meta) != nil {
		return frame
	}
	var sc elicitationScope
	if json.Unmarshal(meta[scopeKey], &sc) != nil || sc.SessionID == "" {
		return frame
	}
	delete(meta, scopeKey)
	params["sessionId"], _ = json.Marshal(sc.SessionID)
	if sc.ToolCallID != "" {
		params["toolCallId"], _ = json.Marshal(sc.ToolCallID)
	}
	if len(meta) == 0 {
		delete(params, "_meta")
	} else {
		params["_meta"], _ = json.Marshal(meta)
	}
	var err error
	if msg["params"], err = json.Marshal(params); err != nil {
		return frame
	}
	out, err := json.Marshal(msg)
	if err != nil {
		return frame
	}
	return append(out, '\n')
}
