package gateway_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/gateway"
)

// mediaModel is a provider that takes PNG and WAV within bounds.
type mediaModel struct{ sup gateway.MediaSupport }

func (m mediaModel) Complete(context.Context, gateway.ModelRequest, func(gateway.Delta)) (gateway.ModelResponse, error) {
	return gateway.ModelResponse{}, nil
}

func (m mediaModel) Media() gateway.MediaSupport { return m.sup }

const onePixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

func image(data, mime string) gateway.Content {
	return gateway.Content{Type: gateway.ContentImage, Data: data, MIMEType: mime}
}

// TestMediaGatePrepare: each image the model cannot take becomes a note
// saying why, an image whose data is another type it takes is relabelled,
// the count bound keeps the newest, and the history is not modified.
func TestMediaGatePrepare(t *testing.T) {
	t.Parallel()
	model := mediaModel{gateway.MediaSupport{ImageTypes: []string{"image/png", "image/jpeg"}, AudioTypes: []string{"audio/wav"}, MaxPartBytes: 200, MaxParts: 3}}
	gif := base64.StdEncoding.EncodeToString([]byte("GIF89a\x01\x00\x01\x00"))
	big := base64.StdEncoding.EncodeToString(append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 300)...))
	cases := []struct {
		name string
		in   gateway.Content
		want string // the note's words, or "" for the part as it is
		mime string // the part's type when sent
	}{
		{"png", image(onePixel, "image/png"), "", "image/png"},
		{"relabelled", image(onePixel, "image/jpeg"), "", "image/png"},
		{"type", image(gif, "image/gif"), `the model does not take "image/gif"`, ""},
		{"not base64", image("not base64!", "image/png"), "is not valid base64", ""},
		{"whitespace", image(onePixel[:20]+"\n"+onePixel[20:], "image/png"), "is not valid base64", ""},
		{"bad padding", image("iVBORw0KGgp=", "image/png"), "is not valid base64", ""},
		{"big", image(big, "image/png"), "image/png of 308 bytes, over the limit of 200 bytes per part", ""},
		{"not an image", image(base64.StdEncoding.EncodeToString([]byte("hello world!")), "image/png"), `its data is not an image of the type it claims, "image/png"`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msgs := []gateway.Message{{Role: gateway.RoleUser, Content: []gateway.Content{c.in}}}
			out, kept := (&gateway.MediaGate{}).Prepare(model, msgs)
			got := out[0].Content[0]
			if msgs[0].Content[0] != c.in {
				t.Fatal("the history was modified")
			}
			switch {
			case c.want == "" && (got.Type != gateway.ContentImage || got.MIMEType != c.mime || kept != 1):
				t.Errorf("sent %+v (kept %d)", got, kept)
			case c.want != "" && (got.Type != gateway.ContentText || !strings.Contains(got.Text, c.want) || kept != 0):
				t.Errorf("got %q, want a note with %q", got.Text, c.want)
			}
		})
	}

	// The count: the newest three of five are sent, across messages and
	// tool results; a session's own limit lowers the provider's.
	var msgs []gateway.Message
	for range 5 {
		msgs = append(msgs, gateway.Message{Role: gateway.RoleTool, ToolCallID: "c", Result: &gateway.Result{ModelContent: []gateway.Content{{Type: gateway.ContentText, Text: "t"}, image(onePixel, "image/png")}}})
	}
	out, kept := (&gateway.MediaGate{}).Prepare(model, msgs)
	if kept != 3 || out[0].Result.ModelContent[1].Type != gateway.ContentText || out[1].Result.ModelContent[1].Type != gateway.ContentText || out[4].Result.ModelContent[1].Type != gateway.ContentImage {
		t.Errorf("kept %d: %+v", kept, out)
	}
	var g gateway.MediaGate
	g.SetLimits(gateway.MediaLimits{MaxParts: 1, MaxPartBytes: 1 << 30})
	if _, kept := g.Prepare(model, msgs); kept != 1 {
		t.Errorf("with a limit of 1: kept %d", kept)
	}
	// A refusal: nothing more is sent.
	if !g.Refuse() || g.Refuse() {
		t.Error("Refuse reports the first refusal only")
	}
	if out, kept := g.Prepare(model, msgs); kept != 0 || !strings.Contains(out[4].Result.ModelContent[1].Text, "refused") {
		t.Errorf("after a refusal: kept %d, %+v", kept, out[4].Result.ModelContent)
	}
	// A model that takes nothing.
	if out, _ := (&gateway.MediaGate{}).Prepare(mediaModel{}, msgs[:1]); out[0].Result.ModelContent[1].Text != "[image not sent to the model: the model does not take image]" {
		t.Errorf("no vision: %+v", out[0].Result.ModelContent)
	}
}

// TestModelParts: a result's parts are ModelContent; else its content's
// media after ForModel; else its text alone.
func TestModelParts(t *testing.T) {
	t.Parallel()
	text := gateway.TextResult("hello")
	if p := text.ModelParts(); len(p) != 1 || p[0].Text != "hello" {
		t.Errorf("text: %+v", p)
	}
	mixed := gateway.Result{Content: []gateway.Content{{Type: gateway.ContentText, Text: "see"}, image(onePixel, "image/png")}}
	if p := mixed.ModelParts(); len(p) != 2 || p[0].Text != "see" || p[1].Data != onePixel {
		t.Errorf("content: %+v", p)
	}
	mixed.ForModel = "framed"
	if p := mixed.ModelParts(); len(p) != 2 || p[0].Text != "framed" || p[1].Data != onePixel {
		t.Errorf("ForModel: %+v", p)
	}
	if images, audio, bytes := gateway.MediaCount([]gateway.Message{{Role: gateway.RoleTool, Result: &mixed}, {Role: gateway.RoleUser, Content: mixed.Content}}); images != 2 || audio != 0 || bytes != 2*len(onePixel) {
		t.Errorf("count %d %d %d", images, audio, bytes)
	}
}

// BenchmarkMediaGatePrepare: the checks of a request carrying 20
// screenshots of 1 MB each (base64 checked, type sniffed), per request.
func BenchmarkMediaGatePrepare(b *testing.B) {
	model := mediaModel{gateway.MediaSupport{ImageTypes: []string{"image/png"}, MaxPartBytes: 4 << 20, MaxParts: 100}}
	png := make([]byte, 1<<20)
	copy(png, "\x89PNG\r\n\x1a\n")
	data := base64.StdEncoding.EncodeToString(png)
	var msgs []gateway.Message
	for range 20 {
		msgs = append(msgs, gateway.Message{Role: gateway.RoleTool, Result: &gateway.Result{ModelContent: []gateway.Content{{Type: gateway.ContentText, Text: "shot"}, image(data, "image/png")}}})
	}
	var g gateway.MediaGate
	b.SetBytes(int64(20 * len(data)))
	for b.Loop() {
		if _, kept := g.Prepare(model, msgs); kept != 20 {
			b.Fatal(kept)
		}
	}
}
