package mcpservers

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// SplitCommand splits a command line into words the way a POSIX shell would
// for simple quoting: words are separated by unquoted whitespace, single
// quotes keep everything literally, double quotes keep everything except that
// a backslash escapes `"` and `\`, and outside quotes a backslash escapes the
// next character. Variables, globs and operators are not interpreted.
func SplitCommand(s string) ([]string, error) {
	var (
		words  []string
		cur    strings.Builder
		inWord bool
		quote  rune // 0, '\'' or '"'
		escape bool
	)
	for _, r := range s {
		switch {
		case escape:
			if quote == '"' && r != '"' && r != '\\' {
				cur.WriteRune('\\')
			}
			cur.WriteRune(r)
			escape = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\\':
			escape, inWord = true, true
		case quote == '"':
			if r == '"' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case unicode.IsSpace(r):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	switch {
	case escape:
		return nil, errors.New("command ends with a lone backslash")
	case quote != 0:
		return nil, fmt.Errorf("unterminated %c quote in command", quote)
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, errors.New("empty command")
	}
	return words, nil
}
