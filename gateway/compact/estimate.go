package compact

import "github.com/acpgate/acpgate/gateway"

// The estimate counts bytes of what a request sends and turns them into
// tokens at about four bytes a token, calibrated by the last response: the
// provider's reported input tokens stand for what was sent before, and the
// bytes added since are counted at the ratio that response showed.
const (
	bytesPerToken = 4
	// mediaBytes is what an image or audio part (of the user's input or a
	// tool result) counts as: providers count those by their pixels or
	// length, not by their base64 text, about 1,500 tokens for an image
	// (Anthropic: width × height / 750, about 1,600 for the largest it
	// keeps unscaled; OpenAI: 765 for a 1024×1024 image at high detail).
	mediaBytes = MediaTokens * bytesPerToken
	// messageOverhead and callOverhead are what a message's and a tool
	// call's framing (role, ids, keys) cost; toolOverhead a tool
	// definition's.
	messageOverhead = 16
	callOverhead    = 32
	toolOverhead    = 32
)

// MediaTokens is what the estimate counts an image or audio part as, in
// tokens: the same for each, whatever its size.
const MediaTokens = 1500

// The bounds of the calibration ratio (tokens per four bytes): a response
// reporting far outside them is taken as a provider's quirk, not the truth.
const (
	minRatio = 0.25
	maxRatio = 4
)

// estimator turns requests into token counts. It is plain data, copied
// freely; the Compactor guards its own.
type estimator struct {
	// ratio is tokens per bytesPerToken bytes, from the last response (0:
	// none yet, taken as 1).
	ratio float64
	// last is the last request whose input tokens were reported.
	last sent
}

// sent is a request the provider reported the input tokens of: enough of
// it to tell whether a later request only adds to it.
type sent struct {
	n            int  // its messages (0: none)
	first, final mark // its first and last messages
	bytes        int
	tokens       int
}

// mark identifies a message cheaply.
type mark struct {
	role  gateway.Role
	bytes int
	id    string // a tool result's call id
}

func markOf(m *gateway.Message) mark {
	return mark{role: m.Role, bytes: messageBytes(m), id: m.ToolCallID}
}

// extendedBy reports whether req is the request s was plus new messages
// (its system prompt and tools may differ: their bytes are counted).
func (s *sent) extendedBy(req gateway.ModelRequest) bool {
	return s.n > 0 && len(req.Messages) >= s.n &&
		markOf(&req.Messages[0]) == s.first && markOf(&req.Messages[s.n-1]) == s.final
}

// tokens converts bytes to tokens at the calibrated ratio.
func (e *estimator) tokens(bytes int) int {
	r := e.ratio
	if r == 0 {
		r = 1
	}
	return int(r*float64(bytes)/bytesPerToken + 0.5)
}

// bytesFor is the bytes that make about tokens tokens.
func (e *estimator) bytesFor(tokens int) int {
	r := e.ratio
	if r == 0 {
		r = 1
	}
	return int(float64(tokens) * bytesPerToken / r)
}

// estimate returns the size of req in tokens: the reported size of the
// last request plus the bytes added since, or all of req's bytes counted.
func (e *estimator) estimate(req gateway.ModelRequest) int {
	b := requestBytes(req)
	if e.last.extendedBy(req) {
		return max(0, e.last.tokens+e.tokens(b-e.last.bytes))
	}
	return e.tokens(b)
}

// observe calibrates the estimator with the input tokens reported for req
// (none reported: nothing is learnt).
func (e *estimator) observe(req gateway.ModelRequest, u gateway.Usage) {
	b := requestBytes(req)
	in := u.Input() // the whole request, the cache's part included
	if in <= 0 || b == 0 || len(req.Messages) == 0 {
		return
	}
	e.ratio = min(max(float64(in)*bytesPerToken/float64(b), minRatio), maxRatio)
	e.last = sent{n: len(req.Messages), first: markOf(&req.Messages[0]), final: markOf(&req.Messages[len(req.Messages)-1]), bytes: b, tokens: in}
}

// requestBytes is what req sends, counted as the estimate counts it. A
// deferred tool is not counted: the provider keeps it out of the model's
// context until its search finds it.
func requestBytes(req gateway.ModelRequest) int {
	n := len(req.System)
	for _, t := range req.Tools {
		if t.Deferred {
			continue
		}
		n += toolOverhead + len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	for i := range req.Messages {
		n += messageBytes(&req.Messages[i])
	}
	return n
}

// messageBytes is what one message sends: its text, the text its other
// content stands for (media at a fixed size), its tool calls, or a tool
// result as the model is given it. Thinking is not sent back.
func messageBytes(m *gateway.Message) int {
	n := messageOverhead
	if m.Role == gateway.RoleTool {
		n += len(m.ToolCallID)
		if m.Result != nil {
			n += len(m.Result.ModelText())
			for _, c := range m.Result.ModelParts() {
				if gateway.IsMedia(c) {
					n += mediaBytes
				}
			}
		}
		return n
	}
	for _, c := range m.Content {
		switch c.Type {
		case gateway.ContentImage, gateway.ContentAudio:
			n += mediaBytes
		default:
			_, size := gateway.PlainTextPrefix([]gateway.Content{c}, 0)
			n += size
		}
	}
	for _, c := range m.ToolCalls {
		n += callOverhead + len(c.ID) + len(c.Name) + len(c.Arguments)
	}
	return n
}
