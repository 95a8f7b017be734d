package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/acpgate/acpgate/bridge"
	"github.com/acpgate/acpgate/mcpclient"
)

// exampleServers stands in for a session's *mcpclient.Manager: one server,
// "notes", with one tool.
type exampleServers struct{}

func (exampleServers) Tools() []mcpclient.ServerTool {
	return []mcpclient.ServerTool{{Server: "notes", Tool: mcp.Tool{
		Name:           "read note",
		Description:    "Reads a note.",
		RawInputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}}}`),
	}}}
}

func (exampleServers) CallTool(_ context.Context, server, tool string, args any, _ ...mcpclient.CallOption) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultText(fmt.Sprintf("%s/%s %s: buy milk", server, tool, args)), nil
}

// Name is the rule for a bridged tool's name: mcp__<server>__<tool>, the
// characters a model may not call replaced.
func ExampleName() {
	fmt.Println(bridge.Name("github", "create_issue"))
	fmt.Println(bridge.Name("my server", "read.file"))
	// Output:
	// mcp__github__create_issue
	// mcp__my_server__read_file
}

// Tools makes gateway tools of a session's MCP tools, with the map from
// each bridged name back to its server and tool. What a call returns
// reaches the model framed as untrusted; the user sees it raw.
func ExampleTools() {
	tools, targets := bridge.Tools(exampleServers{}, nil) // nil: the default Options
	for _, t := range tools {
		fmt.Printf("%s -> %+v\n", t.Name, targets[t.Name])
		fmt.Println("schema:", string(t.InputSchema))
		res, err := t.Execute(context.Background(), json.RawMessage(`{"id":"n1"}`), nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("user sees:", res.Content[0].Text)
		fmt.Println("framed for the model:", res.ForModel != res.Content[0].Text)
	}
	// Output:
	// mcp__notes__read_note -> {Server:notes Tool:read note}
	// schema: {"type":"object","properties":{"id":{"type":"string"}}}
	// user sees: notes/read note {"id":"n1"}: buy milk
	// framed for the model: true
}
