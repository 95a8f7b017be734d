package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/mcpclient"
)

// The names of the resource tools (see ResourceTools).
const (
	ListResourcesTool = "mcp_list_resources"
	ReadResourceTool  = "mcp_read_resource"
)

// errNoResourceServer (said in a tool result, never returned): a resource URI belongs to no server of the session
// (none lists it, no template matches it) and no server was named.
var errNoResourceServer = errors.New("no MCP server of this session offers the resource")

// ResourceCaller is what the resource tools need of a session's MCP
// servers; *mcpclient.Manager implements it. Items and results are
// mcp-go's types, as mcpclient returns them. Implementations must be safe
// for concurrent use.
type ResourceCaller interface {
	Resources() []mcpclient.ServerResource[mcp.Resource]
	ResourceTemplates() []mcpclient.ServerResource[mcp.ResourceTemplate]
	// ResourceServer returns the server uri belongs to (see
	// mcpclient.Manager.ResourceServer).
	ResourceServer(uri string) (string, bool)
	ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error)
}

// HasResources reports whether a server of c offers resources or
// resource templates.
func HasResources(c ResourceCaller) bool {
	return len(c.Resources()) > 0 || len(c.ResourceTemplates()) > 0
}

// ResourceList describes the resources and templates of c's servers (of
// server alone, when it is not ""), one line each: name, URI (or URI
// template), MIME type and the first line of the description, grouped by
// server. It is the servers' own text, unframed: what the user is shown.
// "" when there is none.
func ResourceList(c ResourceCaller, server string) string {
	var b strings.Builder
	last := ""
	head := func(s string) {
		if s != last {
			fmt.Fprintf(&b, "\n**%s**\n", s)
			last = s
		}
	}
	item := func(name, uri, mime, desc string) {
		fmt.Fprintf(&b, "- %s `%s`", name, uri)
		if mime != "" {
			fmt.Fprintf(&b, " (%s)", mime)
		}
		if d, _, _ := strings.Cut(strings.TrimSpace(desc), "\n"); d != "" {
			b.WriteString(" " + d)
		}
		b.WriteString("\n")
	}
	for _, r := range c.Resources() {
		if server == "" || r.Server == server {
			head(r.Server)
			item(r.Item.Name, r.Item.URI, r.Item.MIMEType, r.Item.Description)
		}
	}
	last = ""
	for _, t := range c.ResourceTemplates() {
		if server == "" || t.Server == server {
			if last == "" {
				b.WriteString("\nTemplates:\n")
			}
			head(t.Server)
			uri := ""
			if t.Item.URITemplate != nil && t.Item.URITemplate.Template != nil {
				uri = t.Item.URITemplate.Raw()
			}
			item(t.Item.Name, uri, t.Item.MIMEType, t.Item.Description)
		}
	}
	return strings.TrimSpace(b.String())
}

// ReadResource reads uri from server through c (the server uri belongs
// to, when server is ""), as a tool result: the user sees the contents as
// the server sent them, the model a redacted, capped and (unless the
// server is trusted) framed text, exactly like a tool result (see
// Options). A read that fails is a failed result saying why.
func ReadResource(ctx context.Context, c ResourceCaller, opts *Options, server, uri string) gateway.Result {
	f := opts.framer()
	if server == "" {
		s, ok := c.ResourceServer(uri)
		if !ok {
			return gateway.ErrorResult(fmt.Sprintf("%v: %s (name its server; %s lists the resources)", errNoResourceServer, uri, ListResourcesTool))
		}
		server = s
	}
	src := source{server: server, resource: uri}
	res, err := c.ReadResource(ctx, server, uri)
	if err != nil {
		out := gateway.ErrorResult(fmt.Sprintf("Reading the resource %s of MCP server %s failed: %v", uri, server, err))
		out.ForModel = "Reading the resource failed:\n" + f.forModel(src, "error message", "error message", err.Error(), 0)
		return out
	}
	blocks := make([]mcp.Content, 0, len(res.Contents))
	for _, rc := range res.Contents {
		blocks = append(blocks, mcp.EmbeddedResource{Type: mcp.ContentTypeResource, Resource: rc})
	}
	return f.convert(src, &mcp.CallToolResult{Content: blocks})
}

// ResourceTools returns the tools mcp_list_resources and
// mcp_read_resource over c's resources, or none when no server of c has
// resources or templates. Both are read-only (kind read) and ask nothing.
// What they give the model is framed like tool results (see Options).
func ResourceTools(c ResourceCaller, opts *Options) []gateway.Tool {
	if !HasResources(c) {
		return nil
	}
	f := opts.framer()
	meta := map[string]any{"resources": true}
	return []gateway.Tool{{
		Name:        ListResourcesTool,
		Title:       "List MCP resources",
		Description: "Lists the resources (name, URI, MIME type, description) and resource templates the MCP servers of this session offer. Read one with " + ReadResourceTool + ".",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"server":{"type":"string","description":"Only this MCP server's resources."}}}`),
		Kind:        gateway.KindRead,
		Annotations: gateway.Annotations{ReadOnly: true, Idempotent: true},
		Meta:        meta,
		Execute: func(_ context.Context, args json.RawMessage, _ func(gateway.Progress)) (gateway.Result, error) {
			var in struct {
				Server string `json:"server"`
			}
			if err := json.Unmarshal(args, &in); err != nil {
				return gateway.ErrorResult("invalid arguments: " + err.Error()), nil
			}
			list := ResourceList(c, in.Server)
			if list == "" {
				return gateway.TextResult("No resources."), nil
			}
			out := gateway.TextResult(list)
			server := in.Server
			if server == "" {
				server = "(all)"
			}
			out.ForModel = f.forModel(source{server: server, tool: ListResourcesTool, name: ListResourcesTool}, "output", "result", list, 0)
			return out, nil
		},
	}, {
		Name:  ReadResourceTool,
		Title: "Read an MCP resource",
		Description: "Reads a resource of an MCP server of this session by its URI (from " + ListResourcesTool +
			", a resource template, or a resource link in a tool result). Give the server when the URI came from one.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"uri":{"type":"string","description":"The resource's URI."},"server":{"type":"string","description":"The MCP server to read it from (default: the server that lists it)."}},"required":["uri"]}`),
		Kind:        gateway.KindRead,
		Annotations: gateway.Annotations{ReadOnly: true, Idempotent: true},
		Meta:        meta,
		Execute: func(ctx context.Context, args json.RawMessage, _ func(gateway.Progress)) (gateway.Result, error) {
			var in struct {
				URI    string `json:"uri"`
				Server string `json:"server"`
			}
			if err := json.Unmarshal(args, &in); err != nil || in.URI == "" {
				return gateway.ErrorResult("invalid arguments: want {\"uri\": string, \"server\"?: string}"), nil
			}
			return ReadResource(ctx, c, opts, in.Server, in.URI), nil
		},
	}}
}

// Content converts MCP content blocks (of a prompt's messages, say) to
// gateway content, unchanged: what the user or the model is given as it
// came.
func Content(in []mcp.Content) []gateway.Content { return convertContent(in) }
