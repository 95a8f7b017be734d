package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// This file edits a configuration file in place: `acpgate setup` sets the
// model block and keeps everything else as the user wrote it.

// SetModel returns data, the contents of a configuration file, with its
// top-level "model" member set to m: the member's value is replaced when
// there is one (the last one, which counts, when the key is repeated) and
// a member is added after the last one otherwise. Every other byte is
// kept: the other members, their order, formatting and nested "model"
// keys (profiles'). The new value is indented like the file's top-level
// members (or compact when they share a line), with the file's line
// endings. Empty data (only white space) yields a new file holding the
// model block alone.
//
// data must be a valid configuration: the error of [Parse], naming source,
// is returned for an invalid one, and for an m that does not validate.
// SetModel is safe for concurrent use.
func SetModel(data []byte, source string, m Model) ([]byte, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}\n")
	} else if _, _, err := Parse(data, source); err != nil {
		return nil, named(source, err)
	}
	var value bytes.Buffer
	enc := json.NewEncoder(&value)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("%s: model settings: %w", source, err)
	}
	out, err := setMember(data, "model", bytes.TrimSuffix(value.Bytes(), []byte("\n")))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if _, _, err := Parse(out, source); err != nil {
		return nil, fmt.Errorf("the new model settings: %w", err)
	}
	return out, nil
}

// named adds source to an error of Parse that does not name it already
// (validation errors name JSON paths).
func named(source string, err error) error {
	var fe *FieldError
	if errors.As(err, &fe) {
		return fmt.Errorf("%s: %w", source, err)
	}
	return err
}

// member is where one member of an object is in a document.
type member struct {
	keyStart, valueStart, valueEnd int
	key                            string
}

// topLevel returns the members of the object data holds, in order, and
// the offsets of its braces.
func topLevel(data []byte) (members []member, open, close int, err error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, 0, 0, errors.New("want a JSON object at the top level")
	}
	open = int(dec.InputOffset()) - 1
	prevEnd := open + 1
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, 0, 0, err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, 0, 0, err
		}
		end := int(dec.InputOffset())
		members = append(members, member{keyStart: skipSpace(data, prevEnd), valueStart: end - len(raw), valueEnd: end, key: key})
		prevEnd = end
	}
	if _, err := dec.Token(); err != nil {
		return nil, 0, 0, err
	}
	return members, open, int(dec.InputOffset()) - 1, nil
}

// skipSpace returns the offset of the first byte at or after from that is
// neither white space nor a comma.
func skipSpace(data []byte, from int) int {
	for from < len(data) && bytes.IndexByte([]byte(" \t\r\n,"), data[from]) >= 0 {
		from++
	}
	return from
}

// setMember returns data, a JSON object, with the value of its top-level
// member key replaced by value (compact JSON), or the member added last.
func setMember(data []byte, key string, value []byte) ([]byte, error) {
	members, open, closing, err := topLevel(data)
	if err != nil {
		return nil, err
	}
	nl := "\n"
	if bytes.Contains(data, []byte("\r\n")) {
		nl = "\r\n"
	}
	quoted, _ := json.Marshal(key)
	var out bytes.Buffer
	switch last := len(members) - 1; {
	case last < 0: // {}
		out.Write(data[:open+1])
		out.WriteString(nl + "  " + string(quoted) + ": ")
		out.Write(indentValue(value, "  ", "  ", nl))
		out.WriteString(nl)
		out.Write(data[closing:])
	default:
		indent, ok := lineIndent(data, members[last].keyStart)
		i := last
		for ; i >= 0 && members[i].key != key; i-- {
		}
		if i >= 0 {
			indent, ok = lineIndent(data, members[i].keyStart)
			out.Write(data[:members[i].valueStart])
			out.Write(formatValue(value, indent, ok, nl))
			out.Write(data[members[i].valueEnd:])
			break
		}
		out.Write(data[:members[last].valueEnd])
		if ok {
			out.WriteString("," + nl + indent)
		} else {
			out.WriteString(", ")
		}
		out.Write(quoted)
		out.WriteString(": ")
		out.Write(formatValue(value, indent, ok, nl))
		out.Write(data[members[last].valueEnd:])
	}
	return out.Bytes(), nil
}

// lineIndent returns the white space before the byte at off on its line,
// and whether only white space precedes it there (an indented file).
func lineIndent(data []byte, off int) (string, bool) {
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	before := data[start:off]
	if len(bytes.Trim(before, " \t")) > 0 {
		return "", false
	}
	return string(before), true
}

// formatValue is value indented for a member whose key line has indent
// (one indentation unit: the top level), or compact.
func formatValue(value []byte, indent string, indented bool, nl string) []byte {
	if !indented {
		return value
	}
	unit := indent
	if unit == "" {
		unit = "  "
	}
	return indentValue(value, indent, unit, nl)
}

// indentValue indents compact JSON, continuation lines starting with
// prefix, nesting by unit, lines ending with nl.
func indentValue(value []byte, prefix, unit, nl string) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, value, prefix, unit); err != nil {
		return value // unreachable: value is marshalled JSON
	}
	return bytes.ReplaceAll(b.Bytes(), []byte("\n"), []byte(nl))
}
