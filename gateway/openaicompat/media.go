package openaicompat

import (
	"fmt"
	"slices"
	"strings"

	"github.com/openai/openai-go/v3"

	"github.com/acpgate/acpgate/gateway"
)

// This file is what reaches the model of a tool result besides text. A
// tool message of Chat Completions carries text only, so the images and
// audio of a step's results follow the step's tool messages as the parts
// of one user message (what clients that send them do), and each tool
// message says which of them are its.

// imageTypes are the MIME types of the images the API takes (OpenAI's
// vision guide: PNG, JPEG, WebP, non-animated GIF); audioFormats the
// input_audio formats (wav, mp3) by MIME type.
var (
	imageTypes   = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}
	audioFormats = map[string]string{"audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}
)

// The API's documented bounds on images (OpenAI's vision guide): 20 MB per
// image, 500 images per request.
const (
	MaxImageBytes = 20 << 20
	MaxImages     = 500
)

// Media implements gateway.MediaTaker: images unless the configuration
// says the model takes none (Config.NoImages), and audio (wav, mp3) when
// it says the model takes audio (Config.Audio).
func (p *Provider) Media() gateway.MediaSupport {
	var sup gateway.MediaSupport
	if !p.cfg.NoImages {
		sup.ImageTypes = imageTypes
	}
	if p.cfg.Audio {
		for t := range audioFormats {
			sup.AudioTypes = append(sup.AudioTypes, t)
		}
		slices.Sort(sup.AudioTypes)
	}
	if sup.ImageTypes != nil || sup.AudioTypes != nil {
		sup.MaxPartBytes, sup.MaxParts = MaxImageBytes, MaxImages
	}
	return sup
}

// mediaPart is c as a content part: an image as a data URL, audio of a
// format the API knows as input_audio; ok is false for anything else.
func mediaPart(c gateway.Content) (openai.ChatCompletionContentPartUnionParam, bool) {
	switch {
	case c.Type == gateway.ContentImage && slices.Contains(imageTypes, c.MIMEType):
		return openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "data:" + c.MIMEType + ";base64," + c.Data}), true
	case c.Type == gateway.ContentAudio && audioFormats[c.MIMEType] != "":
		return openai.InputAudioContentPart(openai.ChatCompletionContentPartInputAudioInputAudioParam{Data: c.Data, Format: audioFormats[c.MIMEType]}), true
	}
	return openai.ChatCompletionContentPartUnionParam{}, false
}

// messages converts the history: a run of tool messages (one step's
// results) is followed by a user message with their images and audio.
func messages(in []gateway.Message) []openai.ChatCompletionMessageParamUnion {
	var out []openai.ChatCompletionMessageParamUnion
	var media []openai.ChatCompletionContentPartUnionParam // of the run of tool messages under way
	flush := func() {
		if len(media) > 0 {
			head := openai.TextContentPart("[The images and audio of the tool results above, which a tool message cannot carry; each is preceded by what it is.]")
			out = append(out, openai.UserMessage(slices.Concat([]openai.ChatCompletionContentPartUnionParam{head}, media)))
		}
		media = nil
	}
	for _, m := range in {
		if m.Role != gateway.RoleTool {
			flush()
			if msg, ok := message(m); ok {
				out = append(out, msg)
			}
			continue
		}
		text, parts := toolMessage(m)
		out = append(out, openai.ToolMessage(text, m.ToolCallID))
		media = append(media, parts...)
	}
	flush()
	return out
}

// toolMessage splits a tool result into the tool message's text and the
// parts that follow the step's tool messages: each image or audio part
// the API takes, with the text part just before it (its frame) unless
// that is the result's first. The text lists them.
func toolMessage(m gateway.Message) (string, []openai.ChatCompletionContentPartUnionParam) {
	if m.Result == nil {
		return "(no result)", nil
	}
	parts := m.Result.ModelParts()
	var text []string
	var media []openai.ChatCompletionContentPartUnionParam
	n := 0
	for i := 0; i < len(parts); i++ {
		c := parts[i]
		if c.Type == gateway.ContentText && i > 0 && i+1 < len(parts) && gateway.IsMedia(parts[i+1]) {
			if part, ok := mediaPart(parts[i+1]); ok {
				n++
				media = append(media, openai.TextContentPart(fmt.Sprintf("[%s %d of the result of the tool call %s (%s)]\n%s", parts[i+1].Type, n, m.ToolCallID, m.ToolName, c.Text)), part)
				text = append(text, note(parts[i+1], n))
				i++
				continue
			}
		}
		if part, ok := mediaPart(c); ok {
			n++
			media = append(media, openai.TextContentPart(fmt.Sprintf("[%s %d of the result of the tool call %s (%s)]", c.Type, n, m.ToolCallID, m.ToolName)), part)
			text = append(text, note(c, n))
			continue
		}
		if c.Type == gateway.ContentText {
			text = append(text, c.Text)
		} else {
			text = append(text, gateway.PlainText([]gateway.Content{c}))
		}
	}
	return strings.Join(text, "\n"), media
}

// note is what a tool message says of its n-th image or audio part.
func note(c gateway.Content, n int) string {
	return fmt.Sprintf("[%s %d of this result (%s, %d bytes base64) follows in the user message after the tool results]", c.Type, n, c.MIMEType, len(c.Data))
}
