package acp

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"hash"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/session"
)

// This file keeps the model's words once in the session log. What the
// model says is recorded as it streams, as agent_message_chunk and
// agent_thought_chunk updates (what session/load replays); the answer's
// history message, recorded at the end of the turn, would hold the same
// text again. So the turn log keeps, for each model call (an answer),
// which chunk records hold its text and thinking and a hash of what they
// hold; a history message whose text and thinking are exactly those is
// recorded without them, naming the records instead (storedMessage), and
// the history is rebuilt from them on load.

// maxChunkFrame bounds the text of one chunk sent as the model streams:
// a longer piece of the stream is sent in several.
const maxChunkFrame = 64 << 10

// maxChunkRecord bounds the text of one recorded chunk (and so of one
// frame session/load replays): longer text is recorded in several.
const maxChunkRecord = 256 << 10

// The kinds of recorded chunk, as indices.
const (
	chunkText = iota
	chunkThought
	chunkKinds
)

// chunkKind is the index of an event kind's chunks.
func chunkKind(kind gateway.EventKind) int {
	if kind == gateway.EventThinking {
		return chunkThought
	}
	return chunkText
}

// answerChunks tracks the update records of a turn by answer.
type answerChunks struct {
	recorded int          // update records written by the turn
	current  answerSpan   // the answer under way
	answers  []answerSpan // the answers done, in order
}

// answerSpan is which update records of the turn hold one answer's text
// and thinking (from, to), and the hash of what its chunks of each kind
// hold.
type answerSpan struct {
	from, to int
	sum      [chunkKinds]hash.Hash
}

// update notes an update record.
func (c *answerChunks) update() {
	c.recorded++
	c.current.to = c.recorded
}

// chunk notes that the update record just noted is a chunk of kind
// holding text.
func (c *answerChunks) chunk(kind int, text string) {
	if c.current.sum[kind] == nil {
		c.current.sum[kind] = sha256.New()
	}
	c.current.sum[kind].Write([]byte(text))
}

// answered closes the answer under way (its chunks are all recorded).
func (c *answerChunks) answered() {
	c.answers = append(c.answers, c.current)
	c.current = answerSpan{from: c.recorded, to: c.recorded}
}

// chunkRef names the update records that hold a text: the chunks of its
// kind among Count records, the first of them Back update records before
// the message record.
type chunkRef struct {
	Back  int `json:"back"`
	Count int `json:"count"`
}

// storedMessage is a history message as recorded: the message, and, when
// its text or thinking were left out, where they are.
type storedMessage struct {
	gateway.Message
	TextChunks    *chunkRef `json:"textChunks,omitempty"`
	ThoughtChunks *chunkRef `json:"thoughtChunks,omitempty"`
}

// stored is how the turn records m, the assistant message of its answer
// number i: without the text and thinking its chunk records hold.
// redact is what recording did to the chunks' text.
func (c *answerChunks) stored(m gateway.Message, i int, redact func(string) string) any {
	if i < 0 || i >= len(c.answers) {
		return m
	}
	a := c.answers[i]
	sm := storedMessage{Message: m}
	ref := func(kind int, text string) *chunkRef {
		if text == "" || a.sum[kind] == nil {
			return nil
		}
		sum := sha256.Sum256([]byte(redact(text)))
		if !bytes.Equal(sum[:], a.sum[kind].Sum(nil)) {
			return nil
		}
		return &chunkRef{Back: c.recorded - a.from, Count: a.to - a.from}
	}
	if len(m.Content) == 1 && m.Content[0].Type == gateway.ContentText {
		if sm.TextChunks = ref(chunkText, m.Content[0].Text); sm.TextChunks != nil {
			sm.Content = nil
		}
	}
	if sm.ThoughtChunks = ref(chunkThought, m.Thinking); sm.ThoughtChunks != nil {
		sm.Thinking = ""
	}
	if sm.TextChunks == nil && sm.ThoughtChunks == nil {
		return m
	}
	return sm
}

// storedChunks are the update records read so far from a session log,
// for the messages that name them.
type storedChunks []json.RawMessage

// add notes r if it is an update record.
func (sc *storedChunks) add(r session.Record) {
	if r.Kind == recUpdate {
		*sc = append(*sc, r.Data)
	}
}

// text is the text of kind the records ref names hold ("" if ref is nil
// or names records that are not there).
func (sc storedChunks) text(kind int, ref *chunkRef) string {
	if ref == nil || ref.Back > len(sc) || ref.Count > ref.Back || ref.Count < 0 {
		return ""
	}
	var b strings.Builder
	for _, data := range sc[len(sc)-ref.Back : len(sc)-ref.Back+ref.Count] {
		var u acpsdk.SessionUpdate
		if json.Unmarshal(data, &u) != nil {
			continue
		}
		if c := u.AgentMessageChunk; kind == chunkText && c != nil && c.Content.Text != nil {
			b.WriteString(c.Content.Text.Text)
		} else if c := u.AgentThoughtChunk; kind == chunkThought && c != nil && c.Content.Text != nil {
			b.WriteString(c.Content.Text.Text)
		}
	}
	return b.String()
}

// message rebuilds a recorded history message.
func (sc storedChunks) message(data json.RawMessage) (gateway.Message, bool) {
	var sm storedMessage
	if json.Unmarshal(data, &sm) != nil {
		return gateway.Message{}, false
	}
	m := sm.Message
	if sm.TextChunks != nil {
		if t := sc.text(chunkText, sm.TextChunks); t != "" {
			m.Content = []gateway.Content{{Type: gateway.ContentText, Text: t}}
		}
	}
	if sm.ThoughtChunks != nil {
		m.Thinking = sc.text(chunkThought, sm.ThoughtChunks)
	}
	return m, true
}
