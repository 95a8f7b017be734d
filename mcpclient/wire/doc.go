// Package wire is where mcpclient meets mark3labs/mcp-go's transports: what
// it replaces or wraps in mcp-go, and why, so that the rest of mcpclient
// reads as servers, roles and the Manager, and a reader learns here at once
// what mcp-go does and where acpgate overrides it.
//
// mcp-go reads what a server sends without a bound: a stdio server's
// stdout line by line whatever the line is, an HTTP response body whole,
// an event of an event stream line by line, as fast as the server writes;
// and its stdio transport copies a message five times on its way to the
// result. A hostile or broken server could so exhaust acpgate's memory or
// CPU, or corrupt the session with junk on its stdout. This package bounds
// it (docs/mcp-servers.md says what a server may send; docs/benchmarks.md's
// mcpclient sections measure the bounds: "Memory per result" for the stdio
// transport's copies, "Large results and flooding servers" and, for the
// binary, "Floods of valid messages" for the size bound and the budgets):
//
//   - StdioTransport replaces mcp-go's stdio transport (it implements
//     transport.BidirectionalInterface as that one does): each message is
//     read once into a buffer of its own and decoded once, a response's
//     result handed on as a slice of it; with DecodeCallResult, a 15 MiB result costs 2× its size instead of 8×
//     (BenchmarkCallToolLarge).
//   - JSONLines is the reader of a stdio server's stdout: JSON lines only,
//     non-JSON skipped with a warning within the log budget (StdoutLog),
//     a message bounded to the maximum size; an over-long response is
//     replaced by a made-up error for its id (TooLargeIDs), so its request
//     fails at once with ErrResponseTooLarge and the server stays usable.
//   - DecodeCallResult replaces mcp.ParseCallToolResult (three copies of
//     the content): each block decoded from the response's bytes, a large
//     text over stdio unescaped where it lies, not copied.
//   - Notices sends what mcp-go does not: notifications/cancelled after a
//     request whose context ended, over HTTP (LibraryCancels says where
//     mcp-go sends it itself), so a server does not go on working for
//     nobody; off the caller's path, and none outlives the connection.
//   - RawSchemas keeps each tool's inputSchema as the server sent it:
//     mcp-go's decoded schema drops a top-level anyOf, description or
//     $schema.
//   - BoundedBodies, the http.RoundTripper of an http or sse server's
//     client, bounds a JSON body and each event of an event stream to the
//     maximum message size, failing past it with ErrResponseTooLarge, and
//     sets the request's size trip (WithSizeTrip, SizeTripped), because
//     mcp-go does not pass on the error of a stream that breaks off.
//   - ReadBudget is what reading a server's messages may cost: a token
//     bucket of lines and bytes, shared by a server's pipe and bodies;
//     over it, reading slows and the server blocks on its own full pipe or
//     TCP window (BenchmarkCallDuringFlood; docs/benchmarks.md "Floods of
//     valid messages").
//
// Where things are:
//
//	doc.go         this map; ErrResponseTooLarge
//	stdio.go       StdioTransport: JSON-RPC over a child's pipes; HandlerSlots, RawRef
//	linefilter.go  JSONLines, StdoutLog: a stdio server's stdout, JSON lines only, non-JSON skipped
//	toolarge.go    TooLargeIDs: responses over the size limit answered with an error
//	callresult.go  DecodeCallResult: tools/call results decoded without copying large texts
//	cancel.go      Notices, LibraryCancels: the notifications/cancelled mcp-go does not send
//	schemas.go     RawSchemas: tools' input schemas kept as the server sent them
//	budget.go      ReadBudget: what a server's output may cost to read before reading slows
//	httpbound.go   BoundedBodies: bounds on HTTP response bodies and SSE events
package wire

import "errors"

// ErrResponseTooLarge is what a response over the bound fails with: the
// server's answer to a request was larger than the maximum message size and
// was discarded. mcpclient.ErrResponseTooLarge is this error.
var ErrResponseTooLarge = errors.New("MCP server response too large")
