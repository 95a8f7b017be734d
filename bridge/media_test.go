package bridge_test

import (
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/acpgate/acpgate/bridge"
	"github.com/acpgate/acpgate/gateway"
)

// TestMediaParts: what the model is given of a result with an image, an
// audio clip and an embedded image blob is the framed text, then each as
// a part, preceded (for an untrusted server) by a note naming the server
// and the tool; a trusted server's come plain; a text-only result has no
// parts of its own (the providers send its text as before).
func TestMediaParts(t *testing.T) {
	res := &mcp.CallToolResult{Content: []mcp.Content{
		mcp.TextContent{Type: "text", Text: "a screenshot"},
		mcp.ImageContent{Type: "image", Data: "aW1n", MIMEType: "image/png"},
		mcp.AudioContent{Type: "audio", Data: "YXVk", MIMEType: "audio/wav"},
		mcp.EmbeddedResource{Type: "resource", Resource: mcp.BlobResourceContents{URI: "file:///b.png", MIMEType: "image/png", Blob: "YmxvYg=="}},
		mcp.EmbeddedResource{Type: "resource", Resource: mcp.BlobResourceContents{URI: "file:///b.bin", MIMEType: "application/octet-stream", Blob: "YmxvYg=="}},
	}}
	out := execOne(t, nil, res, nil)
	parts := out.ModelContent
	if len(parts) != 7 || parts[0].Text != out.ForModel {
		t.Fatalf("parts %+v", parts)
	}
	for i, want := range []struct {
		typ  gateway.ContentType
		data string
	}{{gateway.ContentImage, "aW1n"}, {gateway.ContentAudio, "YXVk"}, {gateway.ContentImage, "YmxvYg=="}} {
		note, part := parts[1+2*i], parts[2+2*i]
		if part.Type != want.typ || part.Data != want.data || note.Type != gateway.ContentText ||
			!strings.Contains(note.Text, `of the tool "mcp__srv__t" of the MCP server "srv"`) || !strings.Contains(note.Text, "untrusted external data") {
			t.Errorf("part %d: %+v after %q", i, part, note.Text)
		}
	}
	trusted := execOne(t, &bridge.Options{Trusted: func(string) bool { return true }}, res, nil)
	if p := trusted.ModelContent; len(p) != 4 || p[1].Type != gateway.ContentImage || p[2].Type != gateway.ContentAudio || p[3].Type != gateway.ContentImage {
		t.Errorf("trusted: %+v", p)
	}
	text := execOne(t, nil, &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent{Type: "text", Text: "only text"}}}, nil)
	if text.ModelContent != nil || len(text.ModelParts()) != 1 || text.ModelParts()[0].Text != text.ForModel {
		t.Errorf("text only: %+v", text.ModelContent)
	}
}
