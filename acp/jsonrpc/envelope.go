package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// This file is what a line read must be to be handled: a JSON object
// that is a JSON-RPC 2.0 request, notification or response, its members
// spelled exactly. Each problem is answered with an error naming the
// member at fault.

// kind is what a message read is.
type kind int

const (
	kindRequest      kind = iota // method and id: answered
	kindNotification             // method, no id: never answered
	kindResponse                 // result or error, no method: answers one of ours
)

// envelope is a message decoded just enough to route it. Its members are
// the exact members of the message (JSON member names are matched
// case-sensitively here, unlike encoding/json's decoding into a struct).
type envelope struct {
	kind   kind
	id     json.RawMessage // a string or a number, or nil (answered with null)
	method string
	params json.RawMessage
	result json.RawMessage
	err    json.RawMessage
}

// View is raw JSON that, decoded by encoding/json, refers to the bytes it
// was decoded from instead of copying them as json.RawMessage does
// (encoding/json hands UnmarshalJSON a part of its input): a member of a
// message costs nothing beyond the line read. Decode into a View only
// input that is not changed afterwards, as a line the Conn read is not:
// the members of a Request and the result a Call decodes from are views
// of their line. Its capacity ends with it, so an append copies.
type View []byte

// UnmarshalJSON keeps b itself.
func (v *View) UnmarshalJSON(b []byte) error {
	*v = b[:len(b):len(b)]
	return nil
}

// Problem builds the error answering a message (or its params) whose
// member at path is wrong: code is CodeInvalidRequest or CodeInvalidParams,
// path the member ("" for the message as a whole), problem what is wrong.
// The message reads "Invalid Request: PATH: PROBLEM" (or "Invalid params:
// …"); data is {"path": PATH, "error": "PATH: PROBLEM"}.
func Problem(code int, path, problem string) *Error {
	title := "Invalid Request"
	if code == CodeInvalidParams {
		title = "Invalid params"
	}
	text := problem
	if path != "" {
		text = path + ": " + problem
	}
	data, _ := json.Marshal(map[string]string{"path": path, "error": text})
	return &Error{Code: code, Message: title + ": " + text, Data: data}
}

// parse decodes one line into an envelope, or returns the error answering
// it (with the id to answer with, nil for null). The envelope's members
// are views of line (View), which is not changed afterwards.
func parse(line []byte) (envelope, json.RawMessage, *Error) {
	var fields map[string]View
	if err := json.Unmarshal(line, &fields); err != nil || fields == nil {
		id, _ := LeadingID(line) // JSON up to its id (nested too deep after it, say)
		if !json.Valid(line) {
			msg := "Parse error"
			if err != nil {
				msg += ": " + err.Error()
			}
			return envelope{}, id, &Error{Code: CodeParseError, Message: msg}
		}
		problem := "a message must be a JSON object, got " + Kind(line)
		if Kind(line) == "array" {
			problem += " (batches are not supported)"
		}
		return envelope{}, nil, Problem(CodeInvalidRequest, "", problem)
	}
	e, perr := check(fields)
	return e, e.id, perr
}

// check classifies a message (a JSON object) and checks it is a JSON-RPC
// 2.0 request, notification or response.
func check(fields map[string]View) (envelope, *Error) {
	e := envelope{params: json.RawMessage(fields["params"]), result: json.RawMessage(fields["result"]), err: json.RawMessage(fields["error"])}
	raw, hasID := fields["id"]
	rawID := json.RawMessage(raw)
	idKind := Kind(rawID)
	if hasID && (idKind == "string" || idKind == "number") {
		e.id = rawID
	}
	method, hasMethod := fields["method"]
	rawMethod := json.RawMessage(method)
	_, hasResult := fields["result"]
	_, hasError := fields["error"]
	if !hasMethod && (hasResult || hasError) {
		e.kind = kindResponse
		return e, nil
	}
	e.kind = kindRequest
	if !hasID {
		e.kind = kindNotification
	}
	switch {
	case !hasMethod:
		return e, Problem(CodeInvalidRequest, "method", "missing (a request needs a method; a response needs a result or an error)")
	case json.Unmarshal(rawMethod, &e.method) != nil:
		return e, Problem(CodeInvalidRequest, "method", "must be a string, got "+Kind(rawMethod))
	case e.method == "":
		return e, Problem(CodeInvalidRequest, "method", "must not be empty")
	}
	if hasID && e.id == nil {
		return e, Problem(CodeInvalidRequest, "id", "must be a string or a number, got "+idKind)
	}
	var version string
	if v, ok := fields["jsonrpc"]; !ok {
		return e, Problem(CodeInvalidRequest, "jsonrpc", `missing: must be "2.0"`)
	} else if json.Unmarshal(v, &version) != nil || version != "2.0" {
		return e, Problem(CodeInvalidRequest, "jsonrpc", `must be "2.0", got `+Clip(json.RawMessage(v)))
	}
	return e, nil
}

// repairError returns the error member of a response as an *Error: one
// that is not an object with an integer code and a string message becomes
// an internal error saying so (repaired true), so that the call it
// answers fails instead of waiting forever.
func repairError(raw json.RawMessage) (e *Error, repaired bool) {
	var got struct {
		Code    *int            `json:"code"`
		Message *string         `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if json.Unmarshal(raw, &got) == nil && got.Code != nil && got.Message != nil {
		return &Error{Code: *got.Code, Message: *got.Message, Data: got.Data}, false
	}
	return &Error{Code: CodeInternalError, Message: fmt.Sprintf(
		"Internal error: the peer answered with a malformed error (want an object with an integer code and a string message, got %s)", Kind(raw))}, true
}

// Kind names the JSON type of a raw value for error messages: object,
// array, string, boolean, null, number, or "nothing" for no value. It
// looks at the first byte only (the value is assumed to be valid JSON).
// It is the project's one rule for naming a JSON type (the server list's
// errors use it too).
func Kind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}

// Clip quotes a short JSON value for an error message, cut to 40 bytes.
func Clip(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

// LeadingID returns the id of a message that is cut short or not JSON as
// a whole (too long, nested too deep) when its id is a string or a number
// among the members before its params (or result, error): those are all
// that is read. ok reports whether the id came before a result or an
// error member, that is whether the message is a response.
func LeadingID(line []byte) (id json.RawMessage, response bool) {
	id, at := leadingMembers(line, "params", "result", "error")
	if k := Kind(id); id == nil || (k != "string" && k != "number") {
		return nil, false
	}
	return id, at == "result" || at == "error"
}

// leadingMembers reads the top-level members of the JSON object frame
// starts with, in order, each whole, until one named in stop (at: its
// name; its value is not read), the object's end or the first member
// that does not decode (at: ""). It returns the id member if one came
// before.
func leadingMembers(frame []byte, stop ...string) (id json.RawMessage, at string) {
	dec := json.NewDecoder(bytes.NewReader(frame))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, ""
	}
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return id, ""
		}
		if slices.Contains(stop, key) {
			return id, key
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return id, ""
		}
		if key == "id" {
			id = v
		}
	}
	return id, ""
}
