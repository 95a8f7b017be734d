package mcpservers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp/jsonrpc"
	"github.com/acpgate/acpgate/mcpclient"
)

// Stdio returns a stdio server entry whose args and env are never nil (the
// SDK would send nil as null, which it decodes as an http server).
func Stdio(name, command string, args []string, env []acpsdk.EnvVariable) acpsdk.McpServer {
	if args == nil {
		args = []string{}
	}
	if env == nil {
		env = []acpsdk.EnvVariable{}
	}
	return acpsdk.McpServer{Stdio: &acpsdk.McpServerStdio{Name: name, Command: command, Args: args, Env: env}}
}

// Remote returns an sse server entry for TransportSSE and an http one
// otherwise; its headers are never nil.
func Remote(t mcpclient.Transport, name, url string, headers []acpsdk.HttpHeader) acpsdk.McpServer {
	if headers == nil {
		headers = []acpsdk.HttpHeader{}
	}
	if t == mcpclient.TransportSSE {
		return acpsdk.McpServer{Sse: &acpsdk.McpServerSseInline{Type: "sse", Name: name, Url: url, Headers: headers}}
	}
	return acpsdk.McpServer{Http: &acpsdk.McpServerHttpInline{Type: "http", Name: name, Url: url, Headers: headers}}
}

// ACP returns an acp server entry (MCP over ACP): serverID, the schema's
// serverId, goes in the SDK's older field, id.
func ACP(name, serverID string) acpsdk.McpServer {
	return acpsdk.McpServer{Acp: &acpsdk.McpServerAcpInline{Type: "acp", Name: name, Id: acpsdk.McpServerAcpId(serverID)}}
}

// Name returns the name of any server entry ("" for an empty one).
func Name(s acpsdk.McpServer) string {
	switch {
	case s.Stdio != nil:
		return s.Stdio.Name
	case s.Http != nil:
		return s.Http.Name
	case s.Sse != nil:
		return s.Sse.Name
	case s.Acp != nil:
		return s.Acp.Name
	}
	return ""
}

// CheckNames returns an error wrapping ErrDuplicate, naming the server,
// when two entries of servers have the same name.
func CheckNames(servers []acpsdk.McpServer) error {
	seen := make(map[string]bool, len(servers))
	for _, s := range servers {
		n := Name(s)
		if seen[n] {
			return fmt.Errorf("%w %q (used twice)", ErrDuplicate, n)
		}
		seen[n] = true
	}
	return nil
}

// Specs converts entries into mcpclient specs, in order. An empty entry
// is an [*Error] at path[i] wrapping ErrUnsupportedType.
func Specs(servers []acpsdk.McpServer, path string) ([]mcpclient.ServerSpec, error) {
	specs := make([]mcpclient.ServerSpec, 0, len(servers))
	for i, s := range servers {
		var spec mcpclient.ServerSpec
		switch {
		case s.Stdio != nil:
			spec = mcpclient.ServerSpec{Name: s.Stdio.Name, Transport: mcpclient.TransportStdio, Command: s.Stdio.Command, Args: s.Stdio.Args}
			if len(s.Stdio.Env) > 0 {
				spec.Env = make(map[string]string, len(s.Stdio.Env))
				for _, e := range s.Stdio.Env {
					spec.Env[e.Name] = e.Value
				}
			}
		case s.Http != nil:
			spec = mcpclient.ServerSpec{Name: s.Http.Name, Transport: mcpclient.TransportHTTP, URL: s.Http.Url, Headers: headerMap(s.Http.Headers)}
		case s.Sse != nil:
			spec = mcpclient.ServerSpec{Name: s.Sse.Name, Transport: mcpclient.TransportSSE, URL: s.Sse.Url, Headers: headerMap(s.Sse.Headers)}
		case s.Acp != nil:
			spec = mcpclient.ServerSpec{Name: s.Acp.Name, Transport: mcpclient.TransportACP, ServerID: string(s.Acp.Id)}
		default:
			return nil, fail(fmt.Sprintf("%s[%d]", path, i), ErrUnsupportedType, "unsupported server type (acpgate takes stdio, http, sse and acp)")
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

// headerMap returns headers as a map, nil for none.
func headerMap(hs []acpsdk.HttpHeader) map[string]string {
	if len(hs) == 0 {
		return nil
	}
	m := make(map[string]string, len(hs))
	for _, h := range hs {
		m[h.Name] = h.Value
	}
	return m
}

// keyValue is one member of a JSON object.
type keyValue struct {
	key   string
	value json.RawMessage
}

// orderedObject decodes data, a valid JSON value at path, as an object,
// keeping its members in order (duplicates included).
func orderedObject(data []byte, path string) ([]keyValue, error) {
	if jsonrpc.Kind(data) != "object" {
		return nil, wrongKind(path, "an object", data)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // the '{'
		return nil, fail(path, fmt.Errorf("%w: %w", ErrSyntax, err), "not JSON: %v", err)
	}
	var out []keyValue
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fail(path, fmt.Errorf("%w: %w", ErrSyntax, err), "not JSON: %v", err)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fail(member(path, key), fmt.Errorf("%w: %w", ErrSyntax, err), "not JSON: %v", err)
		}
		out = append(out, keyValue{key: key, value: v})
	}
	if _, err := dec.Token(); err != nil && err != io.EOF {
		return nil, fail(path, fmt.Errorf("%w: %w", ErrSyntax, err), "not JSON: %v", err)
	}
	return out, nil
}
