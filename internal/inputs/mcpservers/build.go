package mcpservers

import (
	"encoding/json"
	"fmt"

	"github.com/acpgate/acpgate/mcpclient"
)

// Server is one MCP server entry as the ACP schema lists it in
// session/new's mcpServers: a stdio server (Command, Args, Env), an http or
// sse one (URL, Headers) or an acp one (ServerID, MCP over ACP). It is
// acpgate's own type, so that the configuration and the CLI client need
// not import acp-go-sdk; package acp/sdkservers converts it at the ACP
// edge. Its JSON is the ACP schema's shape ([Server.MarshalJSON]); a value
// is built with [Stdio], [Remote] or [ACP], or parsed ([ParseList]).
type Server struct {
	Name      string
	Transport mcpclient.Transport
	Command   string
	Args      []string
	Env       []Pair
	URL       string
	Headers   []Pair
	ServerID  string
}

// Pair is one environment variable or HTTP header of a [Server].
type Pair struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Stdio returns a stdio server entry whose args and env are never nil (a
// nil array would be sent as null, which acp-go-sdk decodes as an http
// server).
func Stdio(name, command string, args []string, env []Pair) Server {
	if args == nil {
		args = []string{}
	}
	if env == nil {
		env = []Pair{}
	}
	return Server{Name: name, Transport: mcpclient.TransportStdio, Command: command, Args: args, Env: env}
}

// Remote returns an sse server entry for TransportSSE and an http one
// otherwise; its headers are never nil.
func Remote(t mcpclient.Transport, name, url string, headers []Pair) Server {
	if headers == nil {
		headers = []Pair{}
	}
	if t != mcpclient.TransportSSE {
		t = mcpclient.TransportHTTP
	}
	return Server{Name: name, Transport: t, URL: url, Headers: headers}
}

// ACP returns an acp server entry (MCP over ACP) with the schema's
// serverId.
func ACP(name, serverID string) Server {
	return Server{Name: name, Transport: mcpclient.TransportACP, ServerID: serverID}
}

// MarshalJSON writes the entry in the ACP schema's shape, members sorted:
// {"args", "command", "env", "name"} for stdio, {"headers", "name",
// "type", "url"} for http and sse, {"name", "serverId", "type"} for acp.
// An entry of no transport is an error.
func (s Server) MarshalJSON() ([]byte, error) {
	switch s.Transport {
	case mcpclient.TransportStdio:
		return json.Marshal(struct {
			Args    []string `json:"args"`
			Command string   `json:"command"`
			Env     []Pair   `json:"env"`
			Name    string   `json:"name"`
		}{nonNil(s.Args), s.Command, nonNil(s.Env), s.Name})
	case mcpclient.TransportHTTP, mcpclient.TransportSSE:
		return json.Marshal(struct {
			Headers []Pair `json:"headers"`
			Name    string `json:"name"`
			Type    string `json:"type"`
			URL     string `json:"url"`
		}{nonNil(s.Headers), s.Name, string(s.Transport), s.URL})
	case mcpclient.TransportACP:
		return json.Marshal(struct {
			Name     string `json:"name"`
			ServerID string `json:"serverId"`
			Type     string `json:"type"`
		}{s.Name, s.ServerID, "acp"})
	}
	return nil, fmt.Errorf("%w %q (server %q)", ErrUnsupportedType, s.Transport, s.Name)
}

// UnmarshalJSON reads one entry with [ParseList]'s rules (acp entries
// accepted); the error is an [*Error].
func (s *Server) UnmarshalJSON(data []byte) error {
	list, err := ParseList(append(append([]byte{'['}, data...), ']'), "", Options{ACP: true})
	if err != nil {
		return err
	}
	*s = list[0]
	return nil
}

// nonNil returns xs, or an empty slice for nil.
func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// CheckNames returns an error wrapping ErrDuplicate, naming the server,
// when two entries of servers have the same name.
func CheckNames(servers []Server) error {
	seen := make(map[string]bool, len(servers))
	for _, s := range servers {
		if seen[s.Name] {
			return fmt.Errorf("%w %q (used twice)", ErrDuplicate, s.Name)
		}
		seen[s.Name] = true
	}
	return nil
}

// Specs converts entries into mcpclient specs, in order. An entry of no
// transport is an [*Error] at path[i] wrapping ErrUnsupportedType.
func Specs(servers []Server, path string) ([]mcpclient.ServerSpec, error) {
	specs := make([]mcpclient.ServerSpec, 0, len(servers))
	for i, s := range servers {
		spec := mcpclient.ServerSpec{Name: s.Name, Transport: s.Transport}
		switch s.Transport {
		case mcpclient.TransportStdio:
			spec.Command, spec.Args, spec.Env = s.Command, s.Args, pairMap(s.Env)
		case mcpclient.TransportHTTP, mcpclient.TransportSSE:
			spec.URL, spec.Headers = s.URL, pairMap(s.Headers)
		case mcpclient.TransportACP:
			spec.ServerID = s.ServerID
		default:
			return nil, fail(fmt.Sprintf("%s[%d]", path, i), ErrUnsupportedType, "unsupported server type (acpgate takes stdio, http, sse and acp)")
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

// pairMap returns pairs as a map, nil for none.
func pairMap(ps []Pair) map[string]string {
	if len(ps) == 0 {
		return nil
	}
	m := make(map[string]string, len(ps))
	for _, p := range ps {
		m[p.Name] = p.Value
	}
	return m
}
