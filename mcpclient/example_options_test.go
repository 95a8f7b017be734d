package mcpclient_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/acpgate/acpgate/mcpclient"
)

// Options configure a Manager: here OnEvent follows each server's
// changes, in order, and every server gets a call timeout and a budget of
// calls. The server is a streamable HTTP one, served in process on
// 127.0.0.1 by mcp-go.
func ExampleOptions() {
	srv := server.NewMCPServer("notes", "1.0.0", server.WithToolCapabilities(true))
	srv.AddTool(mcp.NewTool("count", mcp.WithDescription("Counts the notes.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("3 notes"), nil
		})
	ts := httptest.NewServer(server.NewStreamableHTTPServer(srv))
	defer ts.Close()

	events := make(chan mcpclient.Event, 16)
	m, err := mcpclient.New([]mcpclient.ServerSpec{{
		Name: "notes", Transport: mcpclient.TransportHTTP, URL: ts.URL + "/mcp",
		CallTimeout: 10 * time.Second,
	}}, &mcpclient.Options{
		// OnEvent runs off the caller's goroutine, one event at a time; it
		// must return promptly.
		OnEvent:        func(ev mcpclient.Event) { events <- ev },
		CallsPerMinute: 100,
		ClientName:     "example",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	// Start returns once OnEvent has seen what it reports.
	for len(events) > 0 {
		switch ev := <-events; ev.Kind {
		case mcpclient.EventStatus:
			fmt.Println("event:", ev.Server, "is", ev.Status.State)
		case mcpclient.EventToolsChanged:
			fmt.Println("event:", ev.Server, "changed its tools")
		}
	}
	res, err := m.CallTool(ctx, "notes", "count", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("count:", res.Content[0].(mcp.TextContent).Text)
	_, err = m.CallTool(ctx, "nobody", "count", nil)
	fmt.Println("unknown server:", errors.Is(err, mcpclient.ErrUnknownServer))
	// Output:
	// event: notes is ready
	// event: notes changed its tools
	// count: 3 notes
	// unknown server: true
}
