package mcpclient

import (
	"context"
	"encoding/json"
	"maps"
	"strconv"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/acpgate/acpgate/internal/base/telemetry"
	"github.com/acpgate/acpgate/mcpclient/wire"
)

// requestTrace is what the wrapped transport does for telemetry: a span
// per request (when tel is on), and the trace context of the request's
// context in its params' _meta (traceparent, tracestate, baggage at the
// root; MCP SEP-414), with telemetry off too. The zero value passes the
// context on and records nothing.
type requestTrace struct {
	tel    *telemetry.Telemetry
	server string
}

// start returns req with the trace context of its span, or of ctx, in its
// _meta, and the span (nil when telemetry is off).
func (rt requestTrace) start(ctx context.Context, tr transport.Interface, req transport.JSONRPCRequest) (context.Context, transport.JSONRPCRequest, *telemetry.Span) {
	if rt.tel == nil && !telemetry.Has(ctx) {
		return ctx, req, nil // nothing to record, nothing to pass on
	}
	params, ok := paramsObject(req.Params)
	var span *telemetry.Span
	if rt.tel != nil {
		ctx, span = rt.tel.StartMCP(ctx, telemetry.MCPRequest{
			Server: rt.server, Transport: string(transportOf(tr)), Method: req.Method,
			Target: target(req.Method, params), SessionID: tr.GetSessionId(),
		})
	}
	if ok {
		if fields := telemetry.MetaFields(ctx); fields != nil && withMeta(params, fields) {
			req.Params = params
		}
	}
	return ctx, req, span
}

// end ends span with the request's outcome: a transport error, a JSON-RPC
// error (error.type: its code), or a tool result that is an error.
func (rt requestTrace) end(ctx context.Context, span *telemetry.Span, resp *transport.JSONRPCResponse, err error) {
	if span == nil {
		return
	}
	if err == nil && resp != nil && resp.Error != nil {
		span.Fail(strconv.Itoa(resp.Error.Code), resp.Error.Message)
	}
	span.End(ctx, err)
}

// transportOf names the transport tr is.
func transportOf(tr transport.Interface) Transport {
	switch tr.(type) {
	case *wire.StdioTransport:
		return TransportStdio
	case *tunnelTransport:
		return TransportACP
	case *transport.SSE:
		return TransportSSE
	}
	return TransportHTTP
}

// paramsObject returns params as a JSON object of its own (a copy the
// caller may change), or false when they are not an object.
func paramsObject(params any) (map[string]json.RawMessage, bool) {
	switch p := params.(type) {
	case nil:
		return map[string]json.RawMessage{}, true
	case map[string]json.RawMessage:
		return maps.Clone(p), true
	}
	b, err := json.Marshal(params)
	if err != nil {
		return nil, false
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(b, &obj) != nil || obj == nil {
		return nil, false
	}
	return obj, true
}

// withMeta sets fields at the root of params' _meta, keeping what it
// holds; false when its _meta is not an object.
func withMeta(params map[string]json.RawMessage, fields map[string]string) bool {
	meta := map[string]json.RawMessage{}
	if raw, ok := params["_meta"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &meta) != nil || meta == nil {
			return false
		}
	}
	for k, v := range fields {
		b, err := json.Marshal(v)
		if err != nil {
			return false
		}
		meta[k] = b
	}
	b, err := json.Marshal(meta)
	if err != nil {
		return false
	}
	params["_meta"] = b
	return true
}

// target is the span name's target of a request (MCP conventions): the
// tool of tools/call, the prompt of prompts/get, the resource of
// resources/read and (un)subscribe; "" for other methods.
func target(method string, params map[string]json.RawMessage) string {
	key := ""
	switch mcp.MCPMethod(method) {
	case mcp.MethodToolsCall, mcp.MethodPromptsGet:
		key = "name"
	case mcp.MethodResourcesRead, mcp.MethodResourcesSubscribe, mcp.MethodResourcesUnsubscribe:
		key = "uri"
	default:
		return ""
	}
	var s string
	if json.Unmarshal(params[key], &s) != nil {
		return ""
	}
	return s
}
