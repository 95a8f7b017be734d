// Package wire is where mcpclient meets mark3labs/mcp-go's transports: what
// it replaces or wraps in mcp-go, and why, so that the rest of mcpclient
// reads as servers, roles and the Manager, and a reader learns here at once
// what mcp-go does and where acpgate overrides it.
//
// mcp-go reads what a server sends without a bound: an HTTP response body
// whole, an event of an event stream line by line, as fast as the server
// writes. A hostile or broken server could so exhaust acpgate's memory or
// CPU. This package bounds it (docs/mcp-servers.md says what a server may
// send; docs/benchmarks.md's mcpclient sections measure the bounds):
//
//   - BoundedBodies, the http.RoundTripper of an http or sse server's
//     client, bounds a JSON body and each event of an event stream to the
//     maximum message size, failing past it with ErrResponseTooLarge, and
//     sets the request's size trip (WithSizeTrip, SizeTripped), because
//     mcp-go does not pass on the error of a stream that breaks off.
//   - ReadBudget is what reading a server's messages may cost: a token
//     bucket of lines and bytes, shared by a server's pipe and bodies;
//     over it, reading slows and the server blocks on its own full pipe or
//     TCP window (docs/benchmarks.md: "A server flooding its output").
//
// Where things are:
//
//	doc.go        this map; ErrResponseTooLarge
//	budget.go     ReadBudget: what a server's output may cost to read before reading slows
//	httpbound.go  BoundedBodies: bounds on HTTP response bodies and SSE events
package wire

import "errors"

// ErrResponseTooLarge is what a response over the bound fails with: the
// server's answer to a request was larger than the maximum message size and
// was discarded. mcpclient.ErrResponseTooLarge is this error.
var ErrResponseTooLarge = errors.New("MCP server response too large")
