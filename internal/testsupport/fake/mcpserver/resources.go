package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
)

func (a *app) addResourcesAndPrompts() {
	s := a.srv
	s.AddResource(mcp.NewResource("test://hello", "hello",
		mcp.WithResourceDescription("A plain text greeting."),
		mcp.WithMIMEType("text/plain"),
	), func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{
			URI: "test://hello", MIMEType: "text/plain", Text: "hello world",
		}}, nil
	})

	s.AddResource(mcp.NewResource("test://data.json", "data.json",
		mcp.WithResourceDescription("A small JSON document."),
		mcp.WithMIMEType("application/json"),
	), func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{
			URI: "test://data.json", MIMEType: "application/json", Text: `{"k":1}`,
		}}, nil
	})

	s.AddResourceTemplate(mcp.NewResourceTemplate("test://items/{id}", "item",
		mcp.WithTemplateDescription("An item by id."),
		mcp.WithTemplateMIMEType("text/plain"),
	), func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		id := ""
		switch v := req.Params.Arguments["id"].(type) {
		case string:
			id = v
		case []string:
			if len(v) > 0 {
				id = v[0]
			}
		}
		return []mcp.ResourceContents{mcp.TextResourceContents{
			URI: req.Params.URI, MIMEType: "text/plain", Text: "item " + id,
		}}, nil
	})

	s.AddPrompt(mcp.NewPrompt("greet",
		mcp.WithPromptDescription("Greets someone by name."),
		mcp.WithArgument("name", mcp.RequiredArgument(), mcp.ArgumentDescription("Who to greet.")),
	), func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		name, ok := req.Params.Arguments["name"]
		if !ok || name == "" {
			return nil, errors.New("missing required argument name")
		}
		return mcp.NewGetPromptResult("A greeting", []mcp.PromptMessage{
			mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(fmt.Sprintf("Hello, %s!", name))),
		}), nil
	})

	s.AddPrompt(mcp.NewPrompt("plain",
		mcp.WithPromptDescription("A prompt without arguments."),
	), func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return mcp.NewGetPromptResult("A plain prompt", []mcp.PromptMessage{
			mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("This is a plain prompt.")),
		}), nil
	})
}
