package wire

import (
	"bytes"
	"encoding/json"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/mark3labs/mcp-go/mcp"
)

// A tools/call result is decoded here rather than by mcp-go, whose
// mcp.ParseCallToolResult copies the content three times over (a probe of
// it, then each block as a json.RawMessage, then the block's fields).
// Each block is decoded straight from the response's bytes (by
// mcp.UnmarshalContent, but for texts), and over stdio a large text is
// unescaped where it lies and not copied at all, so the response's buffer
// is all a large text result costs. Results this decoder does not take
// (a missing content array, a request for more input, anything it fails to
// decode) are left to mcp-go.

// contentBlock is one content block. A text block keeps its text as the
// quoted JSON string, decoded once the whole result has decoded (see
// textOf); any other block, or a text block this cannot take, is decoded
// by mcp-go's own mcp.UnmarshalContent from the bytes of the block.
type contentBlock struct {
	c    mcp.Content
	text RawRef // a text block's "text", still quoted; nil for others
}

// UnmarshalJSON implements json.Unmarshaler.
func (b *contentBlock) UnmarshalJSON(data []byte) error {
	var probe struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return err
	}
	if probe.Type == mcp.ContentTypeText {
		var tb struct {
			mcp.TextContent
			Text RawRef `json:"text"` // shadows TextContent.Text
		}
		if err := json.Unmarshal(data, &tb); err != nil {
			return err
		}
		if len(tb.Text) >= 2 && tb.Text[0] == '"' && utf8.Valid(tb.Text) {
			b.c, b.text = tb.TextContent, tb.Text
			return nil
		}
	}
	c, err := mcp.UnmarshalContent(data)
	b.c = c
	return err
}

// DecodeCallResult decodes raw, a tools/call result, as
// mcp.ParseCallToolResult does (the same fields, the same content types,
// the same text), with at most one copy of each value. With inPlace, raw is
// a buffer nobody reads or writes again (see JSONLines.Next): texts are
// unescaped in it and used where they lie, without a copy, when they make
// up most of it. ok is false for a result it leaves to mcp-go; raw is then
// untouched.
func DecodeCallResult(raw json.RawMessage, inPlace bool) (res *mcp.CallToolResult, ok bool) {
	var r struct {
		Meta              *mcp.Meta       `json:"_meta"`
		ResultType        mcp.ResultType  `json:"resultType"`
		Content           *[]contentBlock `json:"content"`
		StructuredContent RawRef          `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	}
	if json.Unmarshal(raw, &r) != nil || r.Content == nil || r.ResultType == mcp.ResultTypeInputRequired {
		return nil, false
	}
	res = &mcp.CallToolResult{IsError: r.IsError}
	res.Meta, res.ResultType = r.Meta, r.ResultType
	if len(r.StructuredContent) > 0 {
		// A copy: a slice would keep the whole response alive.
		res.RawStructuredContent = bytes.Clone(json.RawMessage(r.StructuredContent))
		if json.Unmarshal(r.StructuredContent, &res.StructuredContent) != nil {
			return nil, false
		}
	}
	// Texts are used in place only if they are most of raw, which they
	// then keep alive.
	texts := 0
	for _, b := range *r.Content {
		texts += len(b.text)
	}
	alias := inPlace && 2*texts >= len(raw)
	if len(*r.Content) > 0 {
		res.Content = make([]mcp.Content, len(*r.Content))
	}
	for i, b := range *r.Content {
		res.Content[i] = b.c
		if b.text != nil {
			tc := b.c.(mcp.TextContent)
			tc.Text = textOf(b.text, inPlace, alias)
			res.Content[i] = tc
		}
	}
	return res, true
}

// textOf decodes q, a valid JSON string in valid UTF-8 (quotes included),
// as encoding/json does, with one copy at most. With inPlace it unescapes q
// where it lies (the result is never longer than the escaped text), and
// with alias the string returned is those bytes themselves, which must
// never change again; without inPlace it does so in a copy of q.
func textOf(q []byte, inPlace, alias bool) string {
	if !inPlace {
		q, alias = bytes.Clone(q), true // a buffer of the text's own
	}
	t := unescapeInPlace(q[1 : len(q)-1])
	if !alias || len(t) == 0 {
		return string(t)
	}
	return unsafe.String(unsafe.SliceData(t), len(t))
}

// unescapeInPlace decodes the escapes of s, the inside of a valid JSON
// string in valid UTF-8, into s itself and returns the decoded prefix.
// Like encoding/json, a \u escape of a lone surrogate becomes U+FFFD.
func unescapeInPlace(s []byte) []byte {
	w := bytes.IndexByte(s, '\\')
	if w < 0 {
		return s
	}
	r := w
	for r < len(s) {
		if s[r] != '\\' {
			k := bytes.IndexByte(s[r:], '\\')
			if k < 0 {
				k = len(s) - r
			}
			w += copy(s[w:], s[r:r+k])
			r += k
			continue
		}
		e := s[r+1]
		r += 2
		switch e {
		case 'b':
			e = '\b'
		case 'f':
			e = '\f'
		case 'n':
			e = '\n'
		case 'r':
			e = '\r'
		case 't':
			e = '\t'
		case 'u':
			rr := hex4(s[r:])
			r += 4
			if utf16.IsSurrogate(rr) {
				hi := rr
				rr = unicode.ReplacementChar
				if r+6 <= len(s) && s[r] == '\\' && s[r+1] == 'u' {
					if dec := utf16.DecodeRune(hi, hex4(s[r+2:])); dec != unicode.ReplacementChar {
						rr = dec
						r += 6
					}
				}
			}
			w += utf8.EncodeRune(s[w:], rr)
			continue
		}
		s[w] = e // '"', '\\', '/' and the letters above
		w++
	}
	return s[:w]
}

// hex4 is the value of the four hex digits at the start of b (valid JSON:
// they are there).
func hex4(b []byte) rune {
	var v rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		v = v<<4 | rune(c)
	}
	return v
}
