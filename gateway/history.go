package gateway

import "encoding/json"

// Role is who a Message is from.
type Role string

// The roles of a conversation.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool" // the result of one tool call
)

// ToolCall is a model's request to call a tool.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Message is one entry of a conversation. It is plain data and round-trips
// through encoding/json exactly.
type Message struct {
	Role Role `json:"role"`
	// Content is the user's input (text, images, resources) or the
	// assistant's text (one text block).
	Content []Content `json:"content,omitempty"`
	// Thinking is the assistant's reasoning text, if the model streamed any.
	Thinking string `json:"thinking,omitempty"`
	// ToolCalls are the assistant's tool calls.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// ToolCallID, ToolName and Result make up a RoleTool message.
	ToolCallID string  `json:"toolCallId,omitempty"`
	ToolName   string  `json:"toolName,omitempty"`
	Result     *Result `json:"result,omitempty"`
}

// Text returns the concatenated text blocks of m.
func (m *Message) Text() string {
	var s string
	for _, c := range m.Content {
		if c.Type == ContentText {
			s += c.Text
		}
	}
	return s
}

// History is a conversation, oldest first. Store it with encoding/json; it
// decodes to an equal value.
type History []Message
