package config

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

//go:embed schema.json
var schemaJSON []byte

// schemaURL is the schema's $id.
const schemaURL = "https://github.com/acpgate/acpgate/internal/inputs/config/schema.json"

// Schema returns the JSON Schema (draft 2020-12) of the configuration file,
// as `acpgate config schema` prints it. A file may name it in its "$schema"
// key so that editors complete and check it. The result is a new slice on
// every call; Schema is safe for concurrent use.
func Schema() []byte { return bytes.Clone(schemaJSON) }

// compiledSchema is the embedded schema, compiled on first use (which costs
// milliseconds: the compiler checks it against the draft's metaschema). It
// is immutable, and a compiled schema validates from any number of
// goroutines at once.
var compiledSchema = sync.OnceValues(compileSchema)

// compileSchema compiles the embedded schema.
func compileSchema() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, fmt.Errorf("the configuration schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("the configuration schema: %w", err)
	}
	return c.Compile(schemaURL)
}

// validate checks the document against the schema and records what it
// rejects: unknown keys as warnings, the rest as errors. Its own error is
// for a schema that does not compile.
func (r *report) validate() error {
	sch, err := compiledSchema()
	if err != nil {
		return err
	}
	var ve *jsonschema.ValidationError
	if err := sch.Validate(any(r.doc)); errors.As(err, &ve) {
		r.schemaErrors(ve)
	} else if err != nil {
		return fmt.Errorf("validating: %w", err)
	}
	return nil
}

// schemaErrors records the leaves of a validation error tree.
func (r *report) schemaErrors(e *jsonschema.ValidationError) {
	for _, c := range e.Causes {
		r.schemaErrors(c)
	}
	if len(e.Causes) > 0 {
		return
	}
	loc := e.InstanceLocation
	_, at, _ := strings.Cut(e.SchemaURL, "#") // the failing schema's JSON pointer
	if _, ok := e.ErrorKind.(*kind.AdditionalProperties); !ok {
		r.bad = append(r.bad, pointer(loc))
	}
	switch k := e.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			r.warn(append(loc, p), "unknown key")
		}
	case *kind.Required:
		for _, p := range k.Missing {
			r.errorAt(append(loc, p), nil, "missing")
		}
	case *kind.Type:
		r.errorAt(loc, nil, "want %s", want(at, k.Want))
	case *kind.Enum:
		var names []string
		for _, w := range k.Want {
			names = append(names, fmt.Sprint(w))
		}
		last := len(names) - 1
		r.errorAt(loc, nil, "unknown %s %q (want %s or %s)", loc[len(loc)-1], k.Got, strings.Join(names[:last], ", "), names[last])
	case *kind.Pattern:
		r.errorAt(loc, nil, "%s", mismatch(at, k.Got))
	case *kind.Minimum, *kind.ExclusiveMinimum:
		r.errorAt(loc, nil, "%s", tooSmall(at))
	case *kind.MinLength:
		r.errorAt(loc, nil, "must not be empty")
	case *kind.Maximum:
		r.errorAt(loc, nil, "must be at most %s", k.Want.RatString())
	default:
		r.errorAt(loc, nil, "%s", k.LocalizedString(message.NewPrinter(language.English)))
	}
}

// want names what the schema at the pointer at wants, of the JSON types
// types.
func want(at string, types []string) string {
	switch at {
	case "/$defs/stringList":
		return "an array of strings"
	case "/$defs/stringMap":
		return "an object of strings"
	case "/$defs/profiles":
		return "an array of profiles"
	case "/$defs/server/properties/oauth":
		return "true, false or an object"
	case "/$defs/modelChoice":
		return "a model id or an object"
	}
	switch types[0] {
	case "boolean":
		return "true or false"
	case "integer", "object", "array":
		return "an " + types[0]
	}
	return "a " + types[0]
}

// mismatch says what is wrong with a string, got, that does not match the
// pattern of the schema at the pointer at.
func mismatch(at, got string) string {
	switch at {
	case "/$defs/profile/properties/id":
		return "missing"
	case "/$defs/server/properties/toolPrefix":
		return fmt.Sprintf("bad prefix %q: want letters, digits, _ and - only", got)
	case "/$defs/pricing/properties/currency":
		return fmt.Sprintf("bad currency %q: want an ISO 4217 code such as USD", got)
	}
	return fmt.Sprintf("%q has the wrong form", got)
}

// tooSmall says what is wrong with a number below the minimum of the
// schema at the pointer at.
func tooSmall(at string) string {
	switch at {
	case "/$defs/millis":
		return "must be a positive number of milliseconds"
	case "/$defs/countOrOff", "/$defs/millisOrOff":
		return "must not be negative (0 means off)"
	case "/$defs/limits/properties/compactAt":
		return "must be a percentage from 0 to 100 (0 means off)"
	case "/$defs/price":
		return "must not be negative"
	case "/$defs/model/properties/thinkingBudget":
		return "must be at least 1024 tokens"
	}
	return "must be positive"
}
