package sysprompt

import (
	"strings"
	"unicode"

	"github.com/acpgate/acpgate/gateway"
)

// This file is the system prompt a client gives (ClientPrompt): how the
// prompt frames it as the user's words, and keeps it from starting a
// section of acpgate's.

// clientHeading is the heading the prompt puts a client's system prompt
// under.
const clientHeading = "# Instructions from the user's editor"

// The words under clientHeading, before the client's text: where it comes
// from, and how it stands to acpgate's own instructions.
const (
	clientReplaces = "The user gave these instructions through their editor, in place of acpgate's own: " +
		"they are the user's own words. Follow them."
	clientAppends = "The user gave these instructions through their editor, in addition to the above: " +
		"they are the user's own words. Follow them; where they disagree with the above, they win."
)

// clientPart is the part of the prompt that gives c: its heading, the
// words saying where it comes from, and its text, trimmed, cut to
// MaxInstructionsBytes with a note, its headings demoted and its frame
// marker look-alikes neutralised. "" when c is none.
func clientPart(c ClientPrompt, neutralize NeutralizeFunc) string {
	if c.none() {
		return ""
	}
	text := strings.TrimSpace(c.Text)
	kept := gateway.RunePrefix(text, MaxInstructionsBytes)
	note := strings.TrimPrefix(gateway.CapText(text, 0, MaxInstructionsBytes, "instructions"), kept)
	framing := clientReplaces
	if c.Append {
		framing = clientAppends
	}
	return clientHeading + "\n" + framing + "\n\n" + neutralize(demoteHeadings(kept)) + note
}

// demoteHeadings returns text with every line break Unicode defines made
// "\n" (lineBreaks) and every line that reads as a Markdown heading two
// levels deeper, code blocks included: put under a heading of the
// prompt's, the text cannot start a section of its own, nor forge one of
// acpgate's (whose headings have one or two '#'). A line reads as a
// heading when, after any indentation — spaces, tabs, and invisible
// characters (zero-width, bidi controls, other format characters, the
// BOM) — it is a run of '#' then a space, a tab or the end of the line
// ("# Environment" becomes "### Environment"), or when it is followed by
// a setext underline (a line of '=' or of '-'), which makes it "###" or
// "####" instead.
func demoteHeadings(text string) string {
	lines := strings.Split(lineBreaks.Replace(text), "\n")
	for i, line := range lines {
		if at, ok := atxHeading(line); ok {
			lines[i] = line[:at] + "##" + line[at:]
			continue
		}
		if i == 0 || strings.TrimFunc(lines[i-1], indentation) == "" || headingLine(lines[i-1]) {
			continue
		}
		switch setextUnderline(line) {
		case '=':
			lines[i-1] = "### " + lines[i-1]
		case '-':
			lines[i-1] = "#### " + lines[i-1]
		}
	}
	return strings.Join(lines, "\n")
}

// lineBreaks makes every line break Unicode defines "\n": CRLF, CR, VT,
// FF, NEL (U+0085), LS (U+2028), PS (U+2029).
var lineBreaks = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\v", "\n", "\f", "\n", "\u0085", "\n", "\u2028", "\n", "\u2029", "\n")

// indentation reports whether r may come before a heading's '#' without
// being seen: a space or tab (any Unicode space), or an invisible format
// character (Cf: zero-width characters, bidi controls, the BOM).
func indentation(r rune) bool { return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) }

// atxHeading reports whether line reads as a '#' heading, and where its
// run of '#' starts.
func atxHeading(line string) (int, bool) {
	body := strings.TrimLeftFunc(line, indentation)
	rest := strings.TrimLeft(body, "#")
	if len(rest) == len(body) {
		return 0, false
	}
	rest = strings.TrimLeftFunc(rest, func(r rune) bool { return unicode.Is(unicode.Cf, r) })
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return 0, false
	}
	return len(line) - len(body), true
}

// headingLine reports whether line is already a heading (demoted).
func headingLine(line string) bool {
	_, ok := atxHeading(line)
	return ok
}

// setextUnderline returns '=' or '-' when line, indentation aside, is a
// run of that character alone (trailing spaces allowed), else 0.
func setextUnderline(line string) byte {
	body := strings.TrimFunc(line, indentation)
	if body == "" || (body[0] != '=' && body[0] != '-') || strings.Trim(body, body[:1]) != "" {
		return 0
	}
	return body[0]
}
