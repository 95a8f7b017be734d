// Package mcpclient connects the MCP servers of one session and keeps them
// connected: stdio children in their own process groups, streamable HTTP and
// legacy SSE servers, servers in the ACP client reached through a Tunnel
// (MCP over ACP), with handshake, discovery, calls, crash restarts and a
// teardown that leaves no process behind. It knows nothing of ACP (a
// Tunnel carries an acp server's messages), models or sessions: one
// Manager serves one session.
//
// Its catalog (Tools, Resources, ...) is the one source of a session's
// tools; Options.OnEvent says when it changed.
//
// Requests servers send (elicitation, sampling, roots) reach the handlers
// of Options (Elicitor, Sampler, RootsLister), attributed to the call they
// belong to where that can be told (see requests.go).
//
// mcp-go types in the API, on purpose. The package returns its own types
// for everything it adds (Status, Event, ServerSpec, Progress, errors, the
// server requests and their answers), and
// mark3labs/mcp-go's types for what servers say, as they said it:
// ServerTool.Tool (mcp.Tool), CallTool (*mcp.CallToolResult), ReadResource
// (*mcp.ReadResourceResult), GetPrompt (*mcp.GetPromptResult) and the
// items of Resources, ResourceTemplates and Prompts. These are MCP's own
// schema types, which mcp-go keeps in step with the specification
// (content block unions, annotations, _meta, raw input schemas), and the
// bridge passes them on without loss; a mirror here would copy every
// result (the large-result benchmarks guard against that copy) and lag
// behind each new revision. Each exported name that exposes one says so.
//
// A Manager is its API over a fleet: the servers as a whole (their list,
// reconfiguration, launch, lookup by name, the events that follow a change,
// and the request path every call takes).
//
// Each server of a Manager is split by protocol role, one type each, made
// together by newServer. No role holds its server: each gets, at
// construction, a roleEnv (the server's spec and logger, the Manager's
// Options, the channel that hurries teardown), the values it uses (the
// log gate, the read budget, the fleet's lock), and small interfaces for
// what it asks of a sibling or of the server (all in server.go):
// notified (the reader goroutine hands each notification to the role
// that takes it), serverRequests (the dialer and the caller ask the
// answerer to serve or answer a server's requests), callFinder (the
// answerer asks the caller which call a request belongs to), linkOwner,
// authTransport and sessionSetup (what the dialer asks of the server, auth
// and the subscriber), callSignIn, toolIndex and rawRequester (what the
// caller asks of auth, the lister and the subscriber), callPlumbing and
// resourceEvents (what the subscriber asks of the caller and the server),
// authOwner (what auth asks of the server). State is the owner's: the
// server's Status and connection under its mu, the catalog the lister's
// under its own:
//
//   - server: the link's lifecycle: connect, watch, restart after a crash,
//     sign-in waits, teardown; its Status.
//   - dialer: the link itself: the transport of each kind, the
//     initialize handshake or the 2026-07-28 discovery, the revision.
//   - lister: the catalog: tools, resources, prompts and skills (and how
//     many tools the limit keeps), listed again on list_changed or when a
//     2026-07-28 list's TTL ends.
//   - caller: tools/call and the tasks calls become, with progress and
//     cancellation.
//   - answerer: requests from the server to the client (elicitation,
//     sampling, roots) and the tasks made of them; the server's log.
//   - subscriber: resource subscriptions, the 2026-07-28 listen stream,
//     the log level.
//   - auth: OAuth sign-in of an http or sse server (package oauth).
//
// mcp-go's transports are met through package wire, which says what it
// replaces or wraps in mcp-go and why: the stdio transport and the line
// filter of a server's stdout (wire.StdioTransport, wire.JSONLines; the
// log gate is their wire.StdoutLog), the bounds on HTTP response bodies and
// events (wire.BoundedBodies), the read budget of a server's output
// (wire.ReadBudget), the decoder of tools/call results
// (wire.DecodeCallResult) and the cancellation notices mcp-go does not
// send (wire.Notices, wire.LibraryCancels).
//
// Where things are:
//
//	doc.go              this map
//	manager.go          Options, Manager, fleet: the servers of one session, the catalog, events
//	spec.go             ServerSpec, ProtocolVersion: what a server is and how it is run
//	status.go           State, Status, Event
//	events.go           the event queue: Options.OnEvent in order, off the caller's goroutine
//	server.go           server: lifecycle, restarts, ready connection, notification routing; roleEnv and the roles' interfaces
//	link.go             dialer, link, conn: transports, the handshake, process and HTTP links
//	revision.go         the 2026-07-28 revision: discovery probe, input requests, list TTLs
//	catalog.go          lister, catalog: listing, list_changed, tool names
//	calls.go            caller: CallTool, ReadResource, GetPrompt; progress
//	tasks.go            tasks of calls on 2025-11-25 (tasks/get, result, cancel)
//	exttasks.go         the Tasks extension on 2026-07-28
//	skills.go           the skills extension: skills/list, SkillEntry, Manager.Skills
//	relatedtask.go      server requests attributed to the task of a call
//	callresult.go       tools/call results into the call's slot, decoded by wire.DecodeCallResult
//	server_requests.go  answerer: elicitation, sampling, roots, routed to Options' handlers
//	requests.go         the types of server requests and their answers
//	clienttasks.go      tasks the server makes of its requests to the client
//	logging.go          notifications/message into the log
//	loggate.go          a server's own output (stderr, log messages) rate-limited into the log
//	resources.go        subscriber: Subscribe, Unsubscribe, resources/updated, completion
//	listen.go           the 2026-07-28 subscriptions/listen stream
//	auth.go             auth: OAuth sign-in, Login, Logout
//	wrapped.go          the wrapped transport: what mcpclient adds to every request; the tool listing kept
//	telemetry.go        every request's span and trace context (_meta, the HTTP headers)
//	process.go          a stdio server's process and environment
//	tree_unix.go        a stdio server's process group (tree_windows.go: its job object)
//	tunnel.go           MCP over ACP: the Tunnel a server in the ACP client is reached through
//	url.go              CheckURL: the rule for a server's URL
package mcpclient
