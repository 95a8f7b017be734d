package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/acpgate/acpgate/gateway"
)

// This file gathers a streamed answer: each content block as the API
// returned it (its content_block_start with the deltas applied), the
// gateway's view of them (text, thinking, tool calls), the stop reason and
// the usage.

// part is the answer of one call.
type part struct {
	model  string
	blocks []*block // by index
	stop   anthropic.StopReason
	usage  gateway.Usage
}

// block is one content block on its way.
type block struct {
	typ      string
	fields   map[string]json.RawMessage // as content_block_start gave it
	id, name string                     // of a tool call, from its start
	// The deltas received: text, thinking, signature and input JSON,
	// each with whether any arrived; citations to add.
	text, thinking, signature, input strings.Builder
	hasText, hasThinking, hasSig     bool
	hasInput                         bool
	citations                        []json.RawMessage
}

// event applies one stream event.
func (pt *part) event(ev anthropic.MessageStreamEventUnion, onDelta func(gateway.Delta)) error {
	switch ev.Type {
	case "message_start":
		pt.model = string(ev.Message.Model)
		u := ev.Message.Usage
		pt.usage = gateway.Usage{InputTokens: int(u.InputTokens), OutputTokens: int(u.OutputTokens),
			CacheReadTokens: int(u.CacheReadInputTokens), CacheWriteTokens: int(u.CacheCreationInputTokens)}
	case "content_block_start":
		var fields map[string]json.RawMessage
		if err := json.Unmarshal([]byte(ev.ContentBlock.RawJSON()), &fields); err != nil {
			return fmt.Errorf("content block %d: %w", ev.Index, err)
		}
		b := &block{typ: ev.ContentBlock.Type, fields: fields}
		b.id, b.name = b.startString("id"), b.startString("name")
		for int64(len(pt.blocks)) <= ev.Index {
			pt.blocks = append(pt.blocks, nil)
		}
		pt.blocks[ev.Index] = b
	case "content_block_delta":
		if ev.Index < 0 || ev.Index >= int64(len(pt.blocks)) || pt.blocks[ev.Index] == nil {
			return fmt.Errorf("a delta for content block %d, which did not start", ev.Index)
		}
		pt.blocks[ev.Index].delta(int(ev.Index), ev.Delta, onDelta)
	case "message_delta":
		pt.stop = ev.Delta.StopReason
		// The delta's usage is cumulative; older servers send only the
		// output tokens.
		u := ev.Usage
		pt.usage.OutputTokens = int(u.OutputTokens)
		if u.JSON.InputTokens.Valid() {
			pt.usage.InputTokens = int(u.InputTokens)
		}
		if u.JSON.CacheReadInputTokens.Valid() {
			pt.usage.CacheReadTokens = int(u.CacheReadInputTokens)
		}
		if u.JSON.CacheCreationInputTokens.Valid() {
			pt.usage.CacheWriteTokens = int(u.CacheCreationInputTokens)
		}
	}
	return nil
}

// delta applies one content_block_delta to the block at index; text,
// thinking and input are passed on as they come. Delta types it does not
// know are ignored.
func (b *block) delta(index int, d anthropic.MessageStreamEventUnionDelta, onDelta func(gateway.Delta)) {
	switch d.Type {
	case "text_delta":
		b.text.WriteString(d.Text)
		b.hasText = true
		if d.Text != "" {
			onDelta(gateway.Delta{Text: d.Text})
		}
	case "thinking_delta":
		b.thinking.WriteString(d.Thinking)
		b.hasThinking = true
		if d.Thinking != "" {
			onDelta(gateway.Delta{Thinking: d.Thinking})
		}
	case "signature_delta":
		b.signature.WriteString(d.Signature)
		b.hasSig = true
	case "input_json_delta":
		b.input.WriteString(d.PartialJSON)
		b.hasInput = true
		onDelta(gateway.Delta{Call: &gateway.CallDelta{Index: index, ID: b.id, Name: b.name, Arguments: d.PartialJSON}})
	case "citations_delta":
		if raw := d.Citation.RawJSON(); raw != "" {
			b.citations = append(b.citations, json.RawMessage(raw))
		}
	}
}

// startString is the string field name of the block's start ("" if none).
func (b *block) startString(name string) string {
	var s string
	_ = json.Unmarshal(b.fields[name], &s)
	return s
}

// finish returns the block as the API would have returned it whole, or
// nil for a text block left empty (the API refuses empty text blocks).
func (b *block) finish() (json.RawMessage, error) {
	f := b.fields
	set := func(name string, sb *strings.Builder) {
		v, _ := json.Marshal(b.startString(name) + sb.String())
		f[name] = v
	}
	if b.hasText {
		set("text", &b.text)
	}
	if b.hasThinking {
		set("thinking", &b.thinking)
	}
	if b.hasSig {
		set("signature", &b.signature)
	}
	if b.hasInput {
		in := strings.TrimSpace(b.input.String())
		if in == "" {
			in = "{}"
		}
		if !json.Valid([]byte(in)) {
			return nil, fmt.Errorf("the input of the %s block %s is not valid JSON (the answer was cut off?)", b.typ, f["name"])
		}
		f["input"] = json.RawMessage(in)
	}
	if len(b.citations) > 0 {
		var all []json.RawMessage
		_ = json.Unmarshal(f["citations"], &all)
		f["citations"], _ = json.Marshal(append(all, b.citations...))
	}
	if b.typ == "text" && b.startString("text") == "" && !hasCitations(f) {
		return nil, nil
	}
	return json.Marshal(f)
}

// hasCitations reports whether a block's citations list is non-empty.
func hasCitations(f map[string]json.RawMessage) bool {
	c := bytes.TrimSpace(f["citations"])
	return len(c) > 0 && !bytes.Equal(c, []byte("null")) && !bytes.Equal(c, []byte("[]"))
}

// answer is a whole answer: the parts of a paused turn, in order.
type answer struct {
	model  string
	blocks []json.RawMessage // every block, finished
	stop   anthropic.StopReason
	usage  gateway.Usage
}

// add appends a part.
func (a *answer) add(pt *part) {
	a.model, a.stop, a.usage = pt.model, pt.stop, a.usage.Add(pt.usage)
	for _, b := range pt.blocks {
		if b == nil {
			continue
		}
		raw, err := b.finish()
		if err != nil || raw == nil {
			// A cut-off block (max_tokens in a tool call's input) or an
			// empty text block is not kept: the API would refuse it.
			continue
		}
		a.blocks = append(a.blocks, raw)
	}
}

// assistant is the answer so far as an assistant message, sent back to
// continue a paused turn.
func (a *answer) assistant() (anthropic.MessageParam, error) {
	raw, err := a.native()
	if err != nil {
		return anthropic.MessageParam{}, err
	}
	return nativeMessage(raw), nil
}

// native is the blocks as one JSON array.
func (a *answer) native() (json.RawMessage, error) {
	if len(a.blocks) == 0 {
		return json.RawMessage("[]"), nil
	}
	return json.Marshal(a.blocks)
}

// response converts the answer for the gateway: text, thinking and tool
// calls from the blocks; the blocks themselves as the message's Native
// content when they hold more than those say (thinking, redacted
// thinking, server tools, citations, text after a tool call).
func (a *answer) response() (gateway.ModelResponse, error) {
	msg := gateway.Message{Role: gateway.RoleAssistant}
	var text, thinking strings.Builder
	plain, called := true, false
	for _, raw := range a.blocks {
		var b struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			Thinking  string          `json:"thinking"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
			Citations json.RawMessage `json:"citations"`
		}
		if err := json.Unmarshal(raw, &b); err != nil {
			return gateway.ModelResponse{}, fmt.Errorf("%w: a content block: %w", gateway.ErrProvider, err)
		}
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
			c := bytes.TrimSpace(b.Citations)
			plain = plain && !called && (len(c) == 0 || string(c) == "null" || string(c) == "[]")
		case "tool_use":
			msg.ToolCalls = append(msg.ToolCalls, gateway.ToolCall{ID: b.ID, Name: b.Name, Arguments: b.Input})
			called = true
		case "thinking":
			thinking.WriteString(b.Thinking)
			plain = false
		default:
			plain = false
		}
	}
	if t := text.String(); t != "" {
		msg.Content = []gateway.Content{{Type: gateway.ContentText, Text: t}}
	}
	msg.Thinking = thinking.String()
	if !plain {
		raw, err := a.native()
		if err != nil {
			return gateway.ModelResponse{}, fmt.Errorf("%w: %w", gateway.ErrProvider, err)
		}
		msg.Native = &gateway.Native{Provider: Format, Content: raw}
	}
	return gateway.ModelResponse{Message: msg, Stop: stopReason(a.stop, len(msg.ToolCalls) > 0), Usage: a.usage, Model: a.model}, nil
}

// stopReason maps the API's stop reason. A context window filled while
// answering (model_context_window_exceeded) ends the answer like its
// token limit; a turn still paused after maxPauses ends it.
func stopReason(s anthropic.StopReason, calls bool) gateway.StopReason {
	switch s {
	case anthropic.StopReasonMaxTokens, anthropic.StopReasonModelContextWindowExceeded:
		return gateway.StopMaxTokens
	case anthropic.StopReasonRefusal:
		return gateway.StopRefusal
	}
	if calls {
		return gateway.StopToolUse
	}
	return gateway.StopEndTurn
}
