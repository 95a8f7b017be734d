package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// codeResponseTooLarge is the JSON-RPC error code of the error response
// acpgate makes up, in place of a server's over-long one, for the request
// it answered. It is in the range JSON-RPC leaves to implementations; a
// server sending it itself is not mistaken for this (see TooLargeIDs).
const codeResponseTooLarge = -32099

// idScanner follows one JSON text byte by byte, in constant memory, and
// picks out the raw value of the top-level "id" member and whether there is
// a top-level "method" member: enough to tell which request an over-long
// response answered without holding the response. Keys are compared as
// written: a key spelled with escapes is not recognised. Strings are
// skipped with a fast search for the next quote or backslash. The zero
// value is ready; not safe for concurrent use.
type idScanner struct {
	depth     int
	top       byte // the text's first significant byte
	str       bool // inside a string
	esc       bool // after a backslash in a string
	key       bool // the string is a top-level key
	keyBuf    [8]byte
	keyN      int  // bytes of the key seen (more than len(keyBuf): not interesting)
	wantKey   bool // at depth 1 a key comes next
	valueNext bool // at depth 1 a member value comes next
	member    member
	id        []byte
	idState   idState
	method    bool
}

type member uint8

const (
	memberOther member = iota
	memberID
	memberMethod
)

type idState uint8

const (
	idNone idState = iota
	idString
	idScalar
	idDone
	idInvalid
)

// maxIDLen bounds the raw id kept: longer ids are not recognised.
const maxIDLen = 128

// reset makes s ready for a new text, keeping its id buffer.
func (s *idScanner) reset() { *s = idScanner{id: s.id[:0]} }

// write follows p, the next bytes of the text.
func (s *idScanner) write(p []byte) {
	for i := 0; i < len(p); i++ {
		if s.str {
			if !s.esc && !s.key && s.idState != idString {
				// Fast path: nothing in this string matters.
				q := bytes.IndexByte(p[i:], '"')
				seg := p[i:]
				if q >= 0 {
					seg = p[i : i+q]
				}
				if b := bytes.IndexByte(seg, '\\'); b >= 0 {
					i += b
					s.esc = true
					continue
				}
				if q < 0 {
					return
				}
				i += q
				s.str = false
				continue
			}
			s.stringByte(p[i])
			continue
		}
		s.structByte(p[i])
	}
}

// stringByte follows c inside a key or the id string.
func (s *idScanner) stringByte(c byte) {
	if s.idState == idString {
		s.captureID(c)
	}
	if s.esc {
		s.esc = false
		s.keyN = len(s.keyBuf) + 1 // escaped keys are not recognised
		return
	}
	switch c {
	case '\\':
		s.esc = true
	case '"':
		s.str = false
		if s.key {
			s.key = false
			s.member = memberOther
			switch string(s.keyBuf[:min(s.keyN, len(s.keyBuf))]) {
			case "id":
				if s.keyN == 2 {
					s.member = memberID
				}
			case "method":
				if s.keyN == 6 {
					s.member = memberMethod
					s.method = true
				}
			}
		} else if s.idState == idString {
			s.idState = idDone
		}
	default:
		if s.key {
			if s.keyN < len(s.keyBuf) {
				s.keyBuf[s.keyN] = c
			}
			s.keyN++
		}
	}
}

// structByte follows c outside strings.
func (s *idScanner) structByte(c byte) {
	if s.idState == idScalar {
		if c != ',' && c != '}' && c != ']' && !isJSONSpace(c) {
			s.captureID(c)
			return
		}
		s.idState = idDone
	}
	if isJSONSpace(c) {
		return
	}
	if s.depth == 0 && s.top == 0 {
		s.top = c
	}
	startsValue := s.depth == 1 && s.valueNext
	if startsValue {
		s.valueNext = false
	}
	switch c {
	case '"':
		s.str = true
		switch {
		case s.depth == 1 && s.wantKey:
			s.key, s.keyN, s.wantKey = true, 0, false
		case startsValue && s.member == memberID && s.idState == idNone:
			s.idState = idString
			s.captureID(c)
		}
	case '{', '[':
		if startsValue && s.member == memberID {
			s.idState = idInvalid
		}
		s.depth++
		if s.depth == 1 {
			s.wantKey = c == '{'
		}
	case '}', ']':
		s.depth--
	case ',':
		if s.depth == 1 && s.top == '{' {
			s.wantKey = true
		}
	case ':':
		if s.depth == 1 {
			s.valueNext = true
		}
	default:
		if startsValue && s.member == memberID && s.idState == idNone {
			s.idState = idScalar
			s.captureID(c)
		}
	}
}

func (s *idScanner) captureID(c byte) {
	if len(s.id) >= maxIDLen {
		s.idState = idInvalid
		return
	}
	s.id = append(s.id, c)
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// responseID returns the id of the text followed so far if it is a
// response: an object with a string or number "id" and no "method".
func (s *idScanner) responseID() (mcp.RequestId, bool) {
	var id mcp.RequestId
	if s.top != '{' || s.method || !(s.idState == idDone || s.idState == idScalar) {
		return id, false
	}
	if err := json.Unmarshal(s.id, &id); err != nil || id.IsNil() {
		return id, false
	}
	return id, true
}

// TooLargeIDs are the ids of requests answered with a made-up "response too
// large" error (by JSONLines), until the stdio transport has seen that
// answer (StdioTransport): one value is shared by the two of one server.
// The zero value is ready. Safe for concurrent use.
type TooLargeIDs struct {
	mu  sync.Mutex
	ids map[string]struct{}
}

// add records id and returns the made-up error response line for it.
func (t *TooLargeIDs) add(id mcp.RequestId, size, max int) []byte {
	t.mu.Lock()
	if t.ids == nil || len(t.ids) > 1024 { // answers nobody collected
		t.ids = map[string]struct{}{}
	}
	t.ids[id.String()] = struct{}{}
	t.mu.Unlock()
	line, _ := json.Marshal(transport.NewJSONRPCErrorResponse(id, codeResponseTooLarge,
		fmt.Sprintf("response of at least %d bytes is over the limit of %d bytes", size, max), nil))
	return append(line, '\n')
}

// Take reports whether resp is a made-up answer, forgetting its id.
func (t *TooLargeIDs) Take(resp *transport.JSONRPCResponse) bool {
	if resp == nil || resp.Error == nil || resp.Error.Code != codeResponseTooLarge {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	key := resp.ID.String()
	_, ok := t.ids[key]
	delete(t.ids, key)
	return ok
}
