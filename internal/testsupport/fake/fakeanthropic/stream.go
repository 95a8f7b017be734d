package fakeanthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/acpgate/acpgate/internal/testsupport/fake/scripted"
)

// message renders one turn as a response.
type message struct {
	id, model string
	turn      Turn
	reqNum    int
}

func (m message) stopReason() string {
	if m.turn.StopReason != "" {
		return m.turn.StopReason
	}
	for _, b := range m.turn.Blocks {
		if b.Type == "tool_use" {
			return "tool_use"
		}
	}
	return "end_turn"
}

func (m message) usage() Usage {
	if m.turn.Usage != nil {
		return *m.turn.Usage
	}
	return Usage{InputTokens: 10, OutputTokens: 5}
}

// json is the usage object; message_start's (inputOnly) reports at most
// one output token.
func (u Usage) json(inputOnly bool) map[string]any {
	out := map[string]any{
		"input_tokens":                u.InputTokens,
		"cache_creation_input_tokens": u.CacheCreationInputTokens,
		"cache_read_input_tokens":     u.CacheReadInputTokens,
		"output_tokens":               u.OutputTokens,
	}
	if inputOnly {
		out["output_tokens"] = min(u.OutputTokens, 1)
	}
	return out
}

func (m message) toolID(i int) string {
	b := m.turn.Blocks[i]
	switch {
	case b.ID != "":
		return b.ID
	case b.Type == "server_tool_use":
		return fmt.Sprintf("srvtoolu_%d_%d", m.reqNum, i)
	}
	return fmt.Sprintf("toolu_%d_%d", m.reqNum, i)
}

// whole returns block i complete, as in a non-streamed message.
func (m message) whole(i int) any {
	b := m.turn.Blocks[i]
	if b.Raw != nil {
		return b.Raw
	}
	switch b.Type {
	case "text":
		return map[string]any{"type": "text", "text": b.Text}
	case "thinking":
		return map[string]any{"type": "thinking", "thinking": b.Thinking, "signature": b.Signature}
	case "redacted_thinking":
		return map[string]any{"type": "redacted_thinking", "data": b.Data}
	case "tool_use", "server_tool_use":
		input := json.RawMessage(b.Input)
		if len(input) == 0 {
			input = json.RawMessage("{}")
		}
		return map[string]any{"type": b.Type, "id": m.toolID(i), "name": b.Name, "input": input}
	}
	return b.Raw
}

// start returns block i as content_block_start carries it, and the
// deltas that complete it.
func (m message) start(i int) (any, []map[string]any) {
	b := m.turn.Blocks[i]
	if b.Raw != nil {
		return b.Raw, nil
	}
	var deltas []map[string]any
	switch b.Type {
	case "text":
		for _, p := range Split(b.Text, pieceSize) {
			deltas = append(deltas, map[string]any{"type": "text_delta", "text": p})
		}
		return map[string]any{"type": "text", "text": ""}, deltas
	case "thinking":
		for _, p := range Split(b.Thinking, pieceSize) {
			deltas = append(deltas, map[string]any{"type": "thinking_delta", "thinking": p})
		}
		deltas = append(deltas, map[string]any{"type": "signature_delta", "signature": b.Signature})
		return map[string]any{"type": "thinking", "thinking": "", "signature": ""}, deltas
	case "tool_use", "server_tool_use":
		for _, p := range Split(b.Input, pieceSize) {
			deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": p})
		}
		return map[string]any{"type": b.Type, "id": m.toolID(i), "name": b.Name, "input": map[string]any{}}, deltas
	}
	return m.whole(i), nil
}

// object is the non-streamed message.
func (m message) object() map[string]any {
	content := make([]any, len(m.turn.Blocks))
	for i := range m.turn.Blocks {
		content[i] = m.whole(i)
	}
	return map[string]any{
		"id": m.id, "type": "message", "role": "assistant", "model": m.model, "content": content,
		"stop_reason": m.stopReason(), "stop_sequence": nil, "usage": m.usage().json(false),
	}
}

// events returns the streamed events, as (event type, data) pairs.
func (m message) events() [][2]any {
	var out [][2]any
	add := func(typ string, data map[string]any) {
		data["type"] = typ
		out = append(out, [2]any{typ, data})
	}
	add("message_start", map[string]any{"message": map[string]any{
		"id": m.id, "type": "message", "role": "assistant", "model": m.model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": m.usage().json(true),
	}})
	if m.turn.StreamError != "" {
		return append(out, [2]any{"error", errorBody(m.turn.StreamError, "stream failed")})
	}
	for i := range m.turn.Blocks {
		block, deltas := m.start(i)
		add("content_block_start", map[string]any{"index": i, "content_block": block})
		if i == 0 {
			add("ping", map[string]any{})
		}
		for _, d := range deltas {
			add("content_block_delta", map[string]any{"index": i, "delta": d})
		}
		add("content_block_stop", map[string]any{"index": i})
	}
	add("message_delta", map[string]any{"delta": map[string]any{"stop_reason": m.stopReason(), "stop_sequence": nil}, "usage": m.usage().json(false)})
	add("message_stop", map[string]any{})
	return out
}

// stream writes the events as server-sent events.
func (m message) stream(w http.ResponseWriter) {
	rc := scripted.StartEvents(w)
	for _, ev := range m.events() {
		data, err := json.Marshal(ev[1])
		if err != nil {
			return
		}
		var buf bytes.Buffer
		fmt.Fprintf(&buf, "event: %s\ndata: %s\n\n", ev[0], data)
		if _, err := w.Write(buf.Bytes()); err != nil || rc.Flush() != nil {
			return
		}
	}
}
