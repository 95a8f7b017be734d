package main

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// addListing records every tools/list request ("tools/list") and registers
// the tool list_changed, which announces a tool list change that did not
// happen (see the package doc).
func (a *app) addListing(hooks *server.Hooks) {
	hooks.AddBeforeListTools(func(context.Context, any, *mcp.ListToolsRequest) {
		a.rec.event("tools/list")
	})
	a.srv.AddTool(mcp.NewTool("list_changed",
		mcp.WithDescription("Sends notifications/tools/list_changed without changing the tool list."),
	), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := a.notify(ctx, mcp.MethodNotificationToolsListChanged, nil); err != nil {
			return mcp.NewToolResultError("notify: " + err.Error()), nil
		}
		return text("announced"), nil
	})
}
