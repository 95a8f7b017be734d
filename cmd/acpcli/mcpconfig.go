package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/acpgate/acpgate/internal/inputs/mcpservers"
	"github.com/acpgate/acpgate/mcpclient"
)

// cutNamed splits a "name=value" flag argument.
func cutNamed(v, what string) (name, value string, err error) {
	name, value, ok := strings.Cut(v, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.TrimSpace(value) == "" {
		return "", "", fmt.Errorf("want name=%s, got %q", what, v)
	}
	return name, value, nil
}

// parseStdioFlag parses the value of --mcp: name='command args'.
func parseStdioFlag(v string) (mcpservers.Server, error) {
	name, cmdline, err := cutNamed(v, "'command args'")
	if err != nil {
		return mcpservers.Server{}, err
	}
	words, err := mcpservers.SplitCommand(cmdline)
	if err != nil {
		return mcpservers.Server{}, fmt.Errorf("server %q: %w", name, err)
	}
	return mcpservers.Stdio(name, words[0], words[1:], nil), nil
}

// parseURLFlag parses the value of --mcp-http or --mcp-sse (kind http or
// sse): name=url. The url follows mcpclient.CheckURL with plain http to
// any host allowed: the agent applies its own policy.
func parseURLFlag(kind mcpclient.Transport, v string) (mcpservers.Server, error) {
	name, u, err := cutNamed(v, "url")
	if err != nil {
		return mcpservers.Server{}, err
	}
	if err := mcpclient.CheckURL(u, true); err != nil {
		return mcpservers.Server{}, fmt.Errorf("server %q: %w", name, err)
	}
	return mcpservers.Remote(kind, name, u, nil), nil
}

// loadMCPConfig reads an MCP configuration file in any shape
// mcpservers.Parse takes: the ACP-shaped JSON list that session/new takes,
// or an object with "mcpServers" (Claude Desktop, Cursor) or "servers" (VS
// Code) mapping names to servers. URLs are checked as --mcp-http's are.
// The error names the file and wraps an
// *mcpservers.Error naming the JSON path.
func loadMCPConfig(path string) ([]mcpservers.Server, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read MCP config: %w", err)
	}
	servers, err := mcpservers.Parse(data, mcpservers.Options{CheckURLs: true, AllowInsecureHTTP: true})
	if err != nil {
		return nil, fmt.Errorf("MCP config %s: %w", path, err)
	}
	return servers, nil
}
