package skills

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// This file is the skill format (agentskills.io/specification): a SKILL.md
// is YAML frontmatter between two "---" lines, then the instructions.

// The format's limits, and acpgate's bound on a SKILL.md.
const (
	// MaxNameLen bounds a skill's name (1 to 64 characters of a-z, 0-9
	// and "-", not starting or ending with "-", no "--").
	MaxNameLen = 64
	// MaxDescriptionLen bounds its description (1 to 1024 characters).
	MaxDescriptionLen = 1024
	// MaxCompatibilityLen bounds the optional compatibility field.
	MaxCompatibilityLen = 500
	// MaxSkillBytes bounds a SKILL.md: a longer one is not read.
	MaxSkillBytes = 256 << 10
)

// ErrFormat is wrapped by the error for a SKILL.md that breaks the
// format: no frontmatter, YAML that does not parse, a field missing or
// over its limit. The error names the field.
var ErrFormat = errors.New("not a valid SKILL.md")

// Frontmatter is a SKILL.md's frontmatter: every field the author wrote,
// as JSON values (strings, float64 numbers, bools, nil, []any,
// map[string]any), with name and description checked.
type Frontmatter map[string]any

// Name is the skill's name.
func (f Frontmatter) Name() string { s, _ := f["name"].(string); return s }

// Description is the skill's description.
func (f Frontmatter) Description() string { s, _ := f["description"].(string); return s }

// Split returns the frontmatter of a SKILL.md, decoded but not checked,
// and the body after it. A file that does not start with a "---" line
// closed by another is an error wrapping ErrFormat.
func Split(data []byte) (Frontmatter, string, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") {
		return nil, "", fmt.Errorf("%w: it does not begin with a --- line (YAML frontmatter)", ErrFormat)
	}
	rest := text[len("---\n"):]
	var head, body string
	switch i := strings.Index(rest, "\n---"); {
	case strings.HasPrefix(rest, "---"):
		head, body = "", rest[3:]
	case i >= 0:
		head, body = rest[:i+1], rest[i+len("\n---"):]
	default:
		return nil, "", fmt.Errorf("%w: its frontmatter has no closing --- line", ErrFormat)
	}
	if nl := strings.IndexByte(body, '\n'); nl >= 0 && strings.TrimSpace(body[:nl]) == "" {
		body = strings.TrimLeft(body[nl+1:], "\n")
	} else if strings.TrimSpace(body) == "" {
		body = ""
	} else {
		return nil, "", fmt.Errorf("%w: its frontmatter has no closing --- line", ErrFormat)
	}
	var raw map[string]any
	if err := yaml.Unmarshal([]byte(head), &raw); err != nil {
		return nil, "", fmt.Errorf("%w: its frontmatter is not YAML: %v", ErrFormat, err)
	}
	fm, err := jsonValues(raw)
	if err != nil {
		return nil, "", fmt.Errorf("%w: its frontmatter has no JSON form: %v", ErrFormat, err)
	}
	return fm, body, nil
}

// jsonValues turns YAML's values into JSON's (a round trip through JSON),
// so that frontmatter compares equal to a server's listing of it.
func jsonValues(raw map[string]any) (Frontmatter, error) {
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	var fm Frontmatter
	if err := json.Unmarshal(b, &fm); err != nil {
		return nil, err
	}
	if fm == nil {
		fm = Frontmatter{}
	}
	return fm, nil
}

// Parse returns a SKILL.md's checked frontmatter (see Check) and its body.
func Parse(data []byte) (Frontmatter, string, error) {
	fm, body, err := Split(data)
	if err != nil {
		return nil, "", err
	}
	if err := Check(fm); err != nil {
		return nil, "", err
	}
	return fm, body, nil
}

// Check enforces the format's rules on fm: name (see CheckName) and
// description (a non-empty string of at most MaxDescriptionLen
// characters) are required; compatibility, when given, is a string of at
// most MaxCompatibilityLen characters; metadata, when given, maps strings
// to strings. Other fields are kept as they are. The error wraps
// ErrFormat and names the field.
func Check(fm Frontmatter) error {
	name, ok := fm["name"].(string)
	if !ok {
		return fmt.Errorf("%w: field name: %s", ErrFormat, missingOr(fm, "name"))
	}
	if err := CheckName(name); err != nil {
		return err
	}
	desc, ok := fm["description"].(string)
	if !ok || strings.TrimSpace(desc) == "" {
		return fmt.Errorf("%w: field description: %s", ErrFormat, missingOr(fm, "description"))
	}
	if n := utf8.RuneCountInString(desc); n > MaxDescriptionLen {
		return fmt.Errorf("%w: field description: %d characters, at most %d", ErrFormat, n, MaxDescriptionLen)
	}
	if v, ok := fm["compatibility"]; ok {
		s, isString := v.(string)
		if !isString {
			return fmt.Errorf("%w: field compatibility: must be a string", ErrFormat)
		}
		if n := utf8.RuneCountInString(s); n > MaxCompatibilityLen {
			return fmt.Errorf("%w: field compatibility: %d characters, at most %d", ErrFormat, n, MaxCompatibilityLen)
		}
	}
	if v, ok := fm["metadata"]; ok && v != nil {
		m, isMap := v.(map[string]any)
		if !isMap {
			return fmt.Errorf("%w: field metadata: must map strings to strings", ErrFormat)
		}
		for k, val := range m {
			if _, isString := val.(string); !isString {
				return fmt.Errorf("%w: field metadata: %q must be a string", ErrFormat, k)
			}
		}
	}
	return nil
}

// missingOr says what is wrong with field of fm: missing, or not a
// non-empty string.
func missingOr(fm Frontmatter, field string) string {
	if _, ok := fm[field]; !ok {
		return "missing"
	}
	return "must be a non-empty string"
}

// CheckName enforces the format's rule for a skill's name: 1 to
// MaxNameLen characters of a-z, 0-9 and "-", neither starting nor ending
// with "-", without "--". The error wraps ErrFormat.
func CheckName(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: field name %q: %s", ErrFormat, oneLine(name, 80), why)
	}
	switch {
	case name == "":
		return bad("empty")
	case len(name) > MaxNameLen:
		return bad(fmt.Sprintf("%d characters, at most %d", len(name), MaxNameLen))
	case strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-"):
		return bad("starts or ends with -")
	case strings.Contains(name, "--"):
		return bad("has --")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return bad("only a-z, 0-9 and - are allowed")
		}
	}
	return nil
}

// oneLine is s cut to at most max bytes, on one line, for an error.
func oneLine(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) > max {
		s = strings.ToValidUTF8(s[:max], "") + "…"
	}
	return s
}
