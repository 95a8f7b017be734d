package acp

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/gateway"
)

// This file is a session/update carrying large texts (a finished call's
// whole result), written to the editor in pieces.
//
// The SDK encodes an update through several whole copies of it (its
// SessionUpdate.MarshalJSON marshals the variant, decodes that into a map
// and marshals the map; the message is marshalled around the params
// again), so a 15 MiB result cost the editor's update alone about ten
// times its size. Instead, each large string of the update is replaced by
// a placeholder (splicer), the SDK encodes the rest as usual, and the
// frame is written with each placeholder replaced by its string, JSON
// encoded a piece at a time: the update costs one piece, not copies of
// the result.

// spliceMin is the length from which a string of an update is written in
// pieces; spliceChunk is how much of it is encoded at a time.
const (
	spliceMin   = 64 << 10
	spliceChunk = 32 << 10
)

// splicer holds the large strings of one update, each replaced in the
// update by a placeholder of its own.
type splicer struct {
	tag   string   // random: no text can guess a placeholder
	texts []string // by placeholder number
}

func newSplicer() *splicer {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &splicer{tag: hex.EncodeToString(b[:])}
}

// hold returns s, or a placeholder for it when it is large.
func (sp *splicer) hold(s string) (string, bool) {
	if len(s) < spliceMin {
		return s, false
	}
	sp.texts = append(sp.texts, s)
	return sp.placeholder(len(sp.texts) - 1), true
}

// placeholder is the placeholder of text i: plain ASCII, so that JSON
// writes it as it is.
func (sp *splicer) placeholder(i int) string {
	return fmt.Sprintf("acpgate-splice-%s-%d", sp.tag, i)
}

// content returns content with its large texts and data held (content
// itself when none is large).
func (sp *splicer) content(content []gateway.Content) []gateway.Content {
	out := content
	for i, c := range content {
		text, t := sp.hold(c.Text)
		data, d := sp.hold(c.Data)
		var old *string
		if c.OldText != nil {
			if o, ok := sp.hold(*c.OldText); ok {
				old = &o
			}
		}
		if !t && !d && old == nil {
			continue
		}
		if &out[0] == &content[0] {
			out = slices.Clone(content)
		}
		out[i].Text, out[i].Data = text, data
		if old != nil {
			out[i].OldText = old
		}
	}
	return out
}

// notification is a JSON-RPC notification as the SDK writes it.
type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

// updateSpliced sends u, whose large strings sp holds, to the client as
// pe.update does, writing the held strings in pieces.
func (pe *peer) updateSpliced(s peerSession, u toolUpdate, sp *splicer) {
	if err := s.lifetime().Err(); err != nil { // as the SDK does for a notification
		pe.logger.Debug("session/update not sent", "session", s.sessionID(), "err", err)
		return
	}
	frame, err := json.Marshal(notification{JSONRPC: "2.0", Method: acpsdk.ClientMethodSessionUpdate,
		Params: sessionNotification{SessionID: s.sessionID(), Update: u}})
	if err != nil {
		pe.logger.Debug("session/update not sent", "session", s.sessionID(), "err", err)
		return
	}
	frame = append(frame, '\n')
	if err := pe.out.writeStream(func(w io.Writer) error { return sp.write(w, frame) }); err != nil {
		pe.logger.Debug("session/update not sent", "session", s.sessionID(), "err", err)
	}
}

// json returns v, an SDK type, encoded as json.Marshal encodes it, with
// its held strings in place: v is encoded without them, then they are
// written into a buffer of the whole's size.
func (sp *splicer) json(v any) (json.RawMessage, error) {
	skeleton, err := json.Marshal(v)
	if err != nil || len(sp.texts) == 0 {
		return skeleton, err
	}
	size := len(skeleton)
	for _, s := range sp.texts {
		size += len(s) + len(s)/8 // room for a few escapes
	}
	var b bytes.Buffer
	b.Grow(size)
	if err := sp.write(&b, skeleton); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// write writes frame to w with each placeholder (a JSON string of its
// own) replaced by its text, JSON-encoded as the SDK encodes it (see
// stringEncoder).
// A placeholder the frame lacks (the field was not sent) is skipped.
func (sp *splicer) write(w io.Writer, frame []byte) error {
	type at struct{ pos, text int }
	var places []at
	for i := range sp.texts {
		if pos := bytes.Index(frame, []byte(`"`+sp.placeholder(i)+`"`)); pos >= 0 {
			places = append(places, at{pos, i})
		}
	}
	slices.SortFunc(places, func(a, b at) int { return a.pos - b.pos })
	enc := stringEncoder{w: w}
	last := 0
	for _, p := range places {
		if _, err := w.Write(frame[last:p.pos]); err != nil {
			return err
		}
		if err := enc.encode(sp.texts[p.text]); err != nil {
			return err
		}
		last = p.pos + len(sp.placeholder(p.text)) + 2
	}
	_, err := w.Write(frame[last:])
	return err
}

// stringEncoder writes long strings as JSON a piece at a time, as the SDK
// writes them: with encoding/json's escaping (HTML characters, U+2028 and
// U+2029 escaped) and each byte of invalid UTF-8 written as U+FFFD (the
// SDK decodes its first encoding, which escapes each as \ufffd, and
// encodes the result again). It reuses its buffer.
type stringEncoder struct {
	w   io.Writer
	buf bytes.Buffer
	enc *json.Encoder
}

// valid returns s with each byte of invalid UTF-8 replaced by U+FFFD.
func valid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	b := make([]byte, 0, len(s)+len(s)/2)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(b)
}

// encode writes s as a JSON string, quotes included.
func (e *stringEncoder) encode(s string) error {
	if e.enc == nil {
		e.enc = json.NewEncoder(&e.buf)
	}
	if _, err := e.w.Write([]byte{'"'}); err != nil {
		return err
	}
	for len(s) > 0 {
		n := chunkEnd(s, spliceChunk)
		e.buf.Reset()
		if err := e.enc.Encode(valid(s[:n])); err != nil {
			return fmt.Errorf("encoding a string: %w", err)
		}
		// The piece without its quotes and the Encoder's newline.
		if _, err := e.w.Write(e.buf.Bytes()[1 : e.buf.Len()-2]); err != nil {
			return err
		}
		s = s[n:]
	}
	_, err := e.w.Write([]byte{'"'})
	return err
}

// chunkEnd is where to cut the first piece of at most n bytes off s so
// that JSON encodes the pieces as it encodes s: never inside a valid
// UTF-8 sequence (which is at most utf8.UTFMax bytes long, so a cut that
// finds no rune start in the utf8.UTFMax-1 bytes before it cuts only
// between invalid bytes, each encoded alone).
func chunkEnd(s string, n int) int {
	if len(s) <= n {
		return len(s)
	}
	for end := n; end > n-utf8.UTFMax; end-- {
		if utf8.RuneStart(s[end]) {
			return end
		}
	}
	return n
}
