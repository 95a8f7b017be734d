package gateway

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// This file decides which images and audio reach the model: the types its
// provider takes, a byte bound per part, a count bound per request, data
// that is valid base64 of what its MIME type says, and an endpoint that
// refused media once is sent none again. What is not sent becomes a text
// note in its place, so a request never fails for a part the model could
// not take.

// MediaSupport is what a provider's model takes besides text, with the
// provider's documented bounds.
type MediaSupport struct {
	// ImageTypes and AudioTypes are the MIME types of the images and the
	// audio the model takes (none: it takes none).
	ImageTypes, AudioTypes []string
	// MaxPartBytes bounds one image or audio part, in bytes of its
	// decoded data (0: no bound of the provider's).
	MaxPartBytes int
	// MaxParts bounds the image and audio parts of one request (0: no
	// bound of the provider's).
	MaxParts int
}

// MediaTaker is implemented by a Provider that says which images and
// audio its model takes. A Provider that does not implement it is sent
// every image and audio part that is valid base64, whatever its type: it
// decides itself.
type MediaTaker interface {
	// Media says what the model takes. It does not change over the
	// provider's life.
	Media() MediaSupport
}

// MediaLimits are a session's own bounds on media; a zero field takes the
// provider's (MediaSupport), and a bound is never raised past the
// provider's.
type MediaLimits struct {
	// MaxPartBytes bounds one image or audio part (decoded bytes).
	MaxPartBytes int
	// MaxParts bounds the image and audio parts of one request: the newest
	// are kept.
	MaxParts int
}

// MediaGate decides what media of a session's requests reach its model:
// its limits, and whether the endpoint refused a request with media (after
// which none is sent). Safe for concurrent use; the zero value has no
// limits of its own. It must not be copied after first use.
type MediaGate struct {
	mu      sync.Mutex
	limits  MediaLimits
	refused atomic.Bool
}

// SetLimits sets the gate's limits (a session's configuration, again
// after a reload).
func (g *MediaGate) SetLimits(l MediaLimits) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.limits = l
}

// Limits returns the gate's limits (the zero value for a nil gate).
func (g *MediaGate) Limits() MediaLimits {
	if g == nil {
		return MediaLimits{}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.limits
}

// Refuse records that the endpoint refused a request carrying media: no
// image or audio is sent from now on. It reports whether this is the
// first refusal.
func (g *MediaGate) Refuse() bool { return !g.refused.Swap(true) }

// Refused reports whether Refuse was called.
func (g *MediaGate) Refused() bool { return g != nil && g.refused.Load() }

// TakesAudio reports whether provider p says its model takes audio (a
// MediaTaker with audio types).
func TakesAudio(p Provider) bool {
	t, ok := p.(MediaTaker)
	return ok && len(t.Media().AudioTypes) > 0
}

// RefusesAudio reports whether provider p says its model takes no audio
// (a MediaTaker without audio types; a provider that does not say is
// given audio, and decides).
func RefusesAudio(p Provider) bool {
	t, ok := p.(MediaTaker)
	return ok && len(t.Media().AudioTypes) == 0
}

// IsMedia reports whether c is an image or audio part.
func IsMedia(c Content) bool { return c.Type == ContentImage || c.Type == ContentAudio }

// Prepare returns msgs as the model of provider p may be sent them, and
// how many media parts it keeps: each image and audio part (of the user's
// input and of tool results, ModelParts) that p's model does not take,
// that is over a bound, whose data is not valid base64 or not of its MIME
// type, or that is past the request's count (the newest are kept) is
// replaced by a text note saying so. A part whose data is of another type
// p takes gets that MIME type. Messages are copied where they change: msgs
// is not modified.
func (g *MediaGate) Prepare(p Provider, msgs []Message) ([]Message, int) {
	sup, unknown := MediaSupport{}, true
	if t, ok := p.(MediaTaker); ok {
		sup, unknown = t.Media(), false
	}
	lim := g.Limits()
	pol := mediaPolicy{sup: sup, anyType: unknown, maxBytes: bound(lim.MaxPartBytes, sup.MaxPartBytes), maxParts: bound(lim.MaxParts, sup.MaxParts), refused: g.Refused()}
	out := msgs
	copied := false
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		var parts []Content
		switch {
		case m.Role == RoleTool && m.Result != nil:
			parts = m.Result.ModelParts()
		case m.Role == RoleUser:
			parts = m.Content
		}
		if !slices.ContainsFunc(parts, IsMedia) {
			continue
		}
		admitted, changed := pol.admitAll(parts)
		if !changed {
			continue
		}
		if !copied {
			out, copied = slices.Clone(msgs), true
		}
		if m.Role == RoleTool {
			r := *m.Result
			r.ModelContent = admitted
			m.Result = &r
		} else {
			m.Content = admitted
		}
		m.Native = nil
		out[i] = m
	}
	return out, pol.kept
}

// bound is the smaller positive bound of own and provider's (0: none).
func bound(own, provider int) int {
	switch {
	case own <= 0:
		return provider
	case provider <= 0:
		return own
	}
	return min(own, provider)
}

// mediaPolicy admits the media parts of one request, newest first.
type mediaPolicy struct {
	sup      MediaSupport
	anyType  bool // the provider does not say: every type goes
	maxBytes int
	maxParts int
	refused  bool
	kept     int
}

// admitAll admits the media of parts, the last first (so the newest are
// kept when the count runs out), and reports whether any part changed.
func (p *mediaPolicy) admitAll(parts []Content) ([]Content, bool) {
	var out []Content
	for j := len(parts) - 1; j >= 0; j-- {
		c := parts[j]
		if !IsMedia(c) {
			continue
		}
		a := p.admit(c)
		if a == c {
			continue
		}
		if out == nil {
			out = slices.Clone(parts)
		}
		out[j] = a
	}
	if out == nil {
		return parts, false
	}
	return out, true
}

// admit returns c as it may be sent: itself, itself with the MIME type of
// its data, or a note saying why it is not sent.
func (p *mediaPolicy) admit(c Content) Content {
	what := string(c.Type)
	types := p.sup.ImageTypes
	if c.Type == ContentAudio {
		types = p.sup.AudioTypes
	}
	note := func(why string) Content {
		return Content{Type: ContentText, Text: fmt.Sprintf("[%s not sent to the model: %s]", what, why)}
	}
	size, ok := base64Size(c.Data)
	switch {
	case p.refused:
		return note("the model endpoint refused a request with images or audio earlier in this session, so none is sent")
	case len(types) == 0 && !p.anyType:
		return note(fmt.Sprintf("the model does not take %s", what))
	case !ok:
		return note(fmt.Sprintf("its data (%d bytes) is not valid base64", len(c.Data)))
	case p.maxBytes > 0 && size > p.maxBytes:
		return note(fmt.Sprintf("%s of %d bytes, over the limit of %d bytes per part", c.MIMEType, size, p.maxBytes))
	}
	sniffed := sniff(c.Data)
	if p.anyType {
		types = []string{c.MIMEType}
	}
	switch {
	case !slices.Contains(types, c.MIMEType) && !slices.Contains(types, sniffed):
		return note(fmt.Sprintf("the model does not take %s (it takes %s)", label(c.MIMEType), strings.Join(types, ", ")))
	case sniffed == "" && c.Type == ContentImage:
		return note(fmt.Sprintf("its data is not an image of the type it claims, %s", label(c.MIMEType)))
	case p.maxParts > 0 && p.kept >= p.maxParts:
		return note(fmt.Sprintf("a request carries at most %d images and audio clips, and newer ones were sent", p.maxParts))
	}
	if sniffed != "" && slices.Contains(types, sniffed) {
		c.MIMEType = sniffed // what its data is
	}
	p.kept++
	return c
}

// label is a MIME type as a note names it: a safe single line of at most
// 64 bytes.
func label(mime string) string {
	if mime == "" {
		return "(no type)"
	}
	return fmt.Sprintf("%q", DisplayText(mime, 64))
}

// base64Size returns the decoded size of data and whether it is valid
// standard base64 (padded, no whitespace): what the providers take.
func base64Size(data string) (int, bool) {
	if len(data) == 0 || len(data)%4 != 0 {
		return 0, false
	}
	body := data[:len(data)-2]
	for i := 0; i < len(body); i++ {
		if !base64Alphabet[body[i]] {
			return 0, false
		}
	}
	pad := 0
	switch tail := data[len(data)-2:]; {
	case tail == "==":
		pad = 2
	case tail[1] == '=' && base64Alphabet[tail[0]]:
		pad = 1
	case !base64Alphabet[tail[0]] || !base64Alphabet[tail[1]]:
		return 0, false
	}
	if _, err := base64.StdEncoding.Strict().DecodeString(data[len(data)-4:]); err != nil {
		return 0, false // padding bits that are not zero, or a lone '='
	}
	return len(data)/4*3 - pad, true
}

// base64Alphabet marks the bytes of standard base64's alphabet.
var base64Alphabet = func() (t [256]bool) {
	for _, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/" {
		t[c] = true
	}
	return t
}()

// sniff names the type of the image or audio whose base64 data starts
// data, by its signature ("": none known).
func sniff(data string) string {
	head, err := base64.StdEncoding.DecodeString(data[:min(len(data), 16)])
	if err != nil && len(head) == 0 {
		return ""
	}
	s := string(head)
	switch {
	case strings.HasPrefix(s, "\x89PNG\r\n\x1a\n"):
		return "image/png"
	case strings.HasPrefix(s, "\xff\xd8\xff"):
		return "image/jpeg"
	case strings.HasPrefix(s, "GIF87a"), strings.HasPrefix(s, "GIF89a"):
		return "image/gif"
	case len(s) >= 12 && s[:4] == "RIFF" && s[8:12] == "WEBP":
		return "image/webp"
	case len(s) >= 12 && s[:4] == "RIFF" && s[8:12] == "WAVE":
		return "audio/wav"
	case strings.HasPrefix(s, "ID3"), len(s) >= 2 && s[0] == 0xff && s[1]&0xe0 == 0xe0 && s[1] != 0xff:
		return "audio/mpeg"
	}
	return ""
}

// MediaCount counts the image and audio parts of msgs and their bytes of
// base64 data, as the history holds them (before any provider's bounds).
func MediaCount(msgs []Message) (images, audio, bytes int) {
	for i := range msgs {
		m := &msgs[i]
		parts := m.Content
		if m.Role == RoleTool && m.Result != nil {
			parts = m.Result.ModelParts()
		}
		for _, c := range parts {
			switch c.Type {
			case ContentImage:
				images++
				bytes += len(c.Data)
			case ContentAudio:
				audio++
				bytes += len(c.Data)
			}
		}
	}
	return images, audio, bytes
}
