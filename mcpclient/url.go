package mcpclient

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// The errors CheckURL wraps, one a rule it enforces.
var (
	// ErrURLMissing: the URL is empty.
	ErrURLMissing = errors.New("missing URL")
	// ErrURLSyntax: the URL does not parse.
	ErrURLSyntax = errors.New("malformed URL")
	// ErrURLScheme: the scheme is not http or https.
	ErrURLScheme = errors.New("scheme must be http or https")
	// ErrURLHost: the URL names no host (it is not absolute).
	ErrURLHost = errors.New("URL has no host")
	// ErrInsecureHTTP: plain http to a host that is not a loopback host,
	// while insecure http is not allowed.
	ErrInsecureHTTP = errors.New("plain http is only allowed to a loopback host; use https or allow insecure http")
)

// CheckURL is acpgate's one rule for the URL of an MCP server or a model
// endpoint: an absolute http or https URL with a host; plain http only to a
// loopback host (localhost, 127.0.0.0/8, ::1) unless allowInsecureHTTP is
// set. The error names the URL and wraps one of ErrURLMissing,
// ErrURLSyntax, ErrURLScheme, ErrURLHost and ErrInsecureHTTP. It is safe
// for concurrent use.
func CheckURL(raw string, allowInsecureHTTP bool) error {
	if raw == "" {
		return ErrURLMissing
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("URL %q: %w: %w", raw, ErrURLSyntax, err)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if u.Host != "" && !allowInsecureHTTP && !isLoopbackHost(u.Hostname()) {
			return fmt.Errorf("URL %q: %w", raw, ErrInsecureHTTP)
		}
	default:
		return fmt.Errorf("URL %q: %w", raw, ErrURLScheme)
	}
	if u.Host == "" {
		return fmt.Errorf("URL %q: %w", raw, ErrURLHost)
	}
	return nil
}

// isLoopbackHost reports whether host names this machine's loopback.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
