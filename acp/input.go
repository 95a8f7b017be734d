package acp

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/acpgate/acpgate/acp/jsonrpc"
	"github.com/acpgate/acpgate/acp/sdkservers"
	"github.com/acpgate/acpgate/internal/inputs/mcpservers"
)

// This file is what the params of the client's requests are checked for
// before they are decoded (routes.go): the members' JSON types, the
// prompt's content blocks and the mcpServers of session/new, load, resume
// and fork, each bad member answered with -32602 naming it. (The
// JSON-RPC envelope is acp/jsonrpc's.)

// The JSON-RPC error code of bad params.
const codeInvalidParams = jsonrpc.CodeInvalidParams

// inputError is what is wrong with the params of one client message. It
// is immutable once made.
type inputError struct {
	// Code is the JSON-RPC error code: codeInvalidParams.
	Code int
	// Path is the JSON path of the offending member, relative to params
	// ("mcpServers[0].args"); "" for the params as a whole.
	Path string
	// Problem says what is wrong, e.g. "must be an array of strings, got
	// string". It never quotes a value the client may consider secret
	// (env and header values).
	Problem string
}

// Error returns "PATH: PROBLEM" (just PROBLEM when Path is "").
func (e *inputError) Error() string {
	if e.Path == "" {
		return e.Problem
	}
	return e.Path + ": " + e.Problem
}

// rpcError is the JSON-RPC error object answering e: its message names
// the member at fault, its data is {"path", "error"}.
func (e *inputError) rpcError() *jsonrpc.Error { return jsonrpc.Problem(e.Code, e.Path, e.Problem) }

func badParam(path, format string, args ...any) *inputError {
	return &inputError{Code: codeInvalidParams, Path: path, Problem: fmt.Sprintf(format, args...)}
}

// kindOf names the JSON type of a raw value, for error messages.
func kindOf(raw json.RawMessage) string { return jsonrpc.Kind(raw) }

// checkPrompt checks the content blocks of a session/prompt: the SDK
// decodes a block of a type it does not know as an empty block, which
// would reach the model as nothing. Other problems (no prompt, a block
// that does not decode) are left to the SDK, which answers them.
func checkPrompt(params json.RawMessage) *inputError {
	var p struct {
		Prompt []json.RawMessage `json:"prompt"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	for i, raw := range p.Prompt {
		path := fmt.Sprintf("prompt[%d]", i)
		var b map[string]json.RawMessage
		if json.Unmarshal(raw, &b) != nil || b == nil {
			return badParam(path, "must be a content block object, got %s", kindOf(raw))
		}
		var typ string
		if v, ok := b["type"]; !ok {
			return badParam(path+".type", "missing")
		} else if json.Unmarshal(v, &typ) != nil {
			return badParam(path+".type", "must be a string, got %s", kindOf(v))
		}
		switch typ {
		case "text", "image", "audio", "resource_link", "resource":
		default:
			return badParam(path+".type", "unsupported content type %q (acpgate takes text, image, audio, resource_link and resource)", typ)
		}
	}
	return nil
}

// normalizeServers checks params.mcpServers of session/new, session/load,
// session/resume and session/fork, and rewrites every entry into the
// shape acp-go-sdk decodes as intended (see mcpservers.ParseList and
// sdkservers.ToSDK: the
// liberal shapes real clients send are accepted; acp servers only when
// acp is set). Params that are not an object are returned as they are,
// and missing mcpServers stay missing: the SDK answers those itself.
// Members spelled like mcpServers in another case are removed.
func normalizeServers(params json.RawMessage, acp bool) (json.RawMessage, *inputError) {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil || p == nil {
		return params, nil
	}
	for k := range p {
		// Member names are case-sensitive; the SDK's decoding is not.
		if k != "mcpServers" && strings.EqualFold(k, "mcpServers") {
			delete(p, k)
		}
	}
	if raw, ok := p["mcpServers"]; ok && kindOf(raw) != "null" {
		servers, err := mcpservers.ParseList(raw, "mcpServers", mcpservers.Options{ACP: acp})
		var perr *mcpservers.Error
		if errors.As(err, &perr) {
			return nil, badParam(perr.Path, "%s", perr.Problem)
		} else if err != nil {
			return nil, badParam("mcpServers", "%v", err)
		}
		p["mcpServers"], _ = json.Marshal(sdkservers.ToSDKList(servers))
	}
	fixed, err := json.Marshal(p)
	if err != nil {
		return nil, badParam("", "%v", err)
	}
	return fixed, nil
}

// checkParamTypes checks that a request's params are an object whose
// members have the JSON types the params type of v (a pointer, decoded
// into) gives them, so
// that a member of the wrong type ("sessionId": 7) is answered with
// -32602 naming it (data.path) instead of the decoder's text. What else
// the decoder would refuse is left to the method's handler. Absent or
// null params are left to it too.
func checkParamTypes(params json.RawMessage, v any) *inputError {
	if len(params) == 0 || kindOf(params) == "null" {
		return nil
	}
	if kindOf(params) != "object" {
		return badParam("params", "must be an object, got %s", kindOf(params))
	}
	var te *json.UnmarshalTypeError
	if err := json.Unmarshal(params, v); errors.As(err, &te) && te.Field != "" {
		return badParam(te.Field, "must be %s, got %s", jsonTypeName(te.Type), te.Value)
	}
	return nil
}

// jsonTypeName names the JSON type a Go type is decoded from, for error
// messages: "a string", "a number", "an object", ...
func jsonTypeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct, reflect.Pointer:
		return "an object"
	}
	return "of another type"
}

// stringParam returns the string member name of an extension method's
// params, or the problem with it: a member that is missing, null, not a
// string or empty (an id or a name that says nothing) is -32602 naming
// it.
func stringParam(params json.RawMessage, name string) (string, *inputError) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(params, &fields) != nil || fields == nil {
		return "", badParam("", "params must be an object with %s, got %s", name, kindOf(params))
	}
	raw, ok := fields[name]
	if !ok {
		return "", badParam(name, "missing")
	}
	var s string
	if kindOf(raw) != "string" || json.Unmarshal(raw, &s) != nil {
		return "", badParam(name, "must be a string, got %s", kindOf(raw))
	}
	if s == "" {
		return "", badParam(name, "must not be empty")
	}
	return s, nil
}
