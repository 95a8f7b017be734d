package acpschema

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// FrameError is a frame of the agent's that Agent refuses.
type FrameError struct {
	Kind   Kind   // "" when the frame is not a JSON-RPC message
	Method string // the method of the request or notification, or the one a response answers ("" if unknown)
	ID     string // the request id as JSON; "" for a notification
	Update string // the sessionUpdate of a session/update notification
	// Schema is the schema file whose refusal Problems are: Stable, or
	// Unstable when that file knows the method too (the unstable file
	// accepts more, so its refusal is the one that counts).
	Schema string
	// Problems are the failing keywords of the schema's refusal, in the
	// schema's order; empty when Err is not the schema's.
	Problems []Problem
	// Err is the cause: a *jsonschema.ValidationError, or ErrNotJSONRPC,
	// ErrUnknownMethod or ErrUnknownID (possibly wrapped).
	Err error

	skipped       bool // an extension method's: not checked
	errorResponse bool // a response with an error
}

// Problem is one failing keyword of a schema's refusal.
type Problem struct {
	// Location is the failing keyword in the schema file, as a fragment:
	// "#/$defs/ToolCall/required".
	Location string
	// Instance is where the failing value is, as a JSON pointer into the
	// params, result or error checked ("" for the whole of it).
	Instance string
	Message  string // what the schema wants, in English
}

// Error says what was refused and why, on one line.
func (e *FrameError) Error() string {
	var b strings.Builder
	switch e.Kind {
	case Response:
		fmt.Fprintf(&b, "response %s to %s", e.ID, orUnknown(e.Method))
	case Request:
		fmt.Fprintf(&b, "%s request %s", e.Method, e.ID)
	case Notification:
		b.WriteString(e.Method + " notification")
	default:
		b.WriteString("frame")
	}
	if e.Update != "" {
		fmt.Fprintf(&b, " (%s)", e.Update)
	}
	if len(e.Problems) == 0 {
		fmt.Fprintf(&b, ": %v", e.Err)
		return b.String()
	}
	fmt.Fprintf(&b, " refused by the %s schema:", e.Schema)
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " %s at %q: %s", p.Location, p.Instance, p.Message)
	}
	return b.String()
}

// Unwrap returns Err.
func (e *FrameError) Unwrap() error { return e.Err }

// Locations lists the distinct Locations of e's Problems, in order.
func (e *FrameError) Locations() []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range e.Problems {
		if !seen[p.Location] {
			seen[p.Location] = true
			out = append(out, p.Location)
		}
	}
	return out
}

// orUnknown is method, or says it is unknown.
func orUnknown(method string) string {
	if method == "" {
		return "an unknown request"
	}
	return method
}

// fail records err, the schema's refusal, in e.
func (e *FrameError) fail(err error) {
	e.Err = err
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		p := message.NewPrinter(language.English)
		collect(ve, p, &e.Problems)
	}
}

// collect appends the leaves of the refusal tree e to out. Of the branches
// of an anyOf or oneOf, those that fail only because the value is of
// another shape are left out (see offBranch), unless all do: for a union
// of tagged objects, what is reported is why the value does not meet the
// branch its tag chooses, not that its tag is none of the others. When
// the tag chooses none (see tags), one problem, at the union, lists the
// values it may take.
func collect(e *jsonschema.ValidationError, p *message.Printer, out *[]Problem) {
	if len(e.Causes) == 0 {
		*out = append(*out, Problem{Location: location(e), Instance: pointer(e.InstanceLocation), Message: e.ErrorKind.LocalizedString(p)})
		return
	}
	causes := e.Causes
	switch e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		if at, want, ok := tags(e, len(e.InstanceLocation)); ok {
			*out = append(*out, Problem{Location: location(e), Instance: pointer(at), Message: "value must be one of " + strings.Join(want, ", ")})
			return
		}
		var on []*jsonschema.ValidationError
		for _, c := range causes {
			if !offBranch(c, len(e.InstanceLocation)) {
				on = append(on, c)
			}
		}
		if len(on) > 0 {
			causes = on
		}
	}
	for _, c := range causes {
		collect(c, p, out)
	}
}

// offBranch reports whether the refusal e of a union's branch for a value
// at depth depth says the value is of another shape than the branch's: of
// another JSON type, or with a property whose value is not the branch's
// constant or enumeration (a tag such as sessionUpdate or type).
func offBranch(e *jsonschema.ValidationError, depth int) bool {
	switch e.ErrorKind.(type) {
	case *kind.Type:
		if len(e.InstanceLocation) == depth {
			return true
		}
	case *kind.Const, *kind.Enum:
		if len(e.InstanceLocation) == depth+1 {
			return true
		}
	}
	for _, c := range e.Causes {
		if offBranch(c, depth) {
			return true
		}
	}
	return false
}

// tags reports whether every branch of the union refusal e fails on a
// constant or enumeration at one place (the value itself, at depth, or
// one of its properties: the union's tag), and returns that place and the
// values the branches want there: the union is of tagged shapes, or an
// enumeration spelled as a union of constants, and the value is none.
func tags(e *jsonschema.ValidationError, depth int) (at []string, want []string, ok bool) {
	for i, c := range e.Causes {
		leaf := tagLeaf(c, depth)
		if leaf == nil || (i > 0 && !slices.Equal(leaf.InstanceLocation, at)) {
			return nil, nil, false
		}
		at = leaf.InstanceLocation
		switch k := leaf.ErrorKind.(type) {
		case *kind.Const:
			want = append(want, fmt.Sprintf("%v", k.Want))
		case *kind.Enum:
			for _, v := range k.Want {
				want = append(want, fmt.Sprintf("%v", v))
			}
		}
	}
	return at, want, len(want) > 0
}

// tagLeaf is the first const or enum refusal in e at depth or depth+1, or
// nil.
func tagLeaf(e *jsonschema.ValidationError, depth int) *jsonschema.ValidationError {
	switch e.ErrorKind.(type) {
	case *kind.Const, *kind.Enum:
		if n := len(e.InstanceLocation); n == depth || n == depth+1 {
			return e
		}
	}
	for _, c := range e.Causes {
		if l := tagLeaf(c, depth); l != nil {
			return l
		}
	}
	return nil
}

// location is the keyword e failed on, as a fragment of the schema file:
// the failing (sub)schema's location plus the keyword's path in it.
func location(e *jsonschema.ValidationError) string {
	_, frag, _ := strings.Cut(e.SchemaURL, "#")
	return "#" + frag + pointer(e.ErrorKind.KeywordPath())
}

// pointer is the JSON pointer of the tokens.
func pointer(tokens []string) string {
	var b strings.Builder
	r := strings.NewReplacer("~", "~0", "/", "~1")
	for _, t := range tokens {
		b.WriteString("/" + r.Replace(t))
	}
	return b.String()
}
