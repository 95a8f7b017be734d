package fakellm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/acpgate/acpgate/internal/testsupport/fake/scripted"
)

// Flood is a streamed answer generated as it is sent, never held whole:
// TextBytes of delta.content, then, when ToolCall is set, one call to
// that tool whose arguments are {"data":"aaa…"}, ArgumentBytes long. Each
// chunk carries PieceBytes of it (default 64 KiB). The stream ends as any
// other, unless the client stops reading first. OneEvent sends the text
// as one event instead: one chunk whose content spans data lines of
// PieceBytes each, which a client gathers whole before it can decode any
// of it.
type Flood struct {
	TextBytes     int
	ToolCall      string
	ArgumentBytes int
	PieceBytes    int
	OneEvent      bool
}

// Flooded returns the bytes of Flood content (text and arguments) the
// server has written so far.
func (s *Server) Flooded() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.flooded
}

// flood streams c's Flood.
func (s *Server) flood(w http.ResponseWriter, c completion) {
	f := *c.turn.Flood
	if f.PieceBytes <= 0 {
		f.PieceBytes = 64 << 10
	}
	rc := scripted.StartEvents(w)
	var buf bytes.Buffer
	send := func(d delta, finish *string, n int) bool {
		ch := chunk{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.model,
			Choices: []chunkChoice{{Index: 0, Delta: d, FinishReason: finish}}}
		buf.Reset()
		buf.WriteString("data: ")
		if err := json.NewEncoder(&buf).Encode(ch); err != nil {
			return false
		}
		buf.WriteString("\n")
		if _, err := w.Write(buf.Bytes()); err != nil || rc.Flush() != nil {
			return false
		}
		s.mu.Lock()
		s.flooded += int64(n)
		s.mu.Unlock()
		return true
	}
	piece := strings.Repeat("a", f.PieceBytes)
	if f.OneEvent {
		s.oneEvent(w, rc, c, piece, f.TextBytes)
		return
	}
	pieces := func(total int, each func(p string) bool) bool {
		for total > 0 {
			p := piece[:min(total, len(piece))]
			if !each(p) {
				return false
			}
			total -= len(p)
		}
		return true
	}
	if !send(delta{Role: "assistant"}, nil, 0) ||
		!pieces(f.TextBytes, func(p string) bool { return send(delta{Content: &p}, nil, len(p)) }) {
		return
	}
	finish := "stop"
	if f.ToolCall != "" {
		finish = "tool_calls"
		open, end := `{"data":"`, `"}`
		head := toolCallDelta{Index: 0, ID: "call_flood", Type: "function", Function: functionDelta{Name: f.ToolCall, Arguments: &open}}
		if !send(delta{ToolCalls: []toolCallDelta{head}}, nil, len(open)) ||
			!pieces(max(f.ArgumentBytes-len(open)-len(end), 0), func(p string) bool {
				return send(delta{ToolCalls: []toolCallDelta{{Index: 0, Function: functionDelta{Arguments: &p}}}}, nil, len(p))
			}) ||
			!send(delta{ToolCalls: []toolCallDelta{{Index: 0, Function: functionDelta{Arguments: &end}}}}, nil, len(end)) {
			return
		}
	}
	if send(delta{}, &finish, 0) {
		_, _ = w.Write([]byte("data: [DONE]\n\n"))
	}
}

// oneEvent streams total bytes of text in one event of lines of piece.
func (s *Server) oneEvent(w http.ResponseWriter, rc *http.ResponseController, c completion, piece string, total int) {
	head := fmt.Sprintf(`data: {"id":%q,"object":"chat.completion.chunk","created":%d,"model":%q,"choices":[{"index":0,"delta":{"content":"`, c.id, c.created, c.model)
	if _, err := w.Write([]byte(head + "\n")); err != nil {
		return
	}
	for total > 0 {
		p := piece[:min(total, len(piece))]
		if _, err := w.Write([]byte("data: " + p + "\n")); err != nil || rc.Flush() != nil {
			return
		}
		s.mu.Lock()
		s.flooded += int64(len(p))
		s.mu.Unlock()
		total -= len(p)
	}
	_, _ = w.Write([]byte(`data: "}, "finish_reason": "stop"}]}` + "\n\n" + "data: [DONE]\n\n"))
}
