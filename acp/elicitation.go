package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/mcpclient"
)

// This file is elicitation/create from an MCP server: asked as an ACP
// elicitation (form or URL) where the editor has it, else as a permission
// question (a yes/no or choice) or a card; URL elicitations are tracked
// until the server completes them.

// elicit asks the user what an MCP server of session s asks (see
// docs/server-requests.md, "Questions (form elicitation)"): through the
// client's own elicitation when it has it; else a single yes/no or choice question
// becomes a permission request, and anything else is declined with a card
// saying so. A URL is shown by the client, or on a card with the link.
// The call the question belongs to (if known: gateway.CallFrom(ctx))
// shows that it waits for the user. ctx ends with that call.
func (ur *userRequests) elicit(ctx context.Context, s askSession, req mcpclient.ElicitRequest) (mcpclient.ElicitResult, error) {
	form, urlMode := ur.peer.clientElicitation()
	call, _ := gateway.CallFrom(ctx)
	if req.Mode == mcpclient.ElicitURL {
		if urlMode {
			return ur.elicitURL(ctx, s, call, req)
		}
		return ur.urlCard(s, req), nil
	}
	f, err := compileForm(req.Schema)
	if err != nil {
		return mcpclient.ElicitResult{}, &mcpclient.RequestError{Code: mcp.INVALID_PARAMS, Message: err.Error()}
	}
	if form {
		return ur.elicitForm(ctx, s, call, req, f)
	}
	if c, ok := f.asChoice(); ok {
		return ur.askChoice(ctx, s, call, req, c)
	}
	ur.cannotAsk(s, req, f)
	return mcpclient.ElicitResult{Action: mcpclient.ElicitDecline}, nil
}

// waiting marks call (if any) as waiting for the user, with text.
func (ur *userRequests) waiting(s askSession, call gateway.CallInfo, text string) {
	if call.ID != "" {
		ur.peer.cardStatus(s, call.ID, acpsdk.ToolCallStatusPending, text)
	}
}

// resumed marks call (if any) as running again, with text.
func (ur *userRequests) resumed(s askSession, call gateway.CallInfo, text string) {
	if call.ID != "" {
		ur.peer.cardStatus(s, call.ID, acpsdk.ToolCallStatusInProgress, text)
	}
}

// clientElicit sends an elicitation/create to the client, scoped to the
// session and call.
func (ur *userRequests) clientElicit(ctx context.Context, s askSession, call gateway.CallInfo, req createElicitation) (acpsdk.UnstableCreateElicitationResponse, error) {
	req.SessionID, req.ToolCallID = s.sessionID(), call.ID
	return ur.peer.conn.CreateElicitation(ctx, req)
}

// elicitForm asks through the client's form: the answer gets the schema's
// defaults for what it leaves out and must then match the schema.
func (ur *userRequests) elicitForm(ctx context.Context, s askSession, call gateway.CallInfo, req mcpclient.ElicitRequest, f *formSchema) (mcpclient.ElicitResult, error) {
	var schema acpsdk.UnstableElicitationSchema
	if err := json.Unmarshal(req.Schema, &schema); err != nil {
		return mcpclient.ElicitResult{}, &mcpclient.RequestError{Code: mcp.INVALID_PARAMS, Message: fmt.Sprintf("%v: %v", errBadSchema, err)}
	}
	ur.waiting(s, call, fmt.Sprintf("Waiting for your answer to MCP server %s: %s", req.Server, req.Message))
	resp, err := ur.clientElicit(ctx, s, call, createElicitation{Message: req.Message, Mode: string(mcpclient.ElicitForm), RequestedSchema: &schema})
	res := ur.elicitAnswer(ctx, s, req, resp, err)
	if res.Action != mcpclient.ElicitAccept {
		ur.resumed(s, call, fmt.Sprintf("You answered MCP server %s: %s.", req.Server, res.Action))
		return res, nil
	}
	content := f.withDefaults(resp.Accept.Content)
	if err := f.check(content); err != nil {
		ur.resumed(s, call, fmt.Sprintf("Your answer to MCP server %s does not match its form: %v", req.Server, err))
		return mcpclient.ElicitResult{}, fmt.Errorf("the answer does not match the requested schema: %w", err)
	}
	ur.resumed(s, call, fmt.Sprintf("You answered MCP server %s.", req.Server))
	return mcpclient.ElicitResult{Action: mcpclient.ElicitAccept, Content: content}, nil
}

// elicitAnswer maps the client's answer to an elicitation; a failed or
// cancelled request is a cancel.
func (ur *userRequests) elicitAnswer(ctx context.Context, s askSession, req mcpclient.ElicitRequest, resp acpsdk.UnstableCreateElicitationResponse, err error) mcpclient.ElicitResult {
	switch {
	case ctx.Err() != nil:
		return mcpclient.ElicitResult{Action: mcpclient.ElicitCancel}
	case err != nil:
		ur.logger.Warn("the client could not ask an MCP server's question", "session", s.sessionID(), "server", req.Server, "err", err)
		return mcpclient.ElicitResult{Action: mcpclient.ElicitCancel}
	case resp.Accept != nil:
		return mcpclient.ElicitResult{Action: mcpclient.ElicitAccept}
	case resp.Decline != nil:
		return mcpclient.ElicitResult{Action: mcpclient.ElicitDecline}
	}
	return mcpclient.ElicitResult{Action: mcpclient.ElicitCancel}
}

// askChoice asks a single yes/no or choice question as a permission
// request (the client has no elicitation): on the call's card when the
// question belongs to a call, else on a card of its own.
func (ur *userRequests) askChoice(ctx context.Context, s askSession, call gateway.CallInfo, req mcpclient.ElicitRequest, c choice) (mcpclient.ElicitResult, error) {
	text := fmt.Sprintf("MCP server %s asks: %s", req.Server, req.Message)
	if c.title != "" {
		text += "\n\n" + c.title
	}
	id, title := call.ID, call.Title
	if id == "" {
		id, title = ur.peer.nextCard("mcp-question"), fmt.Sprintf("MCP server %s asks a question", req.Server)
		ur.peer.card(s, id, title, acpsdk.ToolCallStatusPending, text)
	}
	var options []acpsdk.PermissionOption
	if c.boolean {
		options = []acpsdk.PermissionOption{
			{OptionId: "yes", Name: "Yes", Kind: acpsdk.PermissionOptionKindAllowOnce},
			{OptionId: "no", Name: "No", Kind: acpsdk.PermissionOptionKindRejectOnce},
		}
	} else {
		for i, l := range c.labels {
			options = append(options, acpsdk.PermissionOption{OptionId: acpsdk.PermissionOptionId(fmt.Sprintf("choice-%d", i)), Name: l, Kind: acpsdk.PermissionOptionKindAllowOnce})
		}
		options = append(options, acpsdk.PermissionOption{OptionId: "decline", Name: "Decline", Kind: acpsdk.PermissionOptionKindRejectOnce})
	}
	resp, err := ur.peer.conn.RequestPermission(ctx, permissionRequest{
		SessionID: s.sessionID(),
		ToolCall: toolUpdate{update: acpsdk.ToolCallUpdate{ToolCallId: acpsdk.ToolCallId(id), Title: acpsdk.Ptr(title), Status: acpsdk.Ptr(acpsdk.ToolCallStatusPending),
			Content: []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(text))}}},
		Options: options,
	})
	res := mcpclient.ElicitResult{Action: mcpclient.ElicitCancel}
	switch {
	case ctx.Err() != nil, err != nil, resp.Outcome.Selected == nil:
	case resp.Outcome.Selected.OptionId == "decline":
		res.Action = mcpclient.ElicitDecline
	case c.boolean:
		res = mcpclient.ElicitResult{Action: mcpclient.ElicitAccept, Content: map[string]any{c.field: resp.Outcome.Selected.OptionId == "yes"}}
	default:
		var i int
		if _, perr := fmt.Sscanf(string(resp.Outcome.Selected.OptionId), "choice-%d", &i); perr == nil && i >= 0 && i < len(c.values) {
			res = mcpclient.ElicitResult{Action: mcpclient.ElicitAccept, Content: map[string]any{c.field: c.values[i]}}
		}
	}
	if err != nil && ctx.Err() == nil {
		ur.logger.Warn("asking an MCP server's question as a permission request failed", "session", s.sessionID(), "server", req.Server, "err", err)
	}
	answer := fmt.Sprintf("You answered MCP server %s: %s.", req.Server, res.Action)
	if call.ID == "" {
		ur.peer.cardStatus(s, id, acpsdk.ToolCallStatusCompleted, text+"\n\n"+answer)
	} else {
		ur.resumed(s, call, answer)
	}
	return res, nil
}

// cannotAsk shows a form acpgate cannot put to the user (the client has
// no elicitation): what the server asked, and why it was declined.
func (ur *userRequests) cannotAsk(s askSession, req mcpclient.ElicitRequest, f *formSchema) {
	text := fmt.Sprintf("MCP server %s asked: %s\n\nFields: %s\n\nThis editor does not support forms (ACP elicitation); only a single yes/no or choice question can be asked as a permission request. The question was declined.",
		req.Server, req.Message, strings.Join(f.fieldNames(), ", "))
	ur.peer.card(s, ur.peer.nextCard("mcp-question"), fmt.Sprintf("MCP server %s asked a question that cannot be shown here", req.Server), acpsdk.ToolCallStatusFailed, text)
}

// urlElicitation is a URL-mode elicitation waiting for its
// notifications/elicitation/complete.
type urlElicitation struct {
	s    peerSession
	card string // the card with the link; "" when the client showed the URL
}

// urlKey is the key of a URL elicitation: its server and id.
func urlKey(server, id string) string { return server + "\x00" + id }

// elicitURL has the client show the URL (ACP URL elicitation).
func (ur *userRequests) elicitURL(ctx context.Context, s askSession, call gateway.CallInfo, req mcpclient.ElicitRequest) (mcpclient.ElicitResult, error) {
	ur.waiting(s, call, fmt.Sprintf("Waiting for you: MCP server %s asks you to open %s", req.Server, req.URL))
	ur.trackURL(req, urlElicitation{s: s})
	resp, err := ur.clientElicit(ctx, s, call, createElicitation{Message: req.Message, Mode: string(mcpclient.ElicitURL), URL: req.URL, ElicitationID: req.ElicitationID})
	res := ur.elicitAnswer(ctx, s, req, resp, err)
	if res.Action != mcpclient.ElicitAccept {
		ur.untrackURL(req.Server, req.ElicitationID)
	}
	ur.resumed(s, call, fmt.Sprintf("You answered MCP server %s: %s.", req.Server, res.Action))
	return res, nil
}

// urlCard shows the URL on a card with the link (the client has no URL
// elicitation) and accepts: the interaction happens outside the editor,
// and the card is completed when the server says it is done.
func (ur *userRequests) urlCard(s askSession, req mcpclient.ElicitRequest) mcpclient.ElicitResult {
	id := ur.peer.nextCard("mcp-link")
	ur.trackURL(req, urlElicitation{s: s, card: id})
	text := fmt.Sprintf("MCP server %s asks you to open this link: %s\n\n%s", req.Server, req.URL, req.Message)
	ur.peer.card(s, id, fmt.Sprintf("MCP server %s asks you to open a link", req.Server), acpsdk.ToolCallStatusPending, text,
		acpsdk.ToolContent(acpsdk.ResourceLinkBlock(req.URL, req.URL)))
	return mcpclient.ElicitResult{Action: mcpclient.ElicitAccept}
}

func (ur *userRequests) trackURL(req mcpclient.ElicitRequest, e urlElicitation) {
	ur.mu.Lock()
	defer ur.mu.Unlock()
	ur.urls[urlKey(req.Server, req.ElicitationID)] = e
}

func (ur *userRequests) untrackURL(server, id string) (urlElicitation, bool) {
	ur.mu.Lock()
	defer ur.mu.Unlock()
	e, ok := ur.urls[urlKey(server, id)]
	delete(ur.urls, urlKey(server, id))
	return e, ok
}

// forgetURLs drops the URL elicitations of a closed session.
func (ur *userRequests) forgetURLs(s askSession) {
	ur.mu.Lock()
	defer ur.mu.Unlock()
	for k, e := range ur.urls {
		if e.s == s {
			delete(ur.urls, k)
		}
	}
}

// elicitationComplete passes a server's notifications/elicitation/complete
// on: to the client (ACP's elicitation/complete) when it showed the URL,
// else to the card with the link. It runs on the server's reader
// goroutine, so the sending is handed off.
func (ur *userRequests) elicitationComplete(server, id string) {
	e, ok := ur.untrackURL(server, id)
	if !ok {
		ur.logger.Debug("completion of an unknown URL elicitation", "server", server, "id", id)
		return
	}
	go func() {
		if e.card != "" {
			ur.peer.cardStatus(e.s, e.card, acpsdk.ToolCallStatusCompleted, fmt.Sprintf("MCP server %s says the interaction at the link is complete.", server))
			return
		}
		if err := ur.peer.conn.CompleteElicitation(e.s.lifetime(), acpsdk.UnstableCompleteElicitationNotification{ElicitationId: acpsdk.UnstableElicitationId(id)}); err != nil {
			ur.logger.Debug("elicitation/complete not sent", "session", e.s.sessionID(), "err", err)
		}
	}()
}
