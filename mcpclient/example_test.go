package mcpclient_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/acpgate/acpgate/mcpclient"
)

// A Manager with one stdio MCP server: start it, list its tools, call one,
// close. (serverBin is the path of a test MCP server, built by TestMain.)
func ExampleManager() {
	m, err := mcpclient.New([]mcpclient.ServerSpec{
		{Name: "demo", Command: serverBin, Args: []string{"-name", "demo"}},
	}, nil) // nil: the default Options
	if err != nil {
		fmt.Println(err)
		return
	}
	// Close stops every server; it must be called, even after a failed Start.
	defer m.Close(context.Background())

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Start connects the servers and waits until each is ready or failed.
	if err := m.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	st, _ := m.Status("demo")
	fmt.Println("demo:", st.State)

	// Tools lists the tools of every ready server, each with its server's
	// name and its definition as the server sent it.
	var names []string
	for _, t := range m.Tools() {
		names = append(names, t.Server+"/"+t.Tool.Name)
		if t.Tool.Name == "echo" {
			fmt.Println("echo:", t.Tool.Description)
		}
	}
	slices.Sort(names)
	fmt.Println("first tools:", names[:3])

	res, err := m.CallTool(ctx, "demo", "echo", map[string]any{"text": "hello"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("echo returned:", res.Content[0].(mcp.TextContent).Text)
	// Output:
	// demo: ready
	// echo: Returns its text argument as text content.
	// first tools: [demo/add demo/add_tool demo/ask]
	// echo returned: hello
}
