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

// elicit asks the user what an MCP server of session s asks (see the
// README, "Questions from MCP servers"): through the client's own
// elicitation when it has it; else a single yes/no or choice question
// becomes a permission request, and anything else is declined with a card
// saying so. A URL is shown by the client, or on a card with the link.
// The call the question belongs to (if known: gateway.CallFrom(ctx))
// shows that it waits for the user. ctx ends with that call.
func (a *Agent) elicit(ctx context.Context, s *liveSession, req mcpclient.ElicitRequest) (mcpclient.ElicitResult, error) {
	form, urlMode := a.clientElicitation()
	call, _ := gateway.CallFrom(ctx)
	if req.Mode == mcpclient.ElicitURL {
		if urlMode {
			return a.elicitURL(ctx, s, call, req)
		}
		return a.urlCard(s, req), nil
	}
	f, err := compileForm(req.Schema)
	if err != nil {
		return mcpclient.ElicitResult{}, &mcpclient.RequestError{Code: mcp.INVALID_PARAMS, Message: err.Error()}
	}
	if form {
		return a.elicitForm(ctx, s, call, req, f)
	}
	if c, ok := f.asChoice(); ok {
		return a.askChoice(ctx, s, call, req, c)
	}
	a.cannotAsk(s, req, f)
	return mcpclient.ElicitResult{Action: mcpclient.ElicitDecline}, nil
}

// waiting marks call (if any) as waiting for the user, with text.
func (a *Agent) waiting(s *liveSession, call gateway.CallInfo, text string) {
	if call.ID != "" {
		a.cardStatus(s, call.ID, acpsdk.ToolCallStatusPending, text)
	}
}

// resumed marks call (if any) as running again, with text.
func (a *Agent) resumed(s *liveSession, call gateway.CallInfo, text string) {
	if call.ID != "" {
		a.cardStatus(s, call.ID, acpsdk.ToolCallStatusInProgress, text)
	}
}

// clientElicit sends an elicitation/create to the client, scoped to the
// session and call (see scope.go).
func (a *Agent) clientElicit(ctx context.Context, s *liveSession, call gateway.CallInfo, req acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
	meta := scopeMeta(elicitationScope{SessionID: s.id, ToolCallID: call.ID})
	if req.Form != nil {
		req.Form.Meta = meta
	} else {
		req.Url.Meta = meta
	}
	a.out.scoping.Add(1)
	defer a.out.scoping.Add(-1)
	return a.conn.UnstableCreateElicitation(ctx, req)
}

// elicitForm asks through the client's form: the answer gets the schema's
// defaults for what it leaves out and must then match the schema.
func (a *Agent) elicitForm(ctx context.Context, s *liveSession, call gateway.CallInfo, req mcpclient.ElicitRequest, f *formSchema) (mcpclient.ElicitResult, error) {
	var schema acpsdk.UnstableElicitationSchema
	if err := json.Unmarshal(req.Schema, &schema); err != nil {
		return mcpclient.ElicitResult{}, &mcpclient.RequestError{Code: mcp.INVALID_PARAMS, Message: fmt.Sprintf("%v: %v", errBadSchema, err)}
	}
	a.waiting(s, call, fmt.Sprintf("Waiting for your answer to MCP server %s: %s", req.Server, req.Message))
	resp, err := a.clientElicit(ctx, s, call, acpsdk.UnstableCreateElicitationRequest{Form: &acpsdk.UnstableCreateElicitationForm{
		Message: req.Message, Mode: string(mcpclient.ElicitForm), RequestedSchema: schema,
	}})
	res := a.elicitAnswer(ctx, s, req, resp, err)
	if res.Action != mcpclient.ElicitAccept {
		a.resumed(s, call, fmt.Sprintf("You answered MCP server %s: %s.", req.Server, res.Action))
		return res, nil
	}
	content := f.withDefaults(resp.Accept.Content)
	if err := f.check(content); err != nil {
		a.resumed(s, call, fmt.Sprintf("Your answer to MCP server %s does not match its form: %v", req.Server, err))
		return mcpclient.ElicitResult{}, fmt.Errorf("the answer does not match the requested schema: %w", err)
	}
	a.resumed(s, call, fmt.Sprintf("You answered MCP server %s.", req.Server))
	return mcpclient.ElicitResult{Action: mcpclient.ElicitAccept, Content: content}, nil
}

// elicitAnswer maps the client's answer to an elicitation; a failed or
// cancelled request is a cancel.
func (a *Agent) elicitAnswer(ctx context.Context, s *liveSession, req mcpclient.ElicitRequest, resp acpsdk.UnstableCreateElicitationResponse, err error) mcpclient.ElicitResult {
	switch {
	case ctx.Err() != nil:
		return mcpclient.ElicitResult{Action: mcpclient.ElicitCancel}
	case err != nil:
		a.logger.Warn("the client could not ask an MCP server's question", "session", s.id, "server", req.Server, "err", err)
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
func (a *Agent) askChoice(ctx context.Context, s *liveSession, call gateway.CallInfo, req mcpclient.ElicitRequest, c choice) (mcpclient.ElicitResult, error) {
	text := fmt.Sprintf("MCP server %s asks: %s", req.Server, req.Message)
	if c.title != "" {
		text += "\n\n" + c.title
	}
	id, title := call.ID, call.Title
	if id == "" {
		id, title = a.nextCard("mcp-question"), fmt.Sprintf("MCP server %s asks a question", req.Server)
		a.card(s, id, title, acpsdk.ToolCallStatusPending, text)
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
	resp, err := a.conn.RequestPermission(ctx, acpsdk.RequestPermissionRequest{
		SessionId: acpsdk.SessionId(s.id),
		ToolCall: acpsdk.ToolCallUpdate{ToolCallId: acpsdk.ToolCallId(id), Title: acpsdk.Ptr(title), Status: acpsdk.Ptr(acpsdk.ToolCallStatusPending),
			Content: []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(text))}},
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
		a.logger.Warn("asking an MCP server's question as a permission request failed", "session", s.id, "server", req.Server, "err", err)
	}
	answer := fmt.Sprintf("You answered MCP server %s: %s.", req.Server, res.Action)
	if call.ID == "" {
		a.cardStatus(s, id, acpsdk.ToolCallStatusCompleted, text+"\n\n"+answer)
	} else {
		a.resumed(s, call, answer)
	}
	return res, nil
}

// cannotAsk shows a form acpgate cannot put to the user (the client has
// no elicitation): what the server asked, and why it was declined.
func (a *Agent) cannotAsk(s *liveSession, req mcpclient.ElicitRequest, f *formSchema) {
	text := fmt.Sprintf("MCP server %s asked: %s\n\nFields: %s\n\nThis editor does not support forms (ACP elicitation); only a single yes/no or choice question can be asked as a permission request. The question was declined.",
		req.Server, req.Message, strings.Join(f.fieldNames(), ", "))
	a.card(s, a.nextCard("mcp-question"), fmt.Sprintf("MCP server %s asked a question that cannot be shown here", req.Server), acpsdk.ToolCallStatusFailed, text)
}

// urlElicitation is a URL-mode elicitation waiting for its
// notifications/elicitation/complete.
type urlElicitation struct {
	s    *liveSession
	card string // the card with the link; "" when the client showed the URL
}

// urlKey is the key of a URL elicitation: its server and id.
func urlKey(server, id string) string { return server + "\x00" + id }

// elicitURL has the client show the URL (ACP URL elicitation).
func (a *Agent) elicitURL(ctx context.Context, s *liveSession, call gateway.CallInfo, req mcpclient.ElicitRequest) (mcpclient.ElicitResult, error) {
	a.waiting(s, call, fmt.Sprintf("Waiting for you: MCP server %s asks you to open %s", req.Server, req.URL))
	a.trackURL(req, urlElicitation{s: s})
	resp, err := a.clientElicit(ctx, s, call, acpsdk.UnstableCreateElicitationRequest{Url: &acpsdk.UnstableCreateElicitationUrl{
		Message: req.Message, Mode: string(mcpclient.ElicitURL), Url: req.URL, ElicitationId: acpsdk.UnstableElicitationId(req.ElicitationID),
	}})
	res := a.elicitAnswer(ctx, s, req, resp, err)
	if res.Action != mcpclient.ElicitAccept {
		a.untrackURL(req.Server, req.ElicitationID)
	}
	a.resumed(s, call, fmt.Sprintf("You answered MCP server %s: %s.", req.Server, res.Action))
	return res, nil
}

// urlCard shows the URL on a card with the link (the client has no URL
// elicitation) and accepts: the interaction happens outside the editor,
// and the card is completed when the server says it is done.
func (a *Agent) urlCard(s *liveSession, req mcpclient.ElicitRequest) mcpclient.ElicitResult {
	id := a.nextCard("mcp-link")
	a.trackURL(req, urlElicitation{s: s, card: id})
	text := fmt.Sprintf("MCP server %s asks you to open this link: %s\n\n%s", req.Server, req.URL, req.Message)
	a.card(s, id, fmt.Sprintf("MCP server %s asks you to open a link", req.Server), acpsdk.ToolCallStatusPending, text,
		acpsdk.ToolContent(acpsdk.ResourceLinkBlock(req.URL, req.URL)))
	return mcpclient.ElicitResult{Action: mcpclient.ElicitAccept}
}

func (a *Agent) trackURL(req mcpclient.ElicitRequest, e urlElicitation) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.urls[urlKey(req.Server, req.ElicitationID)] = e
}

func (a *Agent) untrackURL(server, id string) (urlElicitation, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.urls[urlKey(server, id)]
	delete(a.urls, urlKey(server, id))
	return e, ok
}

// forgetURLs drops the URL elicitations of a closed session.
func (a *Agent) forgetURLs(s *liveSession) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, e := range a.urls {
		if e.s == s {
			delete(a.urls, k)
		}
	}
}

// elicitationComplete passes a server's notifications/elicitation/complete
// on: to the client (ACP's elicitation/complete) when it showed the URL,
// else to the card with the link. It runs on the server's reader
// goroutine, so the sending is handed off.
func (a *Agent) elicitationComplete(server, id string) {
	e, ok := a.untrackURL(server, id)
	if !ok {
		a.logger.Debug("completion of an unknown URL elicitation", "server", server, "id", id)
		return
	}
	go func() {
		if e.card != "" {
			a.cardStatus(e.s, e.card, acpsdk.ToolCallStatusCompleted, fmt.Sprintf("MCP server %s says the interaction at the link is complete.", server))
			return
		}
		if err := a.conn.UnstableCompleteElicitation(e.s.ctx, acpsdk.UnstableCompleteElicitationNotification{ElicitationId: acpsdk.UnstableElicitationId(id)}); err != nil {
			a.logger.Debug("elicitation/complete not sent", "session", e.s.id, "err", err)
		}
	}()
}
