package gateway_test

import (
	"testing"

	"github.com/acpgate/acpgate/gateway"
)

// TestPlainTextPrefix checks that PlainTextPrefix is PlainText cut at max
// bytes on a rune boundary, with PlainText's length, for every kind of
// content and every cut.
func TestPlainTextPrefix(t *testing.T) {
	contents := [][]gateway.Content{
		{{Type: gateway.ContentText, Text: "héllo wörld"}},
		{
			{Type: gateway.ContentText, Text: "first ☃"},
			{Type: gateway.ContentImage, Data: "aW1n", MIMEType: "image/png"},
			{Type: gateway.ContentResource, URI: "file:///a", Text: "body é"},
			{Type: gateway.ContentResource, URI: "file:///b", MIMEType: "application/octet-stream", Data: "YmxvYg=="},
			{Type: gateway.ContentResourceLink, URI: "file:///c", Name: "c", Description: "a link"},
			{Type: gateway.ContentAudio, Data: "YXVk", MIMEType: "audio/wav"},
			{Type: gateway.ContentDiff, Path: "/w/a.go", Text: "new"},
			{Type: gateway.ContentTerminal, TerminalID: "term-1", Text: "output ☃"},
			{Type: gateway.ContentText, Text: "last"},
		},
		nil,
	}
	for _, content := range contents {
		full := gateway.PlainText(content)
		for max := -1; max <= len(full)+1; max++ {
			prefix, total := gateway.PlainTextPrefix(content, max)
			if want := gateway.RunePrefix(full, max); prefix != want || total != len(full) {
				t.Fatalf("max %d: got %q, %d; want %q, %d", max, prefix, total, want, len(full))
			}
		}
	}
}

func TestRunePrefix(t *testing.T) {
	const s = "a☃b" // the snowman is 3 bytes: 1..3
	for max, want := range map[int]string{-1: s, 0: "", 1: "a", 2: "a", 3: "a", 4: "a☃", 5: "a☃b", 9: s} {
		if got := gateway.RunePrefix(s, max); got != want {
			t.Errorf("RunePrefix(%q, %d) = %q, want %q", s, max, got, want)
		}
	}
}
