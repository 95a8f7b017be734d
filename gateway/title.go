package gateway

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"unicode"
)

// DisplayText is s without controls, format characters (bidi controls
// among them) and other default-ignorable code points, cut to at most max
// bytes (on a rune boundary, with "…" after a cut): a name or value fit for
// a one-line label in the editor.
func DisplayText(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector) {
			return -1
		}
		return r
	}, s)
	if len(s) <= max {
		return s
	}
	return RunePrefix(s, max) + "…"
}

// maxTitleArgBytes caps the argument shown in a call's title.
const maxTitleArgBytes = 120

// argRole is what a telling argument is; the lower, the more telling.
type argRole int

// The roles of telling arguments, most telling first.
const (
	argCommand argRole = iota + 1
	argQuery
	argPath
	argURL
)

// roleOf says what the argument called key is, from its name: the name
// folded to lower case without '_' and '-' (file_path, filePath and
// file-path alike). 0: not a telling argument.
func roleOf(key string) argRole {
	k := strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(key))
	switch k {
	case "command", "cmd", "commandline", "shellcommand", "script":
		return argCommand
	case "query", "q", "pattern", "search", "searchquery", "searchterm", "regex", "keyword", "keywords":
		return argQuery
	case "path", "filepath", "file", "filename", "absolutepath", "relativepath", "targetfile", "dir", "directory", "folder":
		return argPath
	case "url", "uri", "link":
		return argURL
	}
	return 0
}

// TellingArgument returns the argument of a call that best says what the
// call does — a command, else a query, else a path, else a URL, by the
// argument's name — as one line of display text, and how it is shown:
// a command in backquotes, a query in double quotes, a path or URL as it
// is. It returns "" when args is not a JSON object or has no such
// argument with a non-empty string value. Among arguments of the same
// role the first in name order wins.
func TellingArgument(args json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return ""
	}
	var best argRole
	var value string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		r := roleOf(k)
		if r == 0 || best != 0 && r >= best {
			continue
		}
		var s string
		if json.Unmarshal(m[k], &s) != nil {
			continue
		}
		if s = strings.Join(strings.Fields(s), " "); s == "" {
			continue
		}
		best, value = r, DisplayText(s, maxTitleArgBytes)
	}
	switch best {
	case argCommand:
		return "`" + value + "`"
	case argQuery:
		return `"` + value + `"`
	}
	return value
}

// CallTitle is the title of one call of a tool: base (the tool's title)
// followed by its telling argument when it has one (see TellingArgument),
// such as "Run command `go test ./...`" or "fs: read_file /src/main.go".
func CallTitle(base string, args json.RawMessage) string {
	if arg := TellingArgument(args); arg != "" {
		return base + " " + arg
	}
	return base
}
