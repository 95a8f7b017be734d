package acp

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acpgate/acpgate/gateway"
)

func TestStoredCopy(t *testing.T) {
	text := func(s string) gateway.Content { return gateway.Content{Type: gateway.ContentText, Text: s} }
	image := gateway.Content{Type: gateway.ContentImage, Data: strings.Repeat("A", 40), MIMEType: "image/png"} // 49 bytes
	tests := []struct {
		name       string
		in         gateway.Result
		limit      int
		want       []string // the texts of the stored blocks, "<image>" for the image
		structured bool
		kept, full int // 0, 0: whole
	}{
		{"fits", gateway.Result{Content: []gateway.Content{text("hello"), image}}, 54, []string{"hello", "<image>"}, false, 0, 0},
		{"text cut", gateway.Result{Content: []gateway.Content{text(strings.Repeat("x", 100))}}, 10,
			[]string{strings.Repeat("x", 10), "\n[stored copy truncated: 10 of 100 bytes kept]"}, false, 10, 100},
		{"cut on a rune boundary", gateway.Result{Content: []gateway.Content{text("ééééé")}}, 5,
			[]string{"éé", "\n[stored copy truncated: 4 of 10 bytes kept]"}, false, 4, 10},
		{"data is dropped, not cut", gateway.Result{Content: []gateway.Content{text("head"), image, text("tail")}}, 30,
			[]string{"head", "\n[stored copy truncated: 4 of 57 bytes kept]"}, false, 4, 57},
		{"structured dropped when it no longer fits", gateway.Result{Content: []gateway.Content{text(strings.Repeat("x", 100))}, Structured: json.RawMessage(`{"a":1}`)}, 20,
			[]string{strings.Repeat("x", 20), "\n[stored copy truncated: 20 of 107 bytes kept]"}, false, 20, 107},
		{"structured kept when it fits", gateway.Result{Content: []gateway.Content{image}, Structured: json.RawMessage(`{"a":1}`), IsError: true}, 10,
			[]string{"\n[stored copy truncated: 7 of 56 bytes kept]"}, true, 7, 56},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cut := storedCopy(tt.in, tt.limit)
			var texts []string
			for _, c := range got.Content {
				if c.Type == gateway.ContentImage {
					texts = append(texts, "<image>")
					continue
				}
				if !utf8.ValidString(c.Text) {
					t.Errorf("invalid UTF-8 %q", c.Text)
				}
				texts = append(texts, c.Text)
			}
			if strings.Join(texts, "|") != strings.Join(tt.want, "|") {
				t.Errorf("blocks %q, want %q", texts, tt.want)
			}
			if (got.Structured != nil) != (tt.structured || cut == nil && tt.in.Structured != nil) {
				t.Errorf("structured %s", got.Structured)
			}
			if got.IsError != tt.in.IsError {
				t.Error("isError lost")
			}
			switch {
			case tt.full == 0 && cut != nil:
				t.Errorf("cut %+v, want none", *cut)
			case tt.full != 0 && (cut == nil || cut.kept != tt.kept || cut.full != tt.full):
				t.Errorf("cut %+v, want %d of %d", cut, tt.kept, tt.full)
			}
			if cut != nil && cut.kept > tt.limit {
				t.Errorf("kept %d > limit %d", cut.kept, tt.limit)
			}
			out := rawOutput(got, cut)
			if _, ok := out["truncated"]; ok != (cut != nil) || out["isError"] != tt.in.IsError {
				t.Errorf("rawOutput %v", out)
			}
		})
	}
}
