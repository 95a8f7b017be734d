package acpschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// SDKDir is where the ACP JSON Schema files sit under the module root once
// `make npm` has installed the TypeScript SDK pinned by
// testdata/acpnode/package-lock.json.
const SDKDir = "testdata/acpnode/node_modules/@agentclientprotocol/sdk/schema/v1"

// The two schema files of SDKDir, by the name a Checker reports for them.
const (
	Stable   = "stable"   // schema.json
	Unstable = "unstable" // schema.unstable.json: stable plus the unstable methods and fields
)

// schemaFiles names the file of each schema, in the order they are tried.
var schemaFiles = [...]struct{ name, file string }{{Stable, "schema.json"}, {Unstable, "schema.unstable.json"}}

// schemaFile is one compiled schema file: for each method an agent may
// send (request or notification), or answer, the definition that method's
// params or result must meet. It is immutable; a compiled schema validates
// from any number of goroutines at once.
type schemaFile struct {
	name string // Stable or Unstable
	// requests and notifications: the params of what an agent sends;
	// results: the result of the client's requests an agent answers.
	requests, notifications, results map[string]*jsonschema.Schema
	errorDef                         *jsonschema.Schema // a response's error
}

// defs is the table of the definitions of the messages of kind k: the
// params of the requests or notifications an agent sends, the results of
// the requests it answers.
func (f *schemaFile) defs(k Kind) map[string]*jsonschema.Schema {
	switch k {
	case Request:
		return f.requests
	case Notification:
		return f.notifications
	case Response:
		return f.results
	}
	return nil
}

// rawSchema is the part of a schema file the method tables come from.
type rawSchema struct {
	AnyOf []map[string]any          `json:"anyOf"` // Agent, Client, ProtocolLevel, Proxy
	Defs  map[string]map[string]any `json:"$defs"`
}

// loadFile compiles one schema file of dir.
func loadFile(dir, name, file string) (*schemaFile, error) {
	path := filepath.Join(dir, file)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("acpschema: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("acpschema: %s: %w", path, err)
	}
	var raw rawSchema
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("acpschema: %s: %w", path, err)
	}
	url := "https://agentclientprotocol.com/schema/v1/" + file
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("acpschema: %s: %w", path, err)
	}
	f := &schemaFile{name: name}
	compile := func(what string, roots ...any) (map[string]*jsonschema.Schema, error) {
		defs := raw.methodDefs(roots...)
		if len(defs) == 0 {
			return nil, fmt.Errorf("acpschema: %s: no %s methods found", path, what)
		}
		out := make(map[string]*jsonschema.Schema, len(defs))
		for method, def := range defs {
			sch, err := c.Compile(url + "#/$defs/" + def)
			if err != nil {
				return nil, fmt.Errorf("acpschema: %s: %s: %w", path, def, err)
			}
			out[method] = sch
		}
		return out, nil
	}
	if f.requests, err = compile("agent request", raw.Defs["AgentRequest"]); err != nil {
		return nil, err
	}
	if f.notifications, err = compile("agent notification", raw.Defs["AgentNotification"], raw.protocolLevel()); err != nil {
		return nil, err
	}
	if f.results, err = compile("agent response", raw.Defs["AgentResponse"]); err != nil {
		return nil, err
	}
	if f.errorDef, err = c.Compile(url + "#/$defs/Error"); err != nil {
		return nil, fmt.Errorf("acpschema: %s: Error: %w", path, err)
	}
	return f, nil
}

// protocolLevel is the top-level anyOf branch of the messages either side
// may send ($/cancel_request), or nil.
func (r *rawSchema) protocolLevel() any {
	for _, b := range r.AnyOf {
		if b["title"] == "ProtocolLevel" {
			return b
		}
	}
	return nil
}

// methodDefs maps the methods whose definitions roots refer to ($ref) to
// those definitions' names: the schema marks each method's params and
// result definition with its name (x-method). A root is a union such as
// AgentRequest, whose params are anyOf the requests an agent sends;
// definitions without x-method (RequestId, Error, the Ext* catch-alls of
// the extension methods) are left out.
func (r *rawSchema) methodDefs(roots ...any) map[string]string {
	out := map[string]string{}
	for _, root := range roots {
		for _, name := range refs(root) {
			if m, ok := r.Defs[name]["x-method"].(string); ok {
				out[m] = name
			}
		}
	}
	return out
}

// refs lists the $defs names v refers to (in v's own nodes: references
// are not followed).
func refs(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		if s, ok := v["$ref"].(string); ok {
			if name, ok := strings.CutPrefix(s, "#/$defs/"); ok {
				out = append(out, name)
			}
		}
		for _, x := range v {
			out = append(out, refs(x)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, refs(x)...)
		}
	}
	return out
}
