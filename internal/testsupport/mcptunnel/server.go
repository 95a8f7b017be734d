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
//   - ask {message}: asks the client for a string "answer" (elicitation,
//     as a multi round-trip input request: the request-scoped tunnel has
//     no requests from the server) and returns "ACTION: ANSWER";
//   - roots: returns the client's roots (roots/list, the same way), one
//     URI a line;
//   - sample {prompt}: asks the client for a completion (sampling, the
//     same way) and returns its text;
//   - big {size}: returns a text of size bytes.
//
// Over a connection of the 2025-11-25 revision (an Endpoint on Legacy),
// mcp-go's server turns the input requests into the server requests of
// that revision.
func NewServer(name string) *server.MCPServer {
	s := server.NewMCPServer(name, "1.0.0", server.WithToolCapabilities(true))
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echo"), mcp.WithString("text", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(req.GetString("text", "")), nil
		})
	s.AddTool(mcp.NewTool("ask", mcp.WithDescription("Ask the user"), mcp.WithString("message", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if res := server.ElicitationResponse(req.Params.InputResponses, "answer"); res != nil {
				answer, _ := res.Content.(map[string]any)["answer"].(string)
				return mcp.NewToolResultText(fmt.Sprintf("%s: %s", res.Action, answer)), nil
			}
			return server.NewInputRequestBuilder("").Elicit("answer", mcp.ElicitationParams{
				Message: req.GetString("message", ""),
				RequestedSchema: map[string]any{"type": "object",
					"properties": map[string]any{"answer": map[string]any{"type": "string"}}, "required": []any{"answer"}},
			}).ToolResult(), nil
		})
	s.AddTool(mcp.NewTool("roots", mcp.WithDescription("List the roots")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res := server.RootsResponse(req.Params.InputResponses, "roots")
			if res == nil {
				return server.NewInputRequestBuilder("").Roots("roots").ToolResult(), nil
			}
			var b strings.Builder
			for _, r := range res.Roots {
				b.WriteString(r.URI + "\n")
			}
			return mcp.NewToolResultText(b.String()), nil
		})
	s.AddTool(mcp.NewTool("sample", mcp.WithDescription("Ask the client's model"), mcp.WithString("prompt", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res := server.SamplingResponse(req.Params.InputResponses, "sample")
			if res == nil {
				return server.NewInputRequestBuilder("").Sample("sample", mcp.CreateMessageParams{
					Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(req.GetString("prompt", ""))}},
					MaxTokens: 100,
				}).ToolResult(), nil
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
