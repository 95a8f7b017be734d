package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
)

// LookupToolSchema is the input schema of the tool "lookup" that the sample
// tool offers the client's model with with_tools (sampling with tools,
// SEP-1577); clients must pass it on unchanged.
const LookupToolSchema = `{"type":"object","properties":{"q":{"type":"string","description":"what to look up"}},"required":["q"],"additionalProperties":false}`

// addRequestTools registers the tools that send requests to the client
// (elicitation, sampling, roots); see the package doc.
func (a *app) addRequestTools() {
	s := a.srv
	s.AddTool(mcp.NewTool("elicit",
		mcp.WithDescription("Asks the user through elicitation/create (form mode) and returns the answer as JSON."),
		mcp.WithString("message", mcp.DefaultString("Please answer"), mcp.Description("The question.")),
		mcp.WithObject("schema", mcp.Required(), mcp.Description("The requestedSchema, sent as is.")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		schema, ok := req.GetArguments()["schema"].(map[string]any)
		if !ok {
			return mcp.NewToolResultError("schema must be an object"), nil
		}
		res, err := a.srv.RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{
			Message: req.GetString("message", "Please answer"), RequestedSchema: schema,
		}})
		return answer(res, err)
	})

	s.AddTool(mcp.NewTool("elicit_url",
		mcp.WithDescription("Asks the user to open a URL (elicitation/create, url mode); with complete, sends notifications/elicitation/complete after an accept. Returns the answer as JSON."),
		mcp.WithString("url", mcp.Required()),
		mcp.WithString("id", mcp.Required(), mcp.Description("The elicitationId.")),
		mcp.WithBoolean("complete", mcp.Description("Send notifications/elicitation/complete after an accept.")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		id := req.GetString("id", "")
		res, err := a.srv.RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{
			Mode: mcp.ElicitationModeURL, Message: "Please sign in", URL: req.GetString("url", ""), ElicitationID: id,
		}})
		if err == nil && res.Action == mcp.ElicitationResponseActionAccept && req.GetBool("complete", false) {
			if nerr := a.notify(ctx, string(mcp.MethodNotificationElicitationComplete), map[string]any{"elicitationId": id}); nerr != nil {
				return mcp.NewToolResultError("notify: " + nerr.Error()), nil
			}
		}
		return answer(res, err)
	})

	s.AddTool(mcp.NewTool("sample",
		mcp.WithDescription("Asks the client's model (sampling/createMessage) and returns its result as JSON."),
		mcp.WithString("prompt", mcp.Required()),
		mcp.WithString("system", mcp.Description("The systemPrompt.")),
		mcp.WithNumber("max_tokens", mcp.DefaultNumber(100)),
		mcp.WithString("model_hint", mcp.Description("A modelPreferences hint.")),
		mcp.WithBoolean("with_tools", mcp.Description("Offer the tool lookup (toolChoice auto).")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		p := mcp.CreateMessageParams{
			Messages:     []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(req.GetString("prompt", ""))}},
			SystemPrompt: req.GetString("system", ""),
			MaxTokens:    req.GetInt("max_tokens", 100),
		}
		if hint := req.GetString("model_hint", ""); hint != "" {
			p.ModelPreferences = &mcp.ModelPreferences{Hints: []mcp.ModelHint{{Name: hint}}}
		}
		if req.GetBool("with_tools", false) {
			p.Tools = []mcp.Tool{{Name: "lookup", Description: "Looks something up.", RawInputSchema: json.RawMessage(LookupToolSchema)}}
			p.ToolChoice = &mcp.ToolChoice{Mode: mcp.ToolChoiceModeAuto}
		}
		//lint:ignore SA1019 the test server sends sampling requests as 2025-11-25 servers do (acpgate speaks that revision).
		res, err := a.srv.RequestSampling(ctx, mcp.CreateMessageRequest{CreateMessageParams: p})
		return answer(res, err)
	})

	s.AddTool(mcp.NewTool("roots",
		mcp.WithDescription("Asks the client for its roots (roots/list) and returns them as JSON."),
		mcp.WithReadOnlyHintAnnotation(true),
	), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := a.srv.RequestRoots(ctx, mcp.ListRootsRequest{})
		return answer(res, err)
	})
}

// answer turns the client's answer to a request into the tool's result:
// the answer as JSON text, or an isError result "error: <err>".
func answer(res any, err error) (*mcp.CallToolResult, error) {
	if err != nil {
		return mcp.NewToolResultError(fmt.Sprintf("error: %v", err)), nil
	}
	b, err := json.Marshal(res)
	if err != nil {
		return mcp.NewToolResultError(fmt.Sprintf("error: %v", err)), nil
	}
	return text(string(b)), nil
}
