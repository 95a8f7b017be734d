package mcpservers

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acpgate/acpgate/acp/jsonrpc"
)

// The errors an [*Error] wraps, one a kind of problem. A bad URL wraps
// mcpclient's URL sentinels instead (mcpclient.ErrURLScheme, ...).
var (
	// ErrSyntax: the document is not JSON (or is empty).
	ErrSyntax = errors.New("not a JSON document")
	// ErrKind: a value has the wrong JSON type ("must be a string, got number").
	ErrKind = errors.New("wrong JSON type")
	// ErrMissing: a required member is absent.
	ErrMissing = errors.New("missing")
	// ErrEmpty: a name or string that must say something is blank.
	ErrEmpty = errors.New("empty")
	// ErrDuplicate: two servers have the same name.
	ErrDuplicate = errors.New("duplicate server name")
	// ErrUnsupportedType: a "type" names no transport acpgate speaks.
	ErrUnsupportedType = errors.New("unsupported server type")
	// ErrNoTransport: an entry has neither a command nor a url.
	ErrNoTransport = errors.New("neither a command nor a url")
)

// Error is what is wrong with an mcpServers document, at a JSON path. It
// is immutable once made.
type Error struct {
	// Path is the JSON path of the offending value, as
	// "mcpServers[0].env.TOKEN", `mcpServers["my server"].args[1]`,
	// "[2].url" (a list at the top of a file); "" for the document.
	Path string
	// Problem says what is wrong, as "must be a string, got number". It
	// never quotes an env or header value (they may be secrets).
	Problem string
	// Err is the kind of problem: one of this package's sentinels or an
	// error of mcpclient.CheckURL.
	Err error
}

// Error returns "PATH: PROBLEM" (just PROBLEM when Path is "").
func (e *Error) Error() string {
	if e.Path == "" {
		return e.Problem
	}
	return e.Path + ": " + e.Problem
}

// Unwrap returns the kind of problem, for errors.Is.
func (e *Error) Unwrap() error { return e.Err }

// fail makes an *Error of kind err at path.
func fail(path string, err error, format string, args ...any) *Error {
	return &Error{Path: path, Problem: fmt.Sprintf(format, args...), Err: err}
}

// wrongKind is an ErrKind error: the value raw at path is not what want
// says.
func wrongKind(path, want string, raw json.RawMessage) *Error {
	return fail(path, ErrKind, "must be %s, got %s", want, jsonrpc.Kind(raw))
}

// present reports whether a member is there and not null.
func present(raw json.RawMessage, ok bool) bool { return ok && jsonrpc.Kind(raw) != "null" }

// member is the path of key in the object at path: ".key" for keys of
// letters, digits, '_' and '-' (just key at the top), else ["key"].
func member(path, key string) string {
	plain := key != ""
	for _, r := range key {
		if !(r == '_' || r == '-' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			plain = false
		}
	}
	switch {
	case !plain:
		return fmt.Sprintf("%s[%q]", path, key)
	case path == "":
		return key
	}
	return path + "." + key
}
