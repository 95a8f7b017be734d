package acp

import (
	"encoding/json"

	acpsdk "github.com/coder/acp-go-sdk"
)

// This file encodes the session updates every turn sends, the same JSON
// values acp-go-sdk's MarshalJSON methods give, at a fraction of their
// cost. The SDK encodes each of its unions (SessionUpdate, ToolCallContent,
// ContentBlock) by marshalling the variant, decoding that into a map,
// setting the discriminator and marshalling the map again, so a tool
// call's content is encoded, decoded and re-encoded once per level it is
// nested in: a third of acpgate's CPU per /call went there
// (docs/benchmarks.md, "acpgate end to end"). Here each variant, whose
// struct already has its discriminator member, is encoded once with the
// discriminator set; the variants a turn sends often get mirror structs
// whose nested unions are encoded the same way. Anything else is encoded by
// the SDK. TestUpdateJSON checks both give the same value for every
// variant. The mirrors' members are in the order the SDK writes them
// (its maps sort them), so that the frames are byte for byte the SDK's
// (TestSplicedUpdateIsTheSDKs): that is why toolCallUpdateJSON repeats
// permissionCallJSON's members rather than embedding them.

// updateJSON is a SessionUpdate that marshals as the SDK's does.
type updateJSON acpsdk.SessionUpdate

// MarshalJSON implements json.Marshaler.
func (u updateJSON) MarshalJSON() ([]byte, error) {
	switch {
	case u.UserMessageChunk != nil:
		c := u.UserMessageChunk
		return json.Marshal(chunkJSON{Meta: c.Meta, Content: blockJSON(c.Content), MessageID: c.MessageId, SessionUpdate: "user_message_chunk"})
	case u.AgentMessageChunk != nil:
		c := u.AgentMessageChunk
		return json.Marshal(chunkJSON{Meta: c.Meta, Content: blockJSON(c.Content), MessageID: c.MessageId, SessionUpdate: "agent_message_chunk"})
	case u.AgentThoughtChunk != nil:
		c := u.AgentThoughtChunk
		return json.Marshal(chunkJSON{Meta: c.Meta, Content: blockJSON(c.Content), MessageID: c.MessageId, SessionUpdate: "agent_thought_chunk"})
	case u.ToolCall != nil:
		c := u.ToolCall
		return json.Marshal(toolCallJSON{Meta: c.Meta, Content: toolContentsJSON(c.Content), Kind: c.Kind, Locations: c.Locations,
			RawInput: c.RawInput, RawOutput: c.RawOutput, SessionUpdate: "tool_call", Status: c.Status, Title: c.Title, ToolCallID: c.ToolCallId})
	case u.ToolCallUpdate != nil:
		c := u.ToolCallUpdate
		return json.Marshal(toolCallUpdateJSON{Meta: c.Meta, Content: toolContentsJSON(c.Content), Kind: c.Kind, Locations: c.Locations,
			RawInput: c.RawInput, RawOutput: c.RawOutput, SessionUpdate: "tool_call_update", Status: c.Status, Title: c.Title, ToolCallID: c.ToolCallId})
	}
	return acpsdk.SessionUpdate(u).MarshalJSON()
}

// encodable returns v with the SDK's unions it may be (a SessionUpdate, a
// ToolCallUpdate) replaced by the types of this file that encode them.
func encodable(v any) any {
	switch u := v.(type) {
	case acpsdk.SessionUpdate:
		return updateJSON(u)
	case acpsdk.ToolCallUpdate:
		return permissionCallJSON{Meta: u.Meta, Content: toolContentsJSON(u.Content), Kind: u.Kind, Locations: u.Locations,
			RawInput: u.RawInput, RawOutput: u.RawOutput, Status: u.Status, Title: u.Title, ToolCallID: u.ToolCallId}
	}
	return v
}

// chunkJSON mirrors the SDK's SessionUpdateUserMessageChunk,
// SessionUpdateAgentMessageChunk and SessionUpdateAgentThoughtChunk.
type chunkJSON struct {
	Meta          map[string]any `json:"_meta,omitempty"`
	Content       blockJSON      `json:"content"`
	MessageID     *string        `json:"messageId,omitempty"`
	SessionUpdate string         `json:"sessionUpdate"`
}

// toolCallJSON mirrors the SDK's SessionUpdateToolCall.
type toolCallJSON struct {
	Meta          map[string]any            `json:"_meta,omitempty"`
	Content       []toolContentJSON         `json:"content,omitempty"`
	Kind          acpsdk.ToolKind           `json:"kind,omitempty"`
	Locations     []acpsdk.ToolCallLocation `json:"locations,omitempty"`
	RawInput      any                       `json:"rawInput,omitempty"`
	RawOutput     any                       `json:"rawOutput,omitempty"`
	SessionUpdate string                    `json:"sessionUpdate"`
	Status        acpsdk.ToolCallStatus     `json:"status,omitempty"`
	Title         string                    `json:"title"`
	ToolCallID    acpsdk.ToolCallId         `json:"toolCallId"`
}

// toolCallUpdateJSON mirrors the SDK's SessionToolCallUpdate.
type toolCallUpdateJSON struct {
	Meta          map[string]any            `json:"_meta,omitempty"`
	Content       []toolContentJSON         `json:"content,omitempty"`
	Kind          *acpsdk.ToolKind          `json:"kind,omitempty"`
	Locations     []acpsdk.ToolCallLocation `json:"locations,omitempty"`
	RawInput      any                       `json:"rawInput,omitempty"`
	RawOutput     any                       `json:"rawOutput,omitempty"`
	SessionUpdate string                    `json:"sessionUpdate"`
	Status        *acpsdk.ToolCallStatus    `json:"status,omitempty"`
	Title         *string                   `json:"title,omitempty"`
	ToolCallID    acpsdk.ToolCallId         `json:"toolCallId"`
}

// permissionCallJSON mirrors the SDK's ToolCallUpdate (the call a
// permission request shows).
type permissionCallJSON struct {
	Meta       map[string]any            `json:"_meta,omitempty"`
	Content    []toolContentJSON         `json:"content,omitempty"`
	Kind       *acpsdk.ToolKind          `json:"kind,omitempty"`
	Locations  []acpsdk.ToolCallLocation `json:"locations,omitempty"`
	RawInput   any                       `json:"rawInput,omitempty"`
	RawOutput  any                       `json:"rawOutput,omitempty"`
	Status     *acpsdk.ToolCallStatus    `json:"status,omitempty"`
	Title      *string                   `json:"title,omitempty"`
	ToolCallID acpsdk.ToolCallId         `json:"toolCallId"`
}

// toolContentJSON is a ToolCallContent that marshals as the SDK's does.
type toolContentJSON acpsdk.ToolCallContent

// toolContentsJSON converts a call's content (nil stays nil, so that
// omitempty omits it as before).
func toolContentsJSON(cs []acpsdk.ToolCallContent) []toolContentJSON {
	if cs == nil {
		return nil
	}
	out := make([]toolContentJSON, len(cs))
	for i, c := range cs {
		out[i] = toolContentJSON(c)
	}
	return out
}

// toolContentContentJSON mirrors the SDK's ToolCallContentContent.
type toolContentContentJSON struct {
	Meta    map[string]any `json:"_meta,omitempty"`
	Content blockJSON      `json:"content"`
	Type    string         `json:"type"`
}

// MarshalJSON implements json.Marshaler.
func (c toolContentJSON) MarshalJSON() ([]byte, error) {
	if v := c.Content; v != nil { // the SDK too takes this variant first
		return json.Marshal(toolContentContentJSON{Meta: v.Meta, Content: blockJSON(v.Content), Type: "content"})
	}
	return acpsdk.ToolCallContent(c).MarshalJSON()
}

// blockJSON is a ContentBlock that marshals as the SDK's does: a text
// block as its type and text only (the SDK sends neither its annotations
// nor its _meta), any other block by the SDK.
type blockJSON acpsdk.ContentBlock

// textBlockJSON is the text block the SDK sends.
type textBlockJSON struct {
	Text string `json:"text"`
	Type string `json:"type"`
}

// MarshalJSON implements json.Marshaler.
func (b blockJSON) MarshalJSON() ([]byte, error) {
	if t := b.Text; t != nil { // the SDK too takes this variant first
		return json.Marshal(textBlockJSON{Text: t.Text, Type: "text"})
	}
	return acpsdk.ContentBlock(b).MarshalJSON()
}
