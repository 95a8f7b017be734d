package gateway_test

import (
	"testing"
	"unicode/utf8"

	"github.com/acpgate/acpgate/gateway"
)

// TestPlainText pins how each kind of content is rendered for the model,
// with literal expected text (the golden table), and how blocks are
// joined.
func TestPlainText(t *testing.T) {
	old := "old"
	for _, tc := range []struct {
		name    string
		content []gateway.Content
		want    string
	}{
		{"none", nil, ""},
		{"text", []gateway.Content{{Type: gateway.ContentText, Text: "héllo wörld"}}, "héllo wörld"},
		{"image", []gateway.Content{{Type: gateway.ContentImage, Data: "aW1n", MIMEType: "image/png"}}, "[image: image/png, 4 bytes base64]"},
		{"audio", []gateway.Content{{Type: gateway.ContentAudio, Data: "YXVkaW8=", MIMEType: "audio/wav"}}, "[audio: audio/wav, 8 bytes base64]"},
		{"text resource", []gateway.Content{{Type: gateway.ContentResource, URI: "file:///a", MIMEType: "text/plain", Text: "body é"}}, "[resource file:///a]\nbody é"},
		{"blob resource", []gateway.Content{{Type: gateway.ContentResource, URI: "file:///b", MIMEType: "application/octet-stream", Data: "YmxvYg=="}}, "[resource file:///b: application/octet-stream, 8 bytes base64]"},
		{"resource link", []gateway.Content{{Type: gateway.ContentResourceLink, URI: "file:///c", Name: "c", Description: "a link"}}, "[resource link c: file:///c] a link"},
		{"resource link without description", []gateway.Content{{Type: gateway.ContentResourceLink, URI: "file:///c", Name: "c"}}, "[resource link c: file:///c]"},
		// A diff is named, not shown: the model asked for the change.
		{"diff", []gateway.Content{{Type: gateway.ContentDiff, Path: "/w/a.go", OldText: &old, Text: "new"}}, "[changed /w/a.go]"},
		{"new file diff", []gateway.Content{{Type: gateway.ContentDiff, Path: "/w/b.go", Text: "new"}}, "[changed /w/b.go]"},
		// A terminal is its output when the call ended, as is.
		{"terminal", []gateway.Content{{Type: gateway.ContentTerminal, TerminalID: "term-1", Text: "$ make\nok ☃"}}, "$ make\nok ☃"},
		{"terminal without output", []gateway.Content{{Type: gateway.ContentTerminal, TerminalID: "term-1"}}, ""},
		{"blocks joined by a newline", []gateway.Content{
			{Type: gateway.ContentText, Text: "a"},
			{Type: gateway.ContentDiff, Path: "/w/a.go"},
			{Type: gateway.ContentTerminal, TerminalID: "t", Text: "out"},
		}, "a\n[changed /w/a.go]\nout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := gateway.PlainText(tc.content); got != tc.want {
				t.Errorf("PlainText = %q, want %q", got, tc.want)
			}
		})
	}
}

// mixed has every kind of content; mixedText is its rendering, written
// out by hand.
var (
	mixed = []gateway.Content{
		{Type: gateway.ContentText, Text: "first ☃"},
		{Type: gateway.ContentImage, Data: "aW1n", MIMEType: "image/png"},
		{Type: gateway.ContentResource, URI: "file:///a", Text: "body é"},
		{Type: gateway.ContentResource, URI: "file:///b", MIMEType: "application/octet-stream", Data: "YmxvYg=="},
		{Type: gateway.ContentResourceLink, URI: "file:///c", Name: "c", Description: "a link"},
		{Type: gateway.ContentAudio, Data: "YXVk", MIMEType: "audio/wav"},
		{Type: gateway.ContentDiff, Path: "/w/a.go", Text: "new"},
		{Type: gateway.ContentTerminal, TerminalID: "term-1", Text: "output ☃"},
		{Type: gateway.ContentText, Text: "last"},
	}
	mixedText = "first ☃\n" +
		"[image: image/png, 4 bytes base64]\n" +
		"[resource file:///a]\nbody é\n" +
		"[resource file:///b: application/octet-stream, 8 bytes base64]\n" +
		"[resource link c: file:///c] a link\n" +
		"[audio: audio/wav, 4 bytes base64]\n" +
		"[changed /w/a.go]\n" +
		"output ☃\n" +
		"last"
)

// cutAt is the test's own rune-boundary cut: the longest prefix of s,
// rune by rune, of at most max bytes (all of s if max < 0).
func cutAt(s string, max int) string {
	if max < 0 {
		return s
	}
	end := 0
	for i, r := range s {
		if i+utf8.RuneLen(r) > max {
			break
		}
		end = i + utf8.RuneLen(r)
	}
	return s[:end]
}

// TestPlainTextPrefix checks PlainTextPrefix against the hand-written
// rendering: at every cut, the prefix is that text cut at max bytes on a
// rune boundary (by the test's own cut), and the length is the whole
// text's; and a few cuts are pinned literally.
func TestPlainTextPrefix(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content []gateway.Content
		full    string
	}{
		{"one text block", []gateway.Content{{Type: gateway.ContentText, Text: "héllo wörld"}}, "héllo wörld"},
		{"every kind", mixed, mixedText},
		{"none", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for max := -1; max <= len(tc.full)+1; max++ {
				prefix, total := gateway.PlainTextPrefix(tc.content, max)
				if want := cutAt(tc.full, max); prefix != want || total != len(tc.full) {
					t.Fatalf("max %d: got %q, %d; want %q, %d", max, prefix, total, want, len(tc.full))
				}
			}
		})
	}
	// The snowman of "first ☃" is bytes 6..8; the image note starts at 10.
	for max, want := range map[int]string{
		6:  "first ",
		8:  "first ",
		9:  "first ☃",
		10: "first ☃\n",
		15: "first ☃\n[imag",
		-1: mixedText,
	} {
		if got, _ := gateway.PlainTextPrefix(mixed, max); got != want {
			t.Errorf("PlainTextPrefix(mixed, %d) = %q, want %q", max, got, want)
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
