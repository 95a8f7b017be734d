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
	// Native is the message as its provider returned it, for that provider
	// to send back exactly (Anthropic's thinking blocks with their
	// signatures, for one); nil when there is nothing the fields above do
	// not say. The fields above say the same in the gateway's terms, and
	// other providers use them. Whoever changes a message's content drops
	// Native.
	Native *Native `json:"native,omitempty"`
	// Summary marks the messages a compaction wrote in place of the turns
	// it summarised: acpgate's note (RoleUser) and the summary the model
	// wrote (RoleAssistant: the model's own earlier words, never the
	// user's). Neither is a turn of the user's.
	Summary bool `json:"summary,omitempty"`
}

// Native is a message in one provider's own format. It is plain data.
type Native struct {
	// Provider names the format, as "anthropic".
	Provider string `json:"provider"`
	// Content is the provider's own content of the message, JSON as
	// encoding/json writes it (so that it round-trips byte for byte).
	Content json.RawMessage `json:"content"`
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
