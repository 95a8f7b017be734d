package mcptunnel

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// NewServer returns an MCP server for tests named name, announcing tool
// list changes, with the tools:
//
//   - echo {text}: returns text;
//   - ask {message}: asks the client for a string "answer" (elicitation)
//     and returns "ACTION: ANSWER";
//   - roots: returns the client's roots (roots/list), one URI a line;
//   - sample {prompt}: asks the client for a completion (sampling) and
//     returns its text;
//   - big {size}: returns a text of size bytes.
func NewServer(name string) *server.MCPServer {
	s := server.NewMCPServer(name, "1.0.0", server.WithToolCapabilities(true))
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echo"), mcp.WithString("text", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(req.GetString("text", "")), nil
		})
	s.AddTool(mcp.NewTool("ask", mcp.WithDescription("Ask the user"), mcp.WithString("message", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := s.RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{
				Message: req.GetString("message", ""),
				RequestedSchema: map[string]any{"type": "object",
					"properties": map[string]any{"answer": map[string]any{"type": "string"}}, "required": []any{"answer"}},
			}})
			if err != nil {
				return nil, err
			}
			answer, _ := res.Content.(map[string]any)["answer"].(string)
			return mcp.NewToolResultText(fmt.Sprintf("%s: %s", res.Action, answer)), nil
		})
	s.AddTool(mcp.NewTool("roots", mcp.WithDescription("List the roots")),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := s.RequestRoots(ctx, mcp.ListRootsRequest{})
			if err != nil {
				return nil, err
			}
			var b strings.Builder
			for _, r := range res.Roots {
				b.WriteString(r.URI + "\n")
			}
			return mcp.NewToolResultText(b.String()), nil
		})
	s.AddTool(mcp.NewTool("sample", mcp.WithDescription("Ask the client's model"), mcp.WithString("prompt", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			//lint:ignore SA1019 the server asks as 2025-11-25 servers do (the tunnel's test connections speak that revision).
			res, err := s.RequestSampling(ctx, mcp.CreateMessageRequest{CreateMessageParams: mcp.CreateMessageParams{
				Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(req.GetString("prompt", ""))}},
				MaxTokens: 100,
			}})
			if err != nil {
				return nil, err
			}
			// The content arrives decoded as JSON: a map, not a TextContent.
			b, _ := json.Marshal(res.Content)
			var text struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(b, &text)
			return mcp.NewToolResultText(text.Text), nil
		})
	s.AddTool(mcp.NewTool("big", mcp.WithDescription("A large text"), mcp.WithNumber("size", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(strings.Repeat("x", req.GetInt("size", 0))), nil
		})
	return s
}
