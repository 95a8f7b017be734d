package sysprompt

import (
	"strings"

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

// demoteHeadings returns text with its line ends made "\n" and every line
// that reads as a Markdown heading — whatever its indentation, a run of
// '#' then a space, a tab or the end of the line — two levels deeper
// ("# Environment" becomes "### Environment"), code blocks included: put
// under a heading of the prompt's, the text cannot start a section of its
// own, nor forge one of acpgate's (whose headings have one or two '#').
func demoteHeadings(text string) string {
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		body := strings.TrimLeft(line, " \t")
		rest := strings.TrimLeft(body, "#")
		if len(rest) < len(body) && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			lines[i] = line[:len(line)-len(body)] + "##" + body
		}
	}
	return strings.Join(lines, "\n")
}
