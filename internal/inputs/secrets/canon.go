package secrets

import (
	"bytes"
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is the canonical spelling of JSON string contents: each
// escape as encoding/json writes it (`\"`, `\\`, `\n`, `\u001f`, `\u2028`,
// `\u003c`, `\ufffd`; everything else, `/` and `\u0041` included, as the
// character itself), so that a secret is found however a JSON encoder
// spelled it, even with a different escape for each character, and a frame
// encoding/json wrote is already canonical. Text outside escapes is left as
// it is.

// maxEscape is the longest escape: a surrogate pair, `\uD83D\uDE00`.
const maxEscape = 12

// appendRune appends r in the canonical spelling.
func appendRune(dst []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	switch r {
	case '"', '\\':
		return append(dst, '\\', byte(r))
	case '\b':
		return append(dst, `\b`...)
	case '\f':
		return append(dst, `\f`...)
	case '\n':
		return append(dst, `\n`...)
	case '\r':
		return append(dst, `\r`...)
	case '\t':
		return append(dst, `\t`...)
	case '\u2028', '\u2029':
		return append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
	case '<', '>', '&', utf8.RuneError:
		return fmt.Appendf(dst, `\u%04x`, r)
	}
	if r < 0x20 {
		return append(dst, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xF])
	}
	return utf8.AppendRune(dst, r)
}

// appendQuoted appends s as the contents of a JSON string, in the
// canonical spelling (invalid UTF-8 as \ufffd, as encoding/json writes it).
func appendQuoted(dst []byte, s string) []byte {
	for _, r := range s {
		dst = appendRune(dst, r)
	}
	return dst
}

// hex4 returns the value of the four hex digits b, or -1.
func hex4(b []byte) rune {
	var v rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | rune(c-'A'+10)
		default:
			return -1
		}
	}
	return v
}

// escape decodes the escape at the start of b (b[0] is a backslash): it
// returns its length and the character it stands for, r < 0 for an escape
// that stands for no character (a lone surrogate, a malformed escape: it
// is kept as it is), or n == 0 when b ends before the escape could be
// told (more is to come unless final).
func escape(b []byte, final bool) (n int, r rune) {
	if len(b) < 2 {
		if final {
			return len(b), -1
		}
		return 0, 0
	}
	switch c := b[1]; c {
	case '"', '\\', '/':
		return 2, rune(c)
	case 'b':
		return 2, '\b'
	case 'f':
		return 2, '\f'
	case 'n':
		return 2, '\n'
	case 'r':
		return 2, '\r'
	case 't':
		return 2, '\t'
	case 'u':
	default:
		return 2, -1
	}
	if len(b) < 6 {
		if final {
			return len(b), -1
		}
		return 0, 0
	}
	r = hex4(b[2:])
	switch {
	case r < 0:
		return 2, -1
	case utf16.IsSurrogate(r) && r < 0xDC00: // a high surrogate: a low one must follow
		if len(b) < maxEscape && !final {
			return 0, 0
		}
		if len(b) >= maxEscape && b[6] == '\\' && b[7] == 'u' {
			if lo := hex4(b[8:]); lo >= 0xDC00 && lo <= 0xDFFF {
				return maxEscape, utf16.DecodeRune(r, lo)
			}
		}
		return 6, -1
	case utf16.IsSurrogate(r):
		return 6, -1
	}
	return 6, r
}

// canonical appends b, contents of a JSON string, to dst in the canonical
// spelling, and returns it and how many bytes of b it took: all of them
// when final; otherwise an escape cut short by the end of b is left.
func canonical(dst, b []byte, final bool) ([]byte, int) {
	for i := 0; i < len(b); {
		j := i
		for j < len(b) && b[j] != '\\' {
			j++
		}
		dst = append(dst, b[i:j]...)
		if j == len(b) {
			return dst, j
		}
		n, r := escape(b[j:], final)
		switch {
		case n == 0:
			return dst, j
		case r < 0:
			dst = append(dst, b[j:j+n]...)
		default:
			dst = appendRune(dst, r)
		}
		i = j + n
	}
	return dst, len(b)
}

// mayHide reports whether the JSON text b has an escape not in the
// canonical spelling, or one escaped again (`\\u`, `\\/`: an escape of
// JSON text held in a string), behind which a secret could hide from
// plain comparison.
func mayHide(b []byte) bool {
	// Only \u and \/ escapes can be spelled otherwise (or escape an
	// escape of JSON text in a string): two fast scans rule most frames
	// out.
	if !bytes.Contains(b, []byte(`\u`)) && !bytes.Contains(b, []byte(`\/`)) {
		return false
	}
	var scratch [6]byte
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 || i+j+1 >= len(b) {
			return false
		}
		i += j
		switch b[i+1] {
		case '/':
			return true
		case '\\':
			if i+2 < len(b) && (b[i+2] == 'u' || b[i+2] == '/') {
				return true
			}
		case 'u':
			n, r := escape(b[i:], true)
			if r >= 0 && string(appendRune(scratch[:0], r)) != string(b[i:i+n]) {
				return true
			}
			i += n - 2
		}
		i += 2 // the other escapes are canonical
	}
}

// A canonWriter writes string contents, given in pieces, to w in the
// canonical spelling, holding back an escape cut short by the end of a
// piece (at most maxEscape-1 bytes).
type canonWriter struct {
	w        io.Writer
	pend     []byte // the held-back start of an escape
	buf, out []byte // reused
}

// write writes p; with final, what is held back too (the string ends).
func (c *canonWriter) write(p []byte, final bool) error {
	b := p
	if len(c.pend) > 0 {
		c.buf = append(append(c.buf[:0], c.pend...), p...)
		b = c.buf
	}
	var used int
	c.out, used = canonical(c.out[:0], b, final)
	c.pend = append(c.pend[:0], b[used:]...)
	if len(c.out) == 0 {
		return nil
	}
	_, err := c.w.Write(c.out)
	return err
}
