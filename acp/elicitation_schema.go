package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// This file checks an elicitation's requestedSchema and the answers to it.

// errBadSchema is wrapped by the error about a requestedSchema that is not
// a JSON Schema object acpgate can check answers against.
var errBadSchema = errors.New("the requested schema is not a valid JSON Schema")

// formSchema is an elicitation's requestedSchema: decoded (for its
// properties and defaults) and compiled (to check answers).
type formSchema struct {
	props    map[string]map[string]any // property name -> its schema
	required []string
	compiled *jsonschema.Schema
}

// formSchemaURL is where a requested schema is compiled: nothing is ever
// loaded from it (or from anywhere: the loader refuses every URL, so a
// server's $ref cannot make acpgate read a file or fetch a URL).
const formSchemaURL = "urn:acpgate:elicitation"

// compileForm decodes and compiles raw, a requestedSchema; formats
// (email, uri, date, date-time) are asserted. Its errors wrap errBadSchema.
func compileForm(raw json.RawMessage) (*formSchema, error) {
	var top struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("%w: %w", errBadSchema, err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadSchema, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(jsonschema.SchemeURLLoader{})
	if err := c.AddResource(formSchemaURL, doc); err != nil {
		return nil, fmt.Errorf("%w: %w", errBadSchema, err)
	}
	sch, err := c.Compile(formSchemaURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadSchema, err)
	}
	return &formSchema{props: top.Properties, required: top.Required, compiled: sch}, nil
}

// withDefaults returns content with the schema's default for every
// property it leaves out (SEP-1034). content is not modified.
func (f *formSchema) withDefaults(content map[string]any) map[string]any {
	out := maps.Clone(content)
	if out == nil {
		out = map[string]any{}
	}
	for name, p := range f.props {
		if d, ok := p["default"]; ok {
			if _, given := out[name]; !given {
				out[name] = d
			}
		}
	}
	return out
}

// check validates content against the schema.
func (f *formSchema) check(content map[string]any) error {
	b, err := json.Marshal(content)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return f.compiled.Validate(inst)
}

// choice is a form of a single boolean or single-select field: a question
// a permission request can ask.
type choice struct {
	field   string
	boolean bool
	values  []any    // enum values (not boolean)
	labels  []string // what each value is called
	title   string   // the field's title or description, if any
}

// asChoice returns the form as a choice if it has exactly one property,
// a boolean or a single-select enum (enum, with enumNames as labels, or
// oneOf of {const, title}).
func (f *formSchema) asChoice() (choice, bool) {
	if len(f.props) != 1 {
		return choice{}, false
	}
	var c choice
	var p map[string]any
	for name, schema := range f.props { // the one property
		c.field, p = name, schema
	}
	c.title = str(p["title"])
	if c.title == "" {
		c.title = str(p["description"])
	}
	switch {
	case p["type"] == "boolean":
		c.boolean = true
		return c, true
	case p["type"] != "string" && p["type"] != nil:
		return choice{}, false
	}
	if enum, ok := p["enum"].([]any); ok && len(enum) > 0 {
		names, _ := p["enumNames"].([]any)
		for i, v := range enum {
			label := fmt.Sprint(v)
			if i < len(names) && str(names[i]) != "" {
				label = str(names[i])
			}
			c.values, c.labels = append(c.values, v), append(c.labels, label)
		}
		return c, true
	}
	if one, ok := p["oneOf"].([]any); ok && len(one) > 0 {
		for _, o := range one {
			m, _ := o.(map[string]any)
			v, has := m["const"]
			if !has {
				return choice{}, false
			}
			label := str(m["title"])
			if label == "" {
				label = fmt.Sprint(v)
			}
			c.values, c.labels = append(c.values, v), append(c.labels, label)
		}
		return c, true
	}
	return choice{}, false
}

// fieldNames lists the form's properties, sorted.
func (f *formSchema) fieldNames() []string {
	return slices.Sorted(maps.Keys(f.props))
}

// str returns v if it is a string, else "".
func str(v any) string {
	s, _ := v.(string)
	return s
}
