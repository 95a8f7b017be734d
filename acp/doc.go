// Package acp is acpgate's ACP translator: it serves the ACP methods, on a
// connection it owns (acp/jsonrpc) with acp-go-sdk's message types (and
// types of its own for what the schema has beyond them), on top of the
// session store, the MCP client manager, the bridge and the gateway
// Runner. It speaks ACP only; MCP and model logic live in the packages it
// calls.
//
// The translator is split by protocol role, one type each, and they meet
// only through the fields the compiler sees:
//
//   - Agent: the session lifecycle and initialize. It owns the open
//     sessions and hands work to the roles below.
//   - dispatcher: each ACP method's route (routes.go): params checked,
//     decoded and answered.
//   - auth, providers, sharedServers: authentication and logout; the
//     providers methods; the servers configured shared: true.
//   - turns: session/prompt, one turn at a time per session (the others
//     queued; steered prompts join the running one).
//   - commands: slash commands (one registry) and MCP prompts as
//     commands.
//   - permissions: asking the editor to approve a tool call; it sees a
//     session only through permissionSession.
//   - userRequests: what MCP servers ask of the user (elicitation,
//     sampling, sign-in), with serverRequests routing each to its session.
//   - agentConfig: what the options and the configuration file make of a
//     session.
//   - peer: the editor as every role sees it (session/update, cards,
//     capabilities).
//   - tunnel: MCP over ACP, the client's own servers reached through the
//     connection (an mcpclient.Tunnel).
//   - liveSession: one open session: its parts, and its sessionState
//     (read through snapshot, changed only through update). The roles see
//     it through interfaces of its methods (commandState, peerSession,
//     configSession, advertSession, askSession, turnSession).
//
// Where things are:
//
//	doc.go                this map
//	agent.go              Options, Serve, Agent, initialize (advertising what routes exist), JSON-RPC errors
//	routes.go             every ACP method: its params type, checks and handler; the dispatcher
//	wire.go               the writer to the editor: one frame per write, or in pieces; redacted
//	clientcalls.go        what the agent sends the client (session/update, request_permission, elicitation, fs, terminal)
//	auth.go               the terminal auth method (acpgate setup); authenticate
//	lifecycle.go          session/new, load, resume, fork, list, close, delete, cancel; opening and closing
//	live_session.go       liveSession, sessionState: a session, its state and the questions roles ask of it
//	session_parts.go      the roles' views of a live session (peerSession, configSession, advertSession, askSession, turnSession) and its methods behind them
//	config_options.go     session/set_config_option, session/set_mode: model picker, mode
//	turn.go               session/prompt: turns, turnLog (updates sent and recorded)
//	steering.go           turnSlot: the running turn, its queue and steered prompts; _session/steering
//	hooks.go              a session's hooks (gateway/hooks): the project's trust, each event's runs, cards
//	answer_log.go         the model's words kept once in the session log: chunk records an answer names
//	blobs.go              the images and audio of the history kept once in the session log, as blob records
//	system_prompt.go      a session's system prompt (gateway/sysprompt); /context
//	system_prompt_servers.go what the prompt says of ACP and MCP: acpgate's instructions, the servers'
//	plan.go               update_plan calls as the session's plan (plan updates)
//	usage.go              usage_update: context used, cost
//	compaction.go         the conversation compacted: card or compaction updates, session log record, /compact
//	mentions.go           resources mentioned in a prompt: read, framed, subscribed
//	commands.go           /mcp, /tools, /call, /resources, /reload, /context
//	command_session.go    commandView: a live session as the slash commands see it (commandSession)
//	server_edits.go       /mcp add, remove, restart: a live session's servers changed
//	prompt_commands.go    MCP prompts as slash commands
//	skills.go             the session's skills: the Skills section, load_skill, loading and verifying
//	skill_commands.go     skills as slash commands, /skills, what /context says of them
//	permission.go         the editor is asked to approve a tool call
//	server_requests.go    MCP server → user: userRequests, serverRequests, roots/list
//	elicitation.go        an MCP server sends elicitation/create
//	elicitation_schema.go checking a requestedSchema and the answers
//	sampling.go           an MCP server sends sampling/createMessage
//	signin.go             OAuth sign-in through the editor; logout
//	servers.go            server status cards; waiting for connecting servers
//	notices.go            notices of servers' changes of state (session.notices)
//	shared.go             servers configured shared: true
//	sharedsubs.go         resource subscriptions counted across sessions
//	resources.go          a session's resources: /resources, updates, subscriptions
//	peer.go               peer: session/update, cards, client capabilities
//	updates.go            the session updates acp-go-sdk lacks: Notice, CompactionUpdate, CompactionSummaryChunk
//	update_json.go        session updates encoded once, the JSON acp-go-sdk's MarshalJSON gives
//	configured.go         agentConfig: profile, model, server specs, limits, OAuth, secrets
//	providers.go          providers/list, set, disable: the model endpoint the client sets
//	workspace.go          the native tools: workspace tools (through the editor or local), update_plan
//	progress.go           progress of a tool call on its card
//	stored.go             the bounded copy of a result in the session log
//	convert.go            content between ACP and the gateway
//	toolname.go           the schema's name of a tool call (an MCP tool's own name, a native tool's)
//	large_update.go       an update with large texts (a whole result), written in pieces
//	input.go              what params are checked for before they are decoded
//	tunnel.go             MCP over ACP: the client's acp servers, request-scoped (mcp/message)
package acp
