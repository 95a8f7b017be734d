// Package acpschema checks the messages an ACP agent writes against the
// Agent Client Protocol's JSON Schema, as the official TypeScript SDK ships
// it (SDKDir): a test support package, for the tests that run acpgate over
// stdio.
//
// A Checker is fed both directions of one connection, frame by frame (one
// JSON-RPC message a line; Lines splits a stream): Client records the
// requests the client sends, so that Agent can check each answer against
// the result type of the method it answers; Agent checks a request or
// notification against its method's params. The schema names the method
// of each params and result definition (x-method) and lists the ones an
// agent sends or answers in its AgentRequest, AgentNotification and
// AgentResponse unions; $/cancel_request, which either side may send,
// comes from its top-level ProtocolLevel branch.
//
// Each frame is checked against the stable schema (schema.json) first and,
// when that refuses it or does not know the method, against the unstable
// one (schema.unstable.json), a superset with the methods and fields not
// yet stabilised; Counts records how many frames only the unstable schema
// accepts. Extension methods (names starting with "_") are counted but not
// checked.
package acpschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Kind is the kind of a JSON-RPC message.
type Kind string

// The kinds of message.
const (
	Request      Kind = "request"
	Notification Kind = "notification"
	Response     Kind = "response"
)

// Why Agent refuses a frame besides the schema's own complaints (a
// *jsonschema.ValidationError); a FrameError wraps one of these.
var (
	ErrNotJSONRPC    = errors.New("not a JSON-RPC 2.0 message")
	ErrUnknownMethod = errors.New("a method the schema does not know")
	ErrUnknownID     = errors.New("a response to no request the client sent")
)

// Checker checks the frames of one connection. It is safe for concurrent
// use: the two directions may be fed from different goroutines. A Checker
// is made by Load, which compiles the schema, and by New, which shares a
// compiled schema.
type Checker struct {
	files []*schemaFile // immutable: Stable, then Unstable

	mu      sync.Mutex
	pending map[string]string // the client's requests not yet answered: id key -> method
	counts  Counts
}

// Load compiles the schema files of dir (SDKDir under the module root) and
// returns a Checker for one connection. Compiling takes a while; New makes
// the Checkers of further connections from this one.
func Load(dir string) (*Checker, error) {
	c := &Checker{}
	for _, f := range schemaFiles {
		sf, err := loadFile(dir, f.name, f.file)
		if err != nil {
			return nil, err
		}
		c.files = append(c.files, sf)
	}
	return c.New(), nil
}

// New returns a Checker for another connection: it shares c's compiled
// schema, and has no requests recorded and zero counts.
func (c *Checker) New() *Checker {
	return &Checker{files: c.files, pending: map[string]string{}}
}

// Client records a frame the client sent: the method of a request, which
// the agent's answer is checked against. Other frames, and lines that are
// not JSON-RPC, are ignored (the agent answers those).
func (c *Checker) Client(frame []byte) {
	m, err := decode(frame)
	if err != nil {
		return
	}
	method, isCall := m["method"].(string)
	id, hasID := m["id"]
	if !isCall || !hasID {
		return
	}
	c.mu.Lock()
	c.pending[idKey(id)] = method
	c.mu.Unlock()
}

// Agent checks a frame the agent wrote: a request or notification against
// its method's params definition, a response against the result
// definition of the client's request it answers, or against the schema's
// Error definition. The error, when the frame is refused, is a
// *FrameError.
func (c *Checker) Agent(frame []byte) error {
	fe := c.check(frame)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts.add(fe)
	if fe.Err != nil {
		return fe
	}
	return nil
}

// Counts returns how many frames the agent wrote were checked so far.
func (c *Checker) Counts() Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts.clone()
}

// Summary is Counts as one line of text.
func (c *Checker) Summary() string { return c.Counts().String() }

// check checks one frame of the agent's; the result's Err is nil when the
// frame passes.
func (c *Checker) check(frame []byte) *FrameError {
	fe := &FrameError{}
	m, err := decode(frame)
	if err != nil {
		fe.Err = fmt.Errorf("%w: %w", ErrNotJSONRPC, err)
		return fe
	}
	method, isCall := m["method"].(string)
	id, hasID := m["id"]
	_, hasResult := m["result"]
	_, hasError := m["error"]
	switch {
	case isCall && hasID:
		fe.Kind, fe.Method, fe.ID = Request, method, idText(id)
	case isCall:
		fe.Kind, fe.Method = Notification, method
	case hasID && (hasResult || hasError):
		fe.Kind, fe.ID = Response, idText(id)
		c.mu.Lock()
		fe.Method = c.pending[idKey(id)]
		delete(c.pending, idKey(id))
		c.mu.Unlock()
	}
	if err := envelope(m, fe.Kind); err != nil {
		fe.Err = err
		return fe
	}
	if fe.Kind == Notification && method == "session/update" {
		fe.Update = updateKind(m["params"])
	}
	c.validate(fe, m)
	return fe
}

// validate checks the frame m (decoded; its envelope checked) against the
// definition fe's kind and method call for, and records the outcome in fe.
func (c *Checker) validate(fe *FrameError, m map[string]any) {
	if e, isError := m["error"]; fe.Kind == Response && isError {
		fe.errorResponse = true
		fe.Schema = c.files[0].name
		if err := c.files[0].errorDef.Validate(e); err != nil {
			fe.fail(err)
		}
		return
	}
	if strings.HasPrefix(fe.Method, "_") {
		fe.skipped = true
		return
	}
	if fe.Kind == Response && fe.Method == "" {
		fe.Err = ErrUnknownID
		return
	}
	v := m["params"]
	if fe.Kind == Response {
		v = m["result"]
	}
	var refusal error
	for _, f := range c.files {
		sch := f.defs(fe.Kind)[fe.Method]
		if sch == nil {
			continue
		}
		fe.Schema = f.name
		if refusal = sch.Validate(v); refusal == nil {
			return
		}
	}
	if fe.Schema == "" {
		fe.Err = ErrUnknownMethod
		return
	}
	fe.fail(refusal)
}

// envelope checks what the schema asks of every message: "jsonrpc": "2.0",
// an id that is a string, an integer or null, and a response with either a
// result or an error.
func envelope(m map[string]any, kind Kind) error {
	if m["jsonrpc"] != "2.0" {
		return fmt.Errorf("%w: jsonrpc is %v, want \"2.0\"", ErrNotJSONRPC, m["jsonrpc"])
	}
	switch id := m["id"].(type) {
	case nil, string:
	case json.Number:
		if _, err := id.Int64(); err != nil {
			return fmt.Errorf("%w: id %v is not an integer", ErrNotJSONRPC, id)
		}
	default:
		return fmt.Errorf("%w: id %v is neither a string, an integer nor null", ErrNotJSONRPC, id)
	}
	_, hasResult := m["result"]
	_, hasError := m["error"]
	switch {
	case kind == "":
		return fmt.Errorf("%w: neither a request, a notification nor a response", ErrNotJSONRPC)
	case kind == Response && hasResult && hasError:
		return fmt.Errorf("%w: a response with both result and error", ErrNotJSONRPC)
	}
	return nil
}

// updateKind is the sessionUpdate of session/update params, or "".
func updateKind(params any) string {
	p, _ := params.(map[string]any)
	u, _ := p["update"].(map[string]any)
	s, _ := u["sessionUpdate"].(string)
	return s
}

// decode decodes a frame into the form jsonschema validates (numbers as
// json.Number); it must be a JSON object.
func decode(frame []byte) (map[string]any, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(frame))
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	return m, nil
}

// idKey is a request id as a map key: the same for the client's request
// and the agent's answer.
func idKey(id any) string {
	switch id := id.(type) {
	case string:
		return "s" + id
	case json.Number:
		return "n" + id.String()
	}
	return fmt.Sprintf("%T%v", id, id)
}

// idText is a request id as JSON.
func idText(id any) string {
	if s, ok := id.(string); ok {
		return strconv.Quote(s)
	}
	if id == nil {
		return "null"
	}
	return fmt.Sprint(id)
}
