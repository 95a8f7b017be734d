// Package sdkservers converts MCP server entries between acpgate's own
// type, [mcpservers.Server], and acp-go-sdk's McpServer, at the ACP edge:
// the agent (package acp) turns what the SDK decoded from session/new,
// load, resume and fork into servers, and the CLI client (cmd/acpcli)
// turns its servers into what it sends. It is the one place where the
// two shapes meet; the configuration and the server list parser stay
// free of acp-go-sdk.
package sdkservers

import (
	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/inputs/mcpservers"
	"github.com/acpgate/acpgate/mcpclient"
)

// ToSDK returns s as acp-go-sdk's McpServer, in the shape the SDK encodes
// as the schema says (arrays never nil; an acp server's serverId in the
// SDK's older field, Id). An entry of no transport gives the zero value.
func ToSDK(s mcpservers.Server) acpsdk.McpServer {
	switch s.Transport {
	case mcpclient.TransportStdio:
		return acpsdk.McpServer{Stdio: &acpsdk.McpServerStdio{Name: s.Name, Command: s.Command, Args: nonNil(s.Args), Env: envOf(s.Env)}}
	case mcpclient.TransportHTTP:
		return acpsdk.McpServer{Http: &acpsdk.McpServerHttpInline{Type: "http", Name: s.Name, Url: s.URL, Headers: headersOf(s.Headers)}}
	case mcpclient.TransportSSE:
		return acpsdk.McpServer{Sse: &acpsdk.McpServerSseInline{Type: "sse", Name: s.Name, Url: s.URL, Headers: headersOf(s.Headers)}}
	case mcpclient.TransportACP:
		return acpsdk.McpServer{Acp: &acpsdk.McpServerAcpInline{Type: "acp", Name: s.Name, Id: acpsdk.McpServerAcpId(s.ServerID)}}
	}
	return acpsdk.McpServer{}
}

// ToSDKList converts every entry of servers with [ToSDK]; never nil.
func ToSDKList(servers []mcpservers.Server) []acpsdk.McpServer {
	out := make([]acpsdk.McpServer, len(servers))
	for i, s := range servers {
		out[i] = ToSDK(s)
	}
	return out
}

// FromSDK returns the SDK's entry as a server; an empty entry has no
// transport (which mcpservers.Specs refuses, naming it).
func FromSDK(m acpsdk.McpServer) mcpservers.Server {
	switch {
	case m.Stdio != nil:
		env := make([]mcpservers.Pair, len(m.Stdio.Env))
		for i, e := range m.Stdio.Env {
			env[i] = mcpservers.Pair{Name: e.Name, Value: e.Value}
		}
		return mcpservers.Stdio(m.Stdio.Name, m.Stdio.Command, m.Stdio.Args, env)
	case m.Http != nil:
		return mcpservers.Remote(mcpclient.TransportHTTP, m.Http.Name, m.Http.Url, pairsOf(m.Http.Headers))
	case m.Sse != nil:
		return mcpservers.Remote(mcpclient.TransportSSE, m.Sse.Name, m.Sse.Url, pairsOf(m.Sse.Headers))
	case m.Acp != nil:
		return mcpservers.ACP(m.Acp.Name, string(m.Acp.Id))
	}
	return mcpservers.Server{}
}

// FromSDKList converts every entry of list with [FromSDK]; nil for nil.
func FromSDKList(list []acpsdk.McpServer) []mcpservers.Server {
	if list == nil {
		return nil
	}
	out := make([]mcpservers.Server, len(list))
	for i, m := range list {
		out[i] = FromSDK(m)
	}
	return out
}

// envOf returns pairs as the SDK's environment variables, never nil.
func envOf(ps []mcpservers.Pair) []acpsdk.EnvVariable {
	out := make([]acpsdk.EnvVariable, len(ps))
	for i, p := range ps {
		out[i] = acpsdk.EnvVariable{Name: p.Name, Value: p.Value}
	}
	return out
}

// headersOf returns pairs as the SDK's headers, never nil.
func headersOf(ps []mcpservers.Pair) []acpsdk.HttpHeader {
	out := make([]acpsdk.HttpHeader, len(ps))
	for i, p := range ps {
		out[i] = acpsdk.HttpHeader{Name: p.Name, Value: p.Value}
	}
	return out
}

// pairsOf returns the SDK's headers as pairs.
func pairsOf(hs []acpsdk.HttpHeader) []mcpservers.Pair {
	out := make([]mcpservers.Pair, len(hs))
	for i, h := range hs {
		out[i] = mcpservers.Pair{Name: h.Name, Value: h.Value}
	}
	return out
}

// nonNil returns xs, or an empty slice for nil.
func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}
