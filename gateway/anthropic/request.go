package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/acpgate/acpgate/gateway"
)

// This file builds a Messages request from a gateway request: the system
// prompt as the top-level system, the tools, the history (this provider's
// own messages sent back as returned, tool results grouped in the user
// message that follows the calls), and the prompt cache breakpoints.

// MaxBreakpoints is the API's limit of cache_control breakpoints in one
// request.
const MaxBreakpoints = 4

// params converts a gateway request to the SDK's.
func (p *Provider) params(req gateway.ModelRequest) (anthropic.MessageNewParams, error) {
	params := anthropic.MessageNewParams{Model: anthropic.Model(p.cfg.Model), MaxTokens: int64(p.cfg.MaxTokens), StopSequences: req.Stop}
	if req.MaxTokens > 0 {
		params.MaxTokens = int64(req.MaxTokens)
	} else if p.cfg.ThinkingBudget >= p.cfg.MaxTokens {
		params.MaxTokens = int64(p.cfg.ThinkingBudget + p.cfg.MaxTokens)
	}
	// Temperature: the Messages API of this SDK's version has none; it is
	// not sent.
	forced := req.ToolChoice == gateway.ToolChoiceRequired && len(req.Tools) > 0
	p.thinking(&params, forced)
	if len(req.Tools) > 0 {
		switch req.ToolChoice {
		case gateway.ToolChoiceRequired:
			params.ToolChoice = anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{}}
		case gateway.ToolChoiceNone:
			none := anthropic.NewToolChoiceNoneParam()
			params.ToolChoice = anthropic.ToolChoiceUnionParam{OfNone: &none}
		}
	}
	tools, err := toolParams(req.Tools)
	if err != nil {
		return params, err
	}
	params.Tools = tools
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	params.Messages = messages(req.Messages)
	if len(params.Messages) == 0 {
		return params, fmt.Errorf("the request has no message")
	}
	breakpoints(&params)
	return params, nil
}

// ToolSearchName is the name of the API's tool search tool (BM25) that a
// request with deferred tools carries.
const ToolSearchName = "tool_search_tool_bm25"

// DeferredTools implements gateway.DeferredToolser: the API searches a
// request's deferred tools itself (defer_loading with its tool search
// tool).
func (p *Provider) DeferredTools() bool { return true }

// toolParams converts the tools, in order. Deferred ones are sent with
// defer_loading, and then the API's BM25 tool search tool comes last: the
// model searches them with it (server-side, in the same answer: its
// server_tool_use and tool_search_tool_result blocks, whose
// tool_reference blocks load the tools found, are kept in the history as
// returned) and calls what it found by name. The list does not depend on
// what was found, so it is the same all session. The search tool is not
// deferred (the API requires one tool that is not) and, being last,
// carries the tools' cache breakpoint (breakpoints), which the API's
// prompt caching puts on the last tool.
func toolParams(specs []gateway.ToolSpec) ([]anthropic.ToolUnionParam, error) {
	var out []anthropic.ToolUnionParam
	deferred := false
	for _, t := range specs {
		if !isObject(t.Parameters) {
			return nil, fmt.Errorf("tool %s: input schema is not a JSON object", t.Name)
		}
		tool := anthropic.ToolParam{Name: t.Name, InputSchema: param.Override[anthropic.ToolInputSchemaParam](t.Parameters)}
		if t.Description != "" {
			tool.Description = anthropic.String(t.Description)
		}
		if t.Deferred {
			tool.DeferLoading = anthropic.Bool(true)
			deferred = true
		}
		out = append(out, anthropic.ToolUnionParam{OfTool: &tool})
	}
	if deferred {
		out = append(out, anthropic.ToolUnionParam{OfToolSearchToolBm25_20251119: &anthropic.ToolSearchToolBm25_20251119Param{
			Type: anthropic.ToolSearchToolBm25_20251119TypeToolSearchToolBm25_20251119,
		}})
	}
	return out, nil
}

// thinking sets the request's thinking configuration. Thinking is left
// out (the model's default) when the request forces a tool call, which
// the API refuses together with thinking, and when the budget does not
// fit the answer's bound.
func (p *Provider) thinking(params *anthropic.MessageNewParams, forced bool) {
	switch {
	case p.cfg.Thinking == ThinkingOff:
		off := anthropic.NewThinkingConfigDisabledParam()
		params.Thinking = anthropic.ThinkingConfigParamUnion{OfDisabled: &off}
	case forced:
	case p.cfg.ThinkingBudget > 0:
		if int64(p.cfg.ThinkingBudget) < params.MaxTokens {
			params.Thinking = anthropic.ThinkingConfigParamOfEnabled(int64(p.cfg.ThinkingBudget))
		}
	case p.cfg.Thinking == ThinkingAdaptive:
		params.Thinking = anthropic.ThinkingConfigParamUnion{OfAdaptive: &anthropic.ThinkingConfigAdaptiveParam{}}
	}
}

// breakpoints marks where the prompt cache keeps the request's prefix, at
// most MaxBreakpoints: the last tool (the tools, which do not change
// within a session; with deferred tools, the tool search tool), the system prompt, and the last block of the newest
// user-side message and of the one before it. The newest moves with the
// conversation; the one before it is where the previous request of the
// conversation put its newest, so the next request finds that cache entry
// however many blocks were added since.
func breakpoints(params *anthropic.MessageNewParams) {
	eph := anthropic.NewCacheControlEphemeralParam()
	if n := len(params.Tools); n > 0 {
		switch last := &params.Tools[n-1]; {
		case last.OfTool != nil:
			last.OfTool.CacheControl = eph
		case last.OfToolSearchToolBm25_20251119 != nil:
			last.OfToolSearchToolBm25_20251119.CacheControl = eph
		}
	}
	if n := len(params.System); n > 0 {
		params.System[n-1].CacheControl = eph
	}
	marked := 0
	for i := len(params.Messages) - 1; i >= 0 && marked < 2; i-- {
		u := params.Messages[i].OfUser
		if u == nil || len(u.Content) == 0 {
			continue
		}
		if markBlock(&u.Content[len(u.Content)-1]) {
			marked++
		}
	}
}

// markBlock sets the cache breakpoint on a block of a user message.
func markBlock(b *anthropic.ContentBlockParamUnion) bool {
	eph := anthropic.NewCacheControlEphemeralParam()
	switch {
	case b.OfText != nil:
		b.OfText.CacheControl = eph
	case b.OfImage != nil:
		b.OfImage.CacheControl = eph
	case b.OfToolResult != nil:
		b.OfToolResult.CacheControl = eph
	default:
		return false
	}
	return true
}

// messages converts the history. Tool results go, in order, into the
// user message after the calls, before anything else the user side says;
// a call left without a result (a turn cut short) gets one saying so, and
// a result whose call is not in the history becomes text, so that the
// API accepts the conversation.
func messages(in []gateway.Message) []anthropic.MessageParam {
	var out []anthropic.MessageParam
	var results, rest []anthropic.ContentBlockParamUnion // the next user message
	var open []string                                    // calls awaiting a result
	closeOpen := func() {
		for _, id := range open {
			results = append(results, toolResult(id, "(no result: the call was not run)", true))
		}
		open = nil
	}
	flush := func() {
		if content := append(results, rest...); len(content) > 0 {
			out = append(out, anthropic.MessageParam{OfUser: &anthropic.UserMessageParam{Content: content}})
		}
		results, rest = nil, nil
	}
	for _, m := range in {
		switch m.Role {
		case gateway.RoleAssistant:
			closeOpen()
			flush()
			if msg, calls, ok := assistant(m); ok {
				out = append(out, msg)
				open = calls
			}
		case gateway.RoleTool:
			parts := []gateway.Content{{Type: gateway.ContentText, Text: "(no result)"}}
			if m.Result != nil {
				parts = m.Result.ModelParts()
			}
			if i := slices.Index(open, m.ToolCallID); i >= 0 {
				open = slices.Delete(open, i, i+1)
				results = append(results, toolResultParts(m.ToolCallID, parts, m.Result != nil && m.Result.IsError))
			} else {
				head := fmt.Sprintf("[result of the tool call %s (%s)]\n", m.ToolCallID, m.ToolName)
				if len(parts) > 0 && parts[0].Type == gateway.ContentText {
					parts = slices.Concat([]gateway.Content{{Type: gateway.ContentText, Text: head + parts[0].Text}}, parts[1:])
				} else {
					parts = slices.Concat([]gateway.Content{{Type: gateway.ContentText, Text: head}}, parts)
				}
				rest = append(rest, userBlocks(parts)...)
			}
		case gateway.RoleUser:
			closeOpen()
			rest = append(rest, userBlocks(m.Content)...)
		}
	}
	flush()
	return out
}

// toolResult is a tool_result block with text.
func toolResult(id, text string, isError bool) anthropic.ContentBlockParamUnion {
	return toolResultParts(id, []gateway.Content{{Type: gateway.ContentText, Text: text}}, isError)
}

// toolResultParts is a tool_result block with the parts of a result: text
// blocks, and image blocks for the images the API takes (the API takes
// both inside a tool_result); anything else as text that says what it is.
// Empty text is left out, unless nothing else is there.
func toolResultParts(id string, parts []gateway.Content, isError bool) anthropic.ContentBlockParamUnion {
	r := anthropic.ToolResultBlockParam{ToolUseID: id}
	for _, c := range parts {
		switch {
		case c.Type == gateway.ContentText:
			if c.Text != "" {
				r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: c.Text}})
			}
		case c.Type == gateway.ContentImage && imageType(c.MIMEType):
			img := anthropic.NewImageBlockBase64(c.MIMEType, c.Data)
			r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: img.OfImage})
		default:
			r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: gateway.PlainText([]gateway.Content{c})}})
		}
	}
	if len(r.Content) == 0 {
		r.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: "(empty result)"}}}
	}
	if isError {
		r.IsError = anthropic.Bool(true)
	}
	return anthropic.ContentBlockParamUnion{OfToolResult: &r}
}

// assistant converts an assistant message: this provider's own as it was
// returned (Native), another's from its text and tool calls (its
// thinking, which has no signature, is left out). It returns the ids of
// the message's tool calls; ok is false for an empty message.
func assistant(m gateway.Message) (msg anthropic.MessageParam, calls []string, ok bool) {
	for _, c := range m.ToolCalls {
		calls = append(calls, c.ID)
	}
	if m.Native != nil && m.Native.Provider == Format && len(bytes.TrimSpace(m.Native.Content)) > 2 {
		return nativeMessage(m.Native.Content), calls, true
	}
	var blocks []anthropic.ContentBlockParamUnion
	if t := m.Text(); t != "" {
		blocks = append(blocks, anthropic.NewTextBlock(t))
	}
	for _, c := range m.ToolCalls {
		input := json.RawMessage("{}")
		if isObject(c.Arguments) {
			input = c.Arguments
		}
		blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, input, c.Name))
	}
	if len(blocks) == 0 {
		return msg, nil, false
	}
	return anthropic.MessageParam{OfAssistant: &anthropic.AssistantMessageParam{Content: blocks}}, calls, true
}

// nativeMessage is an assistant message whose content is blocks (a JSON
// array) exactly.
func nativeMessage(blocks json.RawMessage) anthropic.MessageParam {
	raw, _ := json.Marshal(struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}{"assistant", blocks})
	a := param.Override[anthropic.AssistantMessageParam](json.RawMessage(raw))
	return anthropic.MessageParam{OfAssistant: &a}
}

// ImageTypes are the MIME types of the images the Messages API takes
// (Anthropic's vision documentation: JPEG, PNG, GIF, WebP).
var imageTypes = []string{"image/jpeg", "image/png", "image/gif", "image/webp"}

// imageType reports whether the API takes images of MIME type t.
func imageType(t string) bool { return slices.Contains(imageTypes, t) }

// The API's documented bounds on images (Anthropic's vision
// documentation): at most 5 MB of base64 per image (MaxImageBytes is the
// decoded size of that much base64) and 100 images per request.
const (
	MaxImageBytes = 5 << 20 / 4 * 3
	MaxImages     = 100
)

// Media implements gateway.MediaTaker: images of the types the API takes,
// within its bounds, unless the configuration says the model takes none
// (Config.NoImages); the API takes no audio.
func (p *Provider) Media() gateway.MediaSupport {
	if p.cfg.NoImages {
		return gateway.MediaSupport{}
	}
	return gateway.MediaSupport{ImageTypes: imageTypes, MaxPartBytes: MaxImageBytes, MaxParts: MaxImages}
}

// userBlocks converts the user's input: text as text, images the API
// takes as images, everything else as text that says what it is. Empty
// text is left out (the API refuses it).
func userBlocks(content []gateway.Content) []anthropic.ContentBlockParamUnion {
	var out []anthropic.ContentBlockParamUnion
	for _, c := range content {
		switch {
		case c.Type == gateway.ContentText:
			if c.Text != "" {
				out = append(out, anthropic.NewTextBlock(c.Text))
			}
		case c.Type == gateway.ContentImage && imageType(c.MIMEType):
			out = append(out, anthropic.NewImageBlockBase64(c.MIMEType, c.Data))
		default:
			out = append(out, anthropic.NewTextBlock(gateway.PlainText([]gateway.Content{c})))
		}
	}
	return out
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	var o map[string]json.RawMessage
	return json.Unmarshal(raw, &o) == nil && o != nil
}
