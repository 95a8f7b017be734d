package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp/mcpservers"
)

// This file is what the input filter checks: the JSON-RPC envelope, the
// prompt's content blocks and the mcpServers of session/new and load,
// each bad field answered with an error naming it.

// JSON-RPC error codes the input filter answers with.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeInvalidParams  = -32602
)

// inputError is what is wrong with one client message, found by the input
// filter before the SDK sees the message. It is immutable once made.
type inputError struct {
	// Code is the JSON-RPC error code: codeInvalidRequest for a message
	// that is not a valid request, codeInvalidParams for bad params.
	Code int
	// Path is the JSON path of the offending member: relative to the
	// message for codeInvalidRequest ("jsonrpc", "method"), relative to
	// params for codeInvalidParams ("mcpServers[0].args"); "" for the
	// message as a whole.
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

// rpcError is the JSON-RPC error object answering e.
func (e *inputError) rpcError() *acpsdk.RequestError {
	title := "Invalid Request"
	if e.Code == codeInvalidParams {
		title = "Invalid params"
	}
	return &acpsdk.RequestError{Code: e.Code, Message: title + ": " + e.Error(), Data: map[string]any{"path": e.Path, "error": e.Error()}}
}

func invalidRequest(path, format string, args ...any) *inputError {
	return &inputError{Code: codeInvalidRequest, Path: path, Problem: fmt.Sprintf(format, args...)}
}

func badParam(path, format string, args ...any) *inputError {
	return &inputError{Code: codeInvalidParams, Path: path, Problem: fmt.Sprintf(format, args...)}
}

// kindOf names the JSON type of a raw value, for error messages.
func kindOf(raw json.RawMessage) string { return mcpservers.JSONKind(raw) }

// msgKind is what a client message is.
type msgKind int

const (
	kindRequest      msgKind = iota // method and id: answered
	kindNotification                // method, no id: never answered
	kindResponse                    // result or error, no method: answers one of ours
)

// envelope is a client message decoded just enough to route and check it.
type envelope struct {
	kind   msgKind
	id     json.RawMessage // the id to answer with: a string or a number, or nil (null)
	method string
}

// checkEnvelope classifies a message (a JSON object) and checks it is a
// JSON-RPC 2.0 request, notification or response. An invalid request gets
// an *inputError; e.id is then the id to answer with (nil when the message
// has no usable id: JSON-RPC answers such messages with a null id).
func checkEnvelope(fields map[string]json.RawMessage) (envelope, *inputError) {
	var e envelope
	rawID, hasID := fields["id"]
	idKind := kindOf(rawID)
	if hasID && (idKind == "string" || idKind == "number") {
		e.id = rawID
	}
	rawMethod, hasMethod := fields["method"]
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
		return e, invalidRequest("method", "missing (a request needs a method; a response needs a result or an error)")
	case json.Unmarshal(rawMethod, &e.method) != nil:
		return e, invalidRequest("method", "must be a string, got %s", kindOf(rawMethod))
	case e.method == "":
		return e, invalidRequest("method", "must not be empty")
	}
	if hasID && e.id == nil {
		return e, invalidRequest("id", "must be a string or a number, got %s", idKind)
	}
	var version string
	if v, ok := fields["jsonrpc"]; !ok {
		return e, invalidRequest("jsonrpc", `missing: must be "2.0"`)
	} else if json.Unmarshal(v, &version) != nil || version != "2.0" {
		return e, invalidRequest("jsonrpc", `must be "2.0", got %s`, clip(v))
	}
	return e, nil
}

// clip quotes a short JSON value for an error message, cut to 40 bytes.
func clip(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

// needsID reports whether method is an ACP request the agent serves: sent
// without an id (as a notification) it would run with nobody to answer,
// e.g. a session/new would start MCP servers no one knows of.
func needsID(method string) bool {
	switch method {
	case acpsdk.AgentMethodInitialize, acpsdk.AgentMethodAuthenticate,
		acpsdk.AgentMethodSessionNew, acpsdk.AgentMethodSessionLoad, acpsdk.AgentMethodSessionResume,
		acpsdk.AgentMethodSessionList, acpsdk.AgentMethodSessionClose, acpsdk.AgentMethodSessionPrompt,
		acpsdk.AgentMethodSessionSetMode, acpsdk.AgentMethodSessionSetConfigOption,
		acpsdk.AgentMethodSessionFork, methodSessionDelete,
		acpsdk.AgentMethodProvidersList, acpsdk.AgentMethodProvidersSet, acpsdk.AgentMethodProvidersDisable:
		return true
	}
	return false
}

// repairError makes the error member of a response decodable: the SDK
// drops a whole response whose error is not an object with an integer
// code and a string message, and the request it answers then waits
// forever. Such an error becomes an internal error saying so; ok is false
// if it needed no repair.
func repairError(raw json.RawMessage) (fixed json.RawMessage, ok bool) {
	var e struct {
		Code    *int    `json:"code"`
		Message *string `json:"message"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Code != nil && e.Message != nil {
		return nil, false
	}
	fixed, _ = json.Marshal(acpsdk.RequestError{Code: -32603, Message: fmt.Sprintf(
		"Internal error: the client answered with a malformed error (want an object with an integer code and a string message, got %s)", kindOf(raw))})
	return fixed, true
}

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
// shape acp-go-sdk decodes as intended (see mcpservers.ParseList: the
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
		p["mcpServers"], _ = json.Marshal(servers)
	}
	fixed, err := json.Marshal(p)
	if err != nil {
		return nil, badParam("", "%v", err)
	}
	return fixed, nil
}

// paramsType returns a new value of the Go type a method's params decode
// into, for checkParamTypes; nil for a method whose params are not
// checked here.
func paramsType(method string) any {
	switch method {
	case acpsdk.AgentMethodInitialize:
		return new(acpsdk.InitializeRequest)
	case acpsdk.AgentMethodSessionNew:
		return new(acpsdk.NewSessionRequest)
	case acpsdk.AgentMethodSessionLoad:
		return new(acpsdk.LoadSessionRequest)
	case acpsdk.AgentMethodSessionResume:
		return new(acpsdk.ResumeSessionRequest)
	case acpsdk.AgentMethodSessionFork:
		return new(acpsdk.UnstableForkSessionRequest)
	case acpsdk.AgentMethodSessionPrompt:
		return new(acpsdk.PromptRequest)
	case acpsdk.AgentMethodSessionCancel:
		return new(acpsdk.CancelNotification)
	case acpsdk.AgentMethodSessionClose:
		return new(acpsdk.CloseSessionRequest)
	case acpsdk.AgentMethodSessionList:
		return new(acpsdk.ListSessionsRequest)
	case acpsdk.AgentMethodSessionSetMode:
		return new(acpsdk.SetSessionModeRequest)
	case acpsdk.AgentMethodProvidersSet:
		return new(acpsdk.UnstableSetProvidersRequest)
	case acpsdk.AgentMethodMcpMessage:
		return new(messageParams)
	}
	return nil
}

// checkParamTypes checks that a request's params are an object whose
// members have the JSON types the method's params type gives them, so
// that a member of the wrong type ("sessionId": 7) is answered with
// -32602 naming it (data.path) instead of the decoder's text. What else
// the decoder would refuse is left to the method's handler. Absent or
// null params are left to it too.
func checkParamTypes(method string, params json.RawMessage) *inputError {
	v := paramsType(method)
	if v == nil || len(params) == 0 || kindOf(params) == "null" {
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
