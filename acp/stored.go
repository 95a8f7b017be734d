package acp

import (
	"fmt"
	"slices"

	"github.com/acpgate/acpgate/gateway"
)

// This file is the bounded copy of a tool result kept in the session log.

// DefaultMaxStoredResultBytes bounds the copy of one tool result kept in
// the session log (limits.maxStoredResultBytes overrides it). The client
// sees the whole result live; a replay shows the stored copy.
const DefaultMaxStoredResultBytes = 1 << 20

// storedCut says how much of a result the stored copy kept.
type storedCut struct {
	kept, full int // bytes, as counted by resultBytes
}

// maxStoredResultBytes is the session's bound on the stored copy of one
// tool result.
func (s *liveSession) maxStoredResultBytes() int {
	if l := s.snapshot().cfg.limits.MaxStoredResultBytes; l != nil {
		return *l
	}
	return DefaultMaxStoredResultBytes
}

// blockBytes is the size of a content block: its text, data and
// descriptive fields.
func blockBytes(c gateway.Content) int {
	n := len(c.Text) + len(c.Data) + len(c.MIMEType) + len(c.URI) + len(c.Name) + len(c.Title) + len(c.Description) + len(c.Path)
	if c.OldText != nil {
		n += len(*c.OldText)
	}
	return n
}

// storable is r as the session log keeps it: a terminal, which is gone by
// the time the log is replayed, becomes the text of its output.
func storable(r gateway.Result) gateway.Result {
	if !slices.ContainsFunc(r.Content, func(c gateway.Content) bool { return c.Type == gateway.ContentTerminal }) {
		return r
	}
	r.Content = slices.Clone(r.Content) // r's is the client's too
	for i, c := range r.Content {
		if c.Type == gateway.ContentTerminal {
			r.Content[i] = gateway.Content{Type: gateway.ContentText, Text: c.Text}
		}
	}
	return r
}

// resultBytes is the size of a result: its blocks and structured output.
func resultBytes(r gateway.Result) int {
	n := len(r.Structured)
	for _, c := range r.Content {
		n += blockBytes(c)
	}
	return n
}

// storedCopy returns r as the session log keeps it (see storable),
// bounded to limit bytes, and how much was kept; the cut is nil when r
// fits whole. Blocks are kept in order while they fit; the first that
// does not is cut if it is text (on a rune boundary) and dropped
// otherwise (data cannot be cut, nor can a diff), and nothing after it is
// kept but the structured output, if it still fits. A text block noting
// the sizes ends the cut copy.
func storedCopy(r gateway.Result, limit int) (gateway.Result, *storedCut) {
	r = storable(r)
	full := resultBytes(r)
	if full <= limit {
		return r, nil
	}
	budget := limit
	out := gateway.Result{IsError: r.IsError, Content: make([]gateway.Content, 0, len(r.Content)+1)}
	for _, c := range r.Content {
		n := blockBytes(c)
		if n <= budget {
			out.Content = append(out.Content, c)
			budget -= n
			continue
		}
		if rest := budget - (n - len(c.Text)); c.Data == "" && c.Type != gateway.ContentDiff && rest > 0 {
			c.Text = gateway.RunePrefix(c.Text, rest)
			out.Content = append(out.Content, c)
			budget -= blockBytes(c)
		}
		break
	}
	if len(r.Structured) <= budget {
		out.Structured = r.Structured
		budget -= len(r.Structured)
	}
	cut := &storedCut{kept: limit - budget, full: full}
	out.Content = append(out.Content, gateway.Content{Type: gateway.ContentText,
		Text: fmt.Sprintf("\n[stored copy truncated: %d of %d bytes kept]", cut.kept, cut.full)})
	return out, cut
}

// rawOutput is a finished call's rawOutput: isError, the structured
// output, and for a stored copy that was cut, how much it kept.
func rawOutput(r gateway.Result, cut *storedCut) map[string]any {
	out := map[string]any{"isError": r.IsError}
	if r.Structured != nil {
		out["structuredContent"] = r.Structured
	}
	if cut != nil {
		out["truncated"] = map[string]any{"keptBytes": cut.kept, "fullBytes": cut.full}
	}
	return out
}
