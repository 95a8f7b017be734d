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

// renamed maps an ACP method to the extension method the input filter
// renames it to.
var renamed = map[string]string{
	// The SDK's InitializeResponse has no sessionCapabilities.delete.
	acpsdk.AgentMethodInitialize: "_acpgate/initialize",
	// Newer than the SDK: it answers -32601.
	methodSessionDelete: "_acpgate/session/delete",
	// Served as session/new is, with its types (the SDK's unstable fork
	// types differ from them, not in JSON).
	acpsdk.AgentMethodSessionFork: "_acpgate/session/fork",
	// The SDK's types name the provider "id"; the schema "providerId".
	acpsdk.AgentMethodProvidersList:    "_acpgate/providers/list",
	acpsdk.AgentMethodProvidersSet:     "_acpgate/providers/set",
	acpsdk.AgentMethodProvidersDisable: "_acpgate/providers/disable",
}

// methodSessionDelete is session/delete (stable in ACP v1 since June
// 2026; acp-go-sdk v0.13.0 does not know it).
const methodSessionDelete = "session/delete"

// HandleExtensionMethod implements acpsdk.ExtensionMethodHandler: it
// serves the methods the input filter renamed (see renamed); any other
// extension method is not found.
func (a *Agent) HandleExtensionMethod(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case renamed[acpsdk.AgentMethodInitialize]:
		return a.initialize(ctx, params)
	case renamed[methodSessionDelete]:
		return a.deleteSession(ctx, params)
	case renamed[acpsdk.AgentMethodSessionFork]:
		return a.forkSession(ctx, params)
	case renamed[acpsdk.AgentMethodProvidersList]:
		return a.listProviders()
	case renamed[acpsdk.AgentMethodProvidersSet]:
		return a.setProvider(params)
	case renamed[acpsdk.AgentMethodProvidersDisable]:
		return a.disableProvider(params)
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
// params, or the problem with it.
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
	if json.Unmarshal(raw, &s) != nil {
		return "", badParam(name, "must be a string, got %s", kindOf(raw))
	}
	return s, nil
}
