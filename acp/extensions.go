package acp

import (
	"context"
	"encoding/json"

	acpsdk "github.com/coder/acp-go-sdk"
)

// This file is how the ACP methods acp-go-sdk v0.13.0 cannot serve as the
// schema has them reach the agent: the input filter renames each to an
// extension method (the SDK hands those to HandleExtensionMethod with
// their params as sent, and answers with the request's id), and
// HandleExtensionMethod serves them.

// methodSessionDelete is session/delete (stable in ACP v1 since June
// 2026; acp-go-sdk v0.13.0 does not know it).
const methodSessionDelete = "session/delete"

// The extension methods the input filter renames ACP methods to.
const (
	extInitialize       = "_acpgate/initialize"
	extSessionDelete    = "_acpgate/session/delete"
	extSessionFork      = "_acpgate/session/fork"
	extProvidersList    = "_acpgate/providers/list"
	extProvidersSet     = "_acpgate/providers/set"
	extProvidersDisable = "_acpgate/providers/disable"
)

// extensionFor returns the extension method the input filter renames ACP
// method to (sent as a notification or not), if it renames it.
func extensionFor(method string, notification bool) (string, bool) {
	switch method {
	case acpsdk.AgentMethodMcpMessage:
		// MCP over ACP: the SDK can route it with neither its name nor
		// the schema's fields (raw.go).
		return sdkName(method, notification), true
	case acpsdk.AgentMethodInitialize:
		// The SDK's InitializeResponse has no sessionCapabilities.delete.
		return extInitialize, true
	case methodSessionDelete:
		// Newer than the SDK, which answers -32601.
		return extSessionDelete, true
	case acpsdk.AgentMethodSessionFork:
		// Served as session/new is, with its types (the SDK's unstable
		// fork types differ from them, not in JSON).
		return extSessionFork, true
	case acpsdk.AgentMethodProvidersList:
		// The SDK's provider types have "id"; the schema "providerId".
		return extProvidersList, true
	case acpsdk.AgentMethodProvidersSet:
		return extProvidersSet, true
	case acpsdk.AgentMethodProvidersDisable:
		return extProvidersDisable, true
	}
	return "", false
}

// HandleExtensionMethod implements acpsdk.ExtensionMethodHandler: it
// serves the methods the input filter renamed (see extensionFor); any
// other extension method is not found.
func (a *Agent) HandleExtensionMethod(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case extInitialize:
		return a.initialize(ctx, params)
	case extSessionDelete:
		return a.deleteSession(ctx, params)
	case extSessionFork:
		return a.forkSession(ctx, params)
	case extProvidersList:
		return a.listProviders()
	case extProvidersSet:
		return a.setProvider(params)
	case extProvidersDisable:
		return a.disableProvider(params)
	case sdkName(acpsdk.AgentMethodMcpMessage, false):
		return a.tunnel.message(ctx, params, true)
	case sdkName(acpsdk.AgentMethodMcpMessage, true):
		return a.tunnel.message(ctx, params, false)
	}
	return nil, acpsdk.NewMethodNotFound(method)
}

var _ acpsdk.ExtensionMethodHandler = (*Agent)(nil)

// initialize answers initialize as the SDK would (Initialize), adding
// sessionCapabilities.delete, which its types cannot carry.
func (a *Agent) initialize(ctx context.Context, params json.RawMessage) (any, error) {
	var p acpsdk.InitializeRequest
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, acpsdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	if err := p.Validate(); err != nil {
		return nil, acpsdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	resp, err := a.Initialize(ctx, p)
	if err != nil {
		return nil, err
	}
	return withMember(resp, []string{"agentCapabilities", "sessionCapabilities"}, "delete", struct{}{})
}

// withMember returns v as JSON with member name set to value in the object
// at path (created where missing).
func withMember(v any, path []string, name string, value any) (json.RawMessage, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, err
	}
	if obj == nil {
		obj = map[string]json.RawMessage{}
	}
	if len(path) == 0 {
		obj[name], err = json.Marshal(value)
	} else {
		inner, ok := obj[path[0]]
		if !ok {
			inner = json.RawMessage("{}")
		}
		obj[path[0]], err = withMember(inner, path[1:], name, value)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(obj)
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
