package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/mcpclient"
)

// This file is sampling/createMessage from an MCP server: the session's
// policy and rate limit, the user's approval (a permission question), the
// session's model, and the card that shows the exchange.

// The defaults of the sampling limits (limits.samplingMaxTokens and
// limits.samplingPerMinute).
const (
	defaultSamplingMaxTokens = 4096
	defaultSamplingPerMinute = 10
)

// samplingKey is the key of a server's "always" sampling decision among
// the session's (tool names never contain ':').
func samplingKey(server string) string { return "sampling:" + server }

// errNoModel answers a sampling request of a session without a model;
// commandSession.compact returns it too.
var errNoModel = errors.New("this session has no model")

// sample has session s's model answer an MCP server's sampling request,
// within the server's limits, after the user approved it (unless the
// configuration allows it or the server is trusted; auto mode still
// asks). A card shows what the server asked and what the model answered.
func (ur *userRequests) sample(ctx context.Context, s askSession, req mcpclient.SamplingRequest) (mcpclient.SamplingResult, error) {
	model := ur.conf.model(ctx, s)
	terms := s.samplingTerms(req.Server)
	pol, limits, trusted, always, limiter := terms.pol, terms.limits, terms.trusted, terms.always, terms.limiter
	switch {
	case pol.mode == config.SamplingDeny:
		return mcpclient.SamplingResult{}, &mcpclient.RequestError{Code: mcpclient.CodeUserRejected, Message: "sampling is turned off for this server in acpgate's configuration"}
	case model == nil:
		return mcpclient.SamplingResult{}, errNoModel
	case limiter != nil && !limiter.Allow(time.Now()):
		return mcpclient.SamplingResult{}, fmt.Errorf("sampling rate limit: at most %d requests per minute", pol.perMinute)
	}
	mreq, err := modelRequest(req, pol.maxTokens)
	if err != nil {
		return mcpclient.SamplingResult{}, &mcpclient.RequestError{Code: mcp.INVALID_PARAMS, Message: err.Error()}
	}
	ur.logSampling(s, "sampling request", req.Server, req)
	card, title, preview := ur.peer.nextCard("mcp-sampling"), fmt.Sprintf("MCP server %s asks the model", req.Server), samplingPreview(req, mreq)
	ur.peer.card(s, card, title, acpsdk.ToolCallStatusPending, preview)
	allowed := always == "allow" || always != "reject" && (pol.mode == config.SamplingAllow || trusted)
	if !allowed && always != "reject" {
		allowed = ur.approveSampling(ctx, s, req.Server, card, title, preview)
	}
	if !allowed {
		ur.peer.cardStatus(s, card, acpsdk.ToolCallStatusFailed, preview+"\n\nRejected.")
		return mcpclient.SamplingResult{}, &mcpclient.RequestError{Code: mcpclient.CodeUserRejected, Message: "the user rejected the sampling request"}
	}
	ur.peer.cardStatus(s, card, acpsdk.ToolCallStatusInProgress, preview)
	// Its images and audio reach the model as the session's do.
	mreq.Messages, _ = terms.media.Prepare(model, mreq.Messages)
	resp, err := gateway.Complete(ctx, model, mreq, limits, nil)
	if err != nil {
		ur.peer.cardStatus(s, card, acpsdk.ToolCallStatusFailed, preview+"\n\nThe model failed: "+err.Error())
		if ctx.Err() != nil {
			return mcpclient.SamplingResult{}, ctx.Err()
		}
		return mcpclient.SamplingResult{}, errors.New("the model failed to answer")
	}
	res := samplingResult(resp)
	ur.logSampling(s, "sampling result", req.Server, res)
	answer := resp.Message.Text()
	for _, c := range resp.Message.ToolCalls {
		answer += fmt.Sprintf("\n[tool call %s %s]", c.Name, c.Arguments)
	}
	ur.peer.cardStatus(s, card, acpsdk.ToolCallStatusCompleted, preview+"\n\nThe model answered:\n"+answer)
	return res, nil
}

// approveSampling asks the user whether the server may use the model.
func (ur *userRequests) approveSampling(ctx context.Context, s askSession, server, card, title, preview string) bool {
	resp, err := ur.peer.conn.RequestPermission(ctx, permissionRequest{
		SessionID: s.sessionID(),
		ToolCall: toolUpdate{update: acpsdk.ToolCallUpdate{ToolCallId: acpsdk.ToolCallId(card), Title: acpsdk.Ptr(title), Status: acpsdk.Ptr(acpsdk.ToolCallStatusPending),
			Content: []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(preview))}}},
		Options: []acpsdk.PermissionOption{
			{OptionId: optAllowOnce, Name: "Allow once", Kind: acpsdk.PermissionOptionKindAllowOnce},
			{OptionId: optAllowAlways, Name: "Always allow " + server + " to use the model", Kind: acpsdk.PermissionOptionKindAllowAlways},
			{OptionId: optRejectOnce, Name: "Reject", Kind: acpsdk.PermissionOptionKindRejectOnce},
			{OptionId: optRejectAlways, Name: "Always reject " + server, Kind: acpsdk.PermissionOptionKindRejectAlways},
		},
	})
	if err != nil || resp.Outcome.Selected == nil {
		if err != nil && ctx.Err() == nil {
			ur.logger.Warn("asking the client for permission to sample failed", "session", s.sessionID(), "server", server, "err", err)
		}
		return false
	}
	switch resp.Outcome.Selected.OptionId {
	case optAllowOnce:
		return true
	case optAllowAlways:
		s.remember(samplingKey(server), "allow")
		return true
	case optRejectAlways:
		s.remember(samplingKey(server), "reject")
	}
	return false
}

// modelRequest converts a sampling request for the session's model: the
// server's system prompt, messages and tools, maxTokens lowered to the
// limit max.
func modelRequest(req mcpclient.SamplingRequest, max int) (gateway.ModelRequest, error) {
	m := gateway.ModelRequest{System: req.SystemPrompt, MaxTokens: req.MaxTokens, Temperature: req.Temperature, Stop: req.StopSequences}
	if m.MaxTokens <= 0 || m.MaxTokens > max {
		m.MaxTokens = max
	}
	for _, t := range req.Tools {
		var obj map[string]json.RawMessage
		if json.Unmarshal(t.InputSchema, &obj) != nil {
			return m, fmt.Errorf("tool %q: inputSchema is not a JSON object", t.Name)
		}
		m.Tools = append(m.Tools, gateway.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
	}
	switch req.ToolChoice {
	case "", "auto":
	case "required":
		m.ToolChoice = gateway.ToolChoiceRequired
	case "none":
		m.ToolChoice = gateway.ToolChoiceNone
	default:
		return m, fmt.Errorf("unknown toolChoice mode %q", req.ToolChoice)
	}
	for i, msg := range req.Messages {
		converted, err := modelMessages(msg)
		if err != nil {
			return m, fmt.Errorf("messages[%d]: %w", i, err)
		}
		m.Messages = append(m.Messages, converted...)
	}
	return m, nil
}

// modelMessages converts one sampling message: a user message's tool
// results become tool messages (first), the rest one user message; an
// assistant message's tool uses become its tool calls.
func modelMessages(msg mcpclient.SamplingMessage) ([]gateway.Message, error) {
	var out []gateway.Message
	main := gateway.Message{Role: gateway.RoleUser}
	if msg.Role == "assistant" {
		main.Role = gateway.RoleAssistant
	} else if msg.Role != "user" {
		return nil, fmt.Errorf("unknown role %q", msg.Role)
	}
	for _, c := range msg.Content {
		switch c.Type {
		case mcpclient.SamplingToolUse:
			input := c.Input
			if len(input) == 0 {
				input = json.RawMessage("{}")
			}
			main.ToolCalls = append(main.ToolCalls, gateway.ToolCall{ID: c.ID, Name: c.Name, Arguments: input})
		case mcpclient.SamplingToolResult:
			res := &gateway.Result{Content: samplingContent(c.Content), IsError: c.IsError}
			out = append(out, gateway.Message{Role: gateway.RoleTool, ToolCallID: c.ToolUseID, Result: res})
		default:
			main.Content = append(main.Content, samplingContent([]mcpclient.SamplingContent{c})...)
		}
	}
	if len(main.Content) > 0 || len(main.ToolCalls) > 0 {
		out = append(out, main)
	}
	return out, nil
}

// samplingContent converts text, image and audio blocks (others are
// skipped).
func samplingContent(cs []mcpclient.SamplingContent) []gateway.Content {
	var out []gateway.Content
	for _, c := range cs {
		switch c.Type {
		case mcpclient.SamplingText:
			out = append(out, gateway.Content{Type: gateway.ContentText, Text: c.Text})
		case mcpclient.SamplingImage:
			out = append(out, gateway.Content{Type: gateway.ContentImage, Data: c.Data, MIMEType: c.MIMEType})
		case mcpclient.SamplingAudio:
			out = append(out, gateway.Content{Type: gateway.ContentAudio, Data: c.Data, MIMEType: c.MIMEType})
		}
	}
	return out
}

// samplingResult converts the model's answer: its text, then its tool
// calls as tool_use blocks.
func samplingResult(resp gateway.ModelResponse) mcpclient.SamplingResult {
	res := mcpclient.SamplingResult{Model: resp.Model, StopReason: stopReasonMCP(resp.Stop)}
	if res.Model == "" {
		res.Model = "unknown"
	}
	if t := resp.Message.Text(); t != "" || len(resp.Message.ToolCalls) == 0 {
		res.Content = append(res.Content, mcpclient.SamplingContent{Type: mcpclient.SamplingText, Text: t})
	}
	for _, c := range resp.Message.ToolCalls {
		res.Content = append(res.Content, mcpclient.SamplingContent{Type: mcpclient.SamplingToolUse, ID: c.ID, Name: c.Name, Input: c.Arguments})
	}
	return res
}

// stopReasonMCP maps a stop reason to MCP's names.
func stopReasonMCP(s gateway.StopReason) string {
	switch s {
	case gateway.StopMaxTokens:
		return "maxTokens"
	case gateway.StopToolUse:
		return "toolUse"
	case gateway.StopRefusal:
		return "refusal"
	}
	return "endTurn"
}

// samplingPreview is what the user is shown of a sampling request.
func samplingPreview(req mcpclient.SamplingRequest, m gateway.ModelRequest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "MCP server %s asks the model (at most %d tokens)", req.Server, m.MaxTokens)
	if req.Tool != "" {
		fmt.Fprintf(&b, " while running its tool %s", req.Tool)
	}
	b.WriteString(".\n")
	if req.SystemPrompt != "" {
		fmt.Fprintf(&b, "\nSystem: %s\n", cut(req.SystemPrompt, 500))
	}
	for _, msg := range m.Messages {
		switch {
		case msg.Role == gateway.RoleTool && msg.Result != nil:
			fmt.Fprintf(&b, "\ntool result: %s\n", cut(gateway.PlainText(msg.Result.Content), 500))
		default:
			fmt.Fprintf(&b, "\n%s: %s\n", msg.Role, cut(gateway.PlainText(msg.Content), 1000))
		}
	}
	if len(m.Tools) > 0 {
		names := make([]string, len(m.Tools))
		for i, t := range m.Tools {
			names[i] = t.Name
		}
		fmt.Fprintf(&b, "\nTools offered: %s\n", strings.Join(names, ", "))
	}
	return b.String()
}

// cut returns s cut to max bytes, with a note.
func cut(s string, max int) string {
	if p := gateway.RunePrefix(s, max); len(p) < len(s) {
		return p + fmt.Sprintf("… (%d bytes more)", len(s)-len(p))
	}
	return s
}

// logSampling logs what a server sent or got at debug level: as JSON,
// secrets redacted, cut to 4 KiB.
func (ur *userRequests) logSampling(s askSession, msg, server string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	text := string(b)
	if r := ur.secrets; r != nil && r.Redactor != nil {
		text = r.Redactor.Redact(text)
	}
	ur.logger.Debug(msg, "session", s.sessionID(), "server", server, "data", cut(text, 4096))
}
