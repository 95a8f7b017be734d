package acp

import (
	"encoding/json"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/gateway"
)

// This file converts content between ACP and the gateway: prompt blocks,
// tool-call content and locations, stop reasons.

// fromACP converts a prompt's content blocks into model input.
func fromACP(blocks []acpsdk.ContentBlock) []gateway.Content {
	out := make([]gateway.Content, 0, len(blocks))
	for _, b := range blocks {
		switch {
		case b.Text != nil:
			out = append(out, gateway.Content{Type: gateway.ContentText, Text: b.Text.Text})
		case b.Image != nil:
			out = append(out, gateway.Content{Type: gateway.ContentImage, Data: b.Image.Data, MIMEType: b.Image.MimeType})
		case b.Audio != nil:
			out = append(out, gateway.Content{Type: gateway.ContentAudio, Data: b.Audio.Data, MIMEType: b.Audio.MimeType})
		case b.ResourceLink != nil:
			l := b.ResourceLink
			c := gateway.Content{Type: gateway.ContentResourceLink, URI: l.Uri, Name: l.Name}
			if l.Description != nil {
				c.Description = *l.Description
			}
			if l.MimeType != nil {
				c.MIMEType = *l.MimeType
			}
			out = append(out, c)
		case b.Resource != nil:
			r := b.Resource.Resource
			switch {
			case r.TextResourceContents != nil:
				c := gateway.Content{Type: gateway.ContentResource, URI: r.TextResourceContents.Uri, Text: r.TextResourceContents.Text}
				if r.TextResourceContents.MimeType != nil {
					c.MIMEType = *r.TextResourceContents.MimeType
				}
				out = append(out, c)
			case r.BlobResourceContents != nil:
				c := gateway.Content{Type: gateway.ContentResource, URI: r.BlobResourceContents.Uri, Data: r.BlobResourceContents.Blob}
				if r.BlobResourceContents.MimeType != nil {
					c.MIMEType = *r.BlobResourceContents.MimeType
				}
				out = append(out, c)
			}
		}
	}
	return out
}

// toACP converts result content into content blocks for the editor.
func toACP(content []gateway.Content) []acpsdk.ContentBlock {
	out := make([]acpsdk.ContentBlock, 0, len(content))
	for _, c := range content {
		switch c.Type {
		case gateway.ContentText:
			out = append(out, acpsdk.TextBlock(c.Text))
		case gateway.ContentImage:
			out = append(out, acpsdk.ImageBlock(c.Data, c.MIMEType))
		case gateway.ContentAudio:
			out = append(out, acpsdk.AudioBlock(c.Data, c.MIMEType))
		case gateway.ContentResourceLink:
			b := acpsdk.ResourceLinkBlock(c.Name, c.URI)
			if c.Description != "" {
				b.ResourceLink.Description = acpsdk.Ptr(c.Description)
			}
			if c.MIMEType != "" {
				b.ResourceLink.MimeType = acpsdk.Ptr(c.MIMEType)
			}
			if c.Title != "" {
				b.ResourceLink.Title = acpsdk.Ptr(c.Title)
			}
			if c.Size != nil {
				b.ResourceLink.Size = acpsdk.Ptr(int(*c.Size))
			}
			out = append(out, b)
		case gateway.ContentResource:
			var mime *string
			if c.MIMEType != "" {
				mime = acpsdk.Ptr(c.MIMEType)
			}
			if c.Data != "" {
				out = append(out, acpsdk.ResourceBlock(acpsdk.EmbeddedResourceResource{BlobResourceContents: &acpsdk.BlobResourceContents{Uri: c.URI, Blob: c.Data, MimeType: mime}}))
			} else {
				out = append(out, acpsdk.ResourceBlock(acpsdk.EmbeddedResourceResource{TextResourceContents: &acpsdk.TextResourceContents{Uri: c.URI, Text: c.Text, MimeType: mime}}))
			}
		}
	}
	return out
}

// toolContent is content as a tool call carries it: a diff as a diff, a
// terminal as the embedded terminal, anything else as content blocks. No
// content is nil (the update leaves the call's content as it is).
func toolContent(content []gateway.Content) []acpsdk.ToolCallContent {
	var out []acpsdk.ToolCallContent
	for i, c := range content {
		switch c.Type {
		case gateway.ContentDiff:
			out = append(out, acpsdk.ToolCallContent{Diff: &acpsdk.ToolCallContentDiff{Type: "diff", Path: c.Path, OldText: c.OldText, NewText: c.Text}})
		case gateway.ContentTerminal:
			out = append(out, acpsdk.ToolTerminalRef(c.TerminalID))
		default:
			for _, b := range toACP(content[i : i+1]) {
				out = append(out, acpsdk.ToolContent(b))
			}
		}
	}
	return out
}

// locations are the files content is about (the paths of its diffs), for
// an editor that follows along.
func locations(content []gateway.Content) []acpsdk.ToolCallLocation {
	var out []acpsdk.ToolCallLocation
	for _, c := range content {
		if c.Type == gateway.ContentDiff {
			out = append(out, acpsdk.ToolCallLocation{Path: c.Path})
		}
	}
	return out
}

// rawJSON returns args as raw JSON for rawInput (or as a string if it is
// not JSON).
func rawJSON(args json.RawMessage) any {
	if len(args) == 0 {
		return map[string]any{}
	}
	if json.Valid(args) {
		return args
	}
	return string(args)
}

// stopReason maps the Runner's stop reasons to ACP's.
func stopReason(s gateway.StopReason) acpsdk.StopReason {
	switch s {
	case gateway.StopMaxTokens:
		return acpsdk.StopReasonMaxTokens
	case gateway.StopMaxTurnRequests:
		return acpsdk.StopReasonMaxTurnRequests
	case gateway.StopRefusal:
		return acpsdk.StopReasonRefusal
	case gateway.StopCancelled:
		return acpsdk.StopReasonCancelled
	default:
		return acpsdk.StopReasonEndTurn
	}
}
