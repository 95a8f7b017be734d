// Command mcpserver is a deterministic MCP test server with precise fault
// injection, built on github.com/mark3labs/mcp-go/server. It exists for the
// integration tests of the MCP client manager and is not part of acpgate.
//
// Build and run:
//
//	go build -o /tmp/mcpserver ./internal/testsupport/fake/mcpserver
//	/tmp/mcpserver [flags]
//
// # Flags
//
//	-transport stdio|http|sse   Transport (default stdio).
//	    stdio: newline-delimited JSON-RPC on stdin/stdout.
//	    http:  streamable HTTP (stateful: an unknown Mcp-Session-Id gets
//	           404, as with the reference SDKs), served only at path /mcp (any other path,
//	           e.g. POST /sse, gets 404).
//	    sse:   legacy SSE: GET /sse opens the event stream, whose first event
//	           is "endpoint" with data http://HOST:PORT/message?sessionId=ID
//	           (a full URL); messages are POSTed there and answered with 202
//	           on the POST and the JSON-RPC response on the stream. POST /sse
//	           gets 405; any other path gets 404.
//	    In http and sse modes the server listens on -addr, prints exactly one
//	    line "URL <url>" to stdout (e.g. "URL http://127.0.0.1:43121/mcp" or
//	    "URL http://127.0.0.1:43121/sse"), then serves. Stdin is not read in
//	    these modes (stdin EOF does not stop the server).
//	-addr HOST:PORT             Listen address for http/sse (default
//	    127.0.0.1:0). Nothing else is ever listened on.
//	-name NAME                  serverInfo.name (default "testserver");
//	    serverInfo.version is "1.0.0". Also the "logger" of log notifications.
//	-instructions TEXT          The instructions of the initialize result
//	    (and of server/discover): how to use the server (default none).
//	-init-delay DURATION        Delay the answer to every initialize request
//	    by DURATION (e.g. 500ms). Other requests are not delayed.
//	-init-hang                  Never answer initialize. In stdio mode the
//	    process still exits 0 on stdin EOF or SIGTERM/SIGINT, and writes
//	    nothing more to stdout once the session has ended.
//	-init-error                 Answer every initialize with the JSON-RPC
//	    error {"code":-32600,"message":"init refused"} and write the line
//	    "init refused" to stderr. The process keeps running (and mcp-go
//	    still answers other requests; in http mode it even issues an
//	    Mcp-Session-Id with the error).
//	    When combined, -init-delay applies first, then -init-hang, then
//	    -init-error. None of them delays or refuses anything but initialize.
//	-exit-at-start N            Write "fatal: exiting at start" to stderr and
//	    exit with status N before reading anything (default -1 = disabled;
//	    0 is a valid status). The "started <pid>" record line is written
//	    first, so restarts can be counted.
//	-stderr-lines N             At start write N lines "stderr line <i>"
//	    (i = 1..N) to stderr.
//	-crash-after N              (0 = never) N tools/call requests are served;
//	    on receipt of the (N+1)-th tools/call request (whatever tool it names,
//	    even an unknown one) the process writes "crashing after N calls" to
//	    stderr and exits with status 3 without answering it. That call is
//	    not recorded as "call <tool>".
//	-ignore-sigterm             Ignore SIGTERM (signal.Ignore). SIGINT still
//	    shuts down; SIGKILL is needed otherwise.
//	-ignore-stdin-eof           stdio mode: keep running after stdin EOF
//	    until a signal arrives.
//	-grandchild                 At start re-exec this binary with the hidden
//	    flag -grandchild-mode, in the same process group (no Setpgid). The
//	    grandchild ignores SIGTERM, has stdin, stdout and stderr on /dev/null
//	    (it does not hold the parent's pipes) and sleeps (it exits by itself
//	    after one hour, as a guard against leaks). The parent writes
//	    "grandchild pid <pid>" to stderr and records "grandchild <pid>". The
//	    parent reaps it in the background if it dies first.
//	-grandchild-setsid          With -grandchild: the grandchild calls setsid
//	    (a new session and process group, as daemonising wrappers do), so
//	    it is no longer in the server's process group.
//	-junk-stdout                stdio mode: write the line "this is not json"
//	    to stdout at start and immediately before every JSON-RPC line
//	    (responses and notifications), as whole lines.
//	-huge-line N                stdio mode: at start write one line of N 'x'
//	    bytes plus "\n" to stdout (before the -junk-stdout start line).
//	-record FILE                Append event lines to FILE (O_APPEND|O_CREATE,
//	    one write per line). See "Record file" below.
//	-tools N                    Also register tools tool_0 .. tool_{N-1}.
//	-page-size N                Page size for tools/list, resources/list,
//	    resources/templates/list and prompts/list (0 = no pagination). The
//	    cursor is mcp-go's: base64 of the last name on the page. A full page
//	    always carries nextCursor, so when the item count is a multiple of N
//	    the last page is empty (e.g. 16 tools, -page-size 4: 4+4+4+4+0).
//	-protocol P                 The revisions spoken: 2025-11-25 (default: a
//	    server/discover is refused with the JSON-RPC error -32600, as a
//	    server before 2026-07-28 would refuse it), both (mcp-go's own
//	    behaviour: server/discover and initialize), or 2026-07-28 (initialize
//	    is refused with -32600; only the stateless revision works).
//	    -init-delay delays a server/discover answer as well.
//	-tools-ttl DURATION         tools/list results to 2026-07-28 requests carry
//	    ttlMs DURATION (cacheScope private), and the tools capability has
//	    listChanged false: tool changes (add_tool, remove_tool) are not
//	    announced, so only the TTL makes a client see them.
//	-start-delay DURATION       Sleep DURATION after the signals are wired and
//	    before anything is read or written (a slow start, like npx fetching
//	    a package): every request waits for it alike.
//	-ready-at NANOS             Read nothing before this Unix time (ns), the
//	    server's own start-up work included (benchmarks).
//	-discover-empty             http: answer server/discover with {} (as
//	    servers that answer every method do).
//	-refuse-listen              Answer every subscriptions/listen with an error.
//	-ext-tasks                  The 2026-07-28 Tasks extension and its tool
//	    ext_job (see exttasks.go); stdio or http, -protocol 2026-07-28 or both.
//	-skills                     The skills extension (SEP-2640): skills/list and
//	    three skills' files as resources (see skills.go); stdio only.
//	-grandchild-mode            Hidden; used internally by -grandchild.
//	-sandbox-tools              The tools dial, read_path and write_path
//	    (see sandbox.go), for the sandbox's tests.
//	-dial-mode ADDR             Hidden; used internally by dial's via_child.
//
// # Tools
//
// Items are returned in name order. Every tool has an object input schema;
// all carry mcp-go's default annotations (readOnlyHint false,
// destructiveHint true, idempotentHint false, openWorldHint true) except
// where noted. A missing required argument gives an isError result naming it.
//
//	echo {text: string}          text content = text. Annotations: title
//	    "Echo", readOnlyHint true, destructiveHint false, idempotentHint true,
//	    openWorldHint false.
//	add {a: number, b: number}   text content = the sum ("5" for 2+3, "3.5"
//	    for 1.5+2) and structuredContent {"sum": <sum>}; no outputSchema.
//	sleep {ms: integer}          Sleeps ms milliseconds; returns "slept <ms>ms".
//	    If cancelled first (notifications/cancelled; stdio: stdin EOF or
//	    SIGTERM/SIGINT; http: the POST's connection closing; sse: only
//	    notifications/cancelled) it records "cancelled sleep", writes
//	    "sleep cancelled" to stderr and returns an isError result "cancelled".
//	fail {message?: string}      isError result, text = message (default
//	    "tool failed").
//	rpc_error {message?: string, bytes?: integer}  Answers with the
//	    JSON-RPC error -32603 whose message is message (default "rpc
//	    error") repeated and cut to exactly bytes bytes (default: once).
//	crash {}                     Writes "crash tool called" to stderr and
//	    exits with status 2 (after "call crash" is recorded).
//	big {bytes: integer, log_first?: boolean}  One text content of exactly
//	    bytes 'a's. With log_first, a notifications/message {level "info",
//	    data "big result follows"} is sent first (over http that makes the
//	    answer an event stream).
//	image {variant?: string, bytes?: integer}  One image content: a 1x1
//	    PNG, mimeType image/png. variant "tiff": a TIFF header, image/tiff;
//	    "broken": text that is not base64, image/png; "big": the PNG's
//	    bytes padded with zeros to bytes bytes; "mislabelled": the PNG as
//	    image/jpeg; "resource": the PNG as an embedded blob resource
//	    {uri test://image.png, mimeType image/png}.
//	audio {}                     One audio content: a 44-byte empty WAV file,
//	    mimeType audio/wav.
//	mixed {}                     Five blocks, in order: text "mixed content";
//	    the image; the audio; an embedded text resource {uri test://mixed,
//	    mimeType text/plain, text "mixed resource"}; a resource_link {uri
//	    test://hello, name hello, mimeType text/plain}.
//	structured {}                text `{"answer":42}` plus structuredContent
//	    {"answer":42}; outputSchema {"type":"object","properties":{"answer":
//	    {"type":"integer"}},"required":["answer"]}.
//	mirror {content: object}  text = content as JSON, and
//	    structuredContent = content (member names as sent); no outputSchema.
//	progress {steps: integer, interval_ms?: integer}  For i = 1..steps: waits
//	    interval_ms (default 0), then sends notifications/progress
//	    {progressToken, progress: i, total: steps, message: "step i/steps"}
//	    if the request carried _meta.progressToken (otherwise only waits).
//	    Returns "done <steps>". Cancellation: records "cancelled progress",
//	    stderr "progress cancelled", isError result "cancelled".
//	env {name: string}           text = os.Getenv(name), or "(unset)" if empty.
//	cwd {}                       text = the working directory.
//	schema_rich {...}            has the raw input schema RichSchema (top-level
//	                             anyOf, $defs, enum, nested objects); returns
//	                             its raw arguments as text.
//	add_tool {name: string}      Registers tool <name> (no arguments; returns
//	    text <name>); mcp-go sends notifications/tools/list_changed; returns
//	    "added <name>".
//	remove_tool {name: string}   Removes tool <name> (any tool, built-ins too)
//	    and returns "removed <name>" (list_changed as for add_tool); isError
//	    "no such tool <name>" if it does not exist.
//	list_changed {}              Sends notifications/tools/list_changed (in
//	    every mode, also with -tools-ttl) without changing the tool list;
//	    returns "announced".
//	log {level: string, message: string}  Sends notifications/message
//	    {level, logger: <-name>, data: message} regardless of logging/setLevel
//	    and returns "logged". level must be an MCP level (debug ... emergency).
//	stderr {text: string}        Writes text plus "\n" to stderr in one write
//	    and returns "written <len(text)>".
//	flood {kind: string, lines: integer, size?: integer, ms?: integer,
//	    per_second?: integer}  Writes lines lines "flood line <i>"
//	    (i = 1..lines) as fast as it can, then returns "flooded <n>" (n:
//	    the lines written; with kind both, those written to stderr).
//	    kind stderr: to stderr; stdout (stdio only): to stdout, as non-JSON
//	    lines, each in one write; both (stdio only): stdout and stderr at
//	    once, lines lines each; notify: as notifications/message {level
//	    "info", logger <-name>, data "flood line <i>"}. stdout and notify
//	    lines are written before the result, on the same stream. size > 0
//	    pads each line with 'x' to size bytes (its newline included); ms > 0
//	    stops writing after ms milliseconds (lines 0: no bound on the
//	    count); per_second > 0 paces the lines: line i is written no
//	    earlier than (i-1)/per_second seconds after the first.
//	tool_<i> {}                  (-tools) returns text "tool_<i>".
//	usr1_tool {}                 Added (once) on SIGUSR1, in every mode; the
//	    server writes "usr1_tool added" to stderr the first time. Returns text
//	    "usr1_tool".
//
// A task tool (2025-11-25 experimental tasks; the server declares tasks
// list, cancel and requests.tools.call; see tasks.go):
//
//	task {steps: integer, interval_ms?: integer, hold?: boolean}
//	    execution.taskSupport "required": a tools/call without the task
//	    parameter fails. Answers with a CreateTaskResult (status working),
//	    then sends the progress tool's notifications (on the call's
//	    progressToken) and completes with "task done <steps>" (status
//	    completed, notifications/tasks/status). With hold it keeps running
//	    after the last step until the server receives a tasks/cancel (of any
//	    task: mcp-go does not tell a handler its task), then records
//	    "cancelled task" and ends cancelled.
//
// Tools that send a request to the client and return its answer as JSON
// text (an isError result "error: <reason>" when the request fails, e.g.
// because the client answered with a JSON-RPC error):
//
//	elicit {message?: string, schema: object}  elicitation/create, form
//	    mode, with requestedSchema = schema exactly as given.
//	elicit_url {url: string, id: string, complete?: boolean}
//	    elicitation/create, url mode, message "Please sign in",
//	    elicitationId = id. With complete, after an accept answer,
//	    notifications/elicitation/complete {elicitationId: id} is written
//	    before the result.
//	sample {prompt: string, system?: string, max_tokens?: number (100),
//	    model_hint?: string, with_tools?: boolean}  sampling/createMessage
//	    with one user text message prompt, systemPrompt system, maxTokens,
//	    modelPreferences.hints [{name: model_hint}]; with_tools adds the tool
//	    lookup (inputSchema LookupToolSchema) and toolChoice {mode: auto}.
//	roots {}                     roots/list (readOnlyHint true).
//	ask {message?: string}       2026-07-28 multi round trip: answers with an
//	    input_required result asking (input request "answer") an elicitation
//	    {message (default "Your name?"), requestedSchema {name: string,
//	    required}}; the retry carrying the answer returns "answer <the input
//	    response as JSON>". For a 2025-11-25 client mcp-go sends the
//	    elicitation/create itself and re-invokes the tool.
//
// Ordering: every notification a tool call causes (progress, log,
// list_changed from add_tool/remove_tool) has been written to the wire
// before the call's result is, in every mode. In http mode, though, if the
// client also holds a GET stream for the session, mcp-go may deliver any of
// them on that stream rather than on the POST's. In stdio mode mcp-go serves
// requests concurrently, so responses can come out of request order (e.g. a
// tools/call sent right after initialize may be answered first); a
// cancelled call is still answered (isError "cancelled").
//
// # Resources and prompts
//
// Capabilities: tools (listChanged true), resources (subscribe and
// listChanged false), prompts (listChanged false), logging.
//
//	resource test://hello       name hello, text/plain, text "hello world"
//	resource test://data.json   name data.json, application/json, text {"k":1}
//	template test://items/{id}  name item, text/plain; reading
//	    test://items/7 returns text "item 7"
//	prompt greet {name required} one user text message "Hello, <name>!";
//	    without name: JSON-RPC error -32603 "missing required argument name"
//	prompt plain                one user text message "This is a plain prompt."
//
// # Live resources and prompts (-live)
//
// Capabilities as above, but resources (subscribe and listChanged true),
// prompts (listChanged true) and completions. Adds:
//
//	resource test://counter     name counter, text/plain, text "counter <n>"
//	tool bump_counter {}        n++; once some client subscribed to
//	    test://counter, sends notifications/resources/updated {uri
//	    test://counter} to the calling client (before the result, see
//	    Ordering), and on every subscriptions/listen stream (2026-07-28)
//	    whose latest filter names it; returns "counter <n>".
//	tool link {id: string}      text "see the link" and a resource_link
//	    {uri test://items/<id>, name "item <id>", mimeType text/plain}.
//	tool add_prompt {name: string}  registers prompt <name> (one user text
//	    message "prompt <name>"; prompts/list_changed) and returns "added
//	    prompt <name>".
//	prompt tone {style required, topic}  three messages: user "Answer in a
//	    <style> tone.", assistant "Understood: <style>.", user "Topic: <topic>".
//	completion/complete: greet.name completes to those of Alice, Bob
//	    starting with the value (case-insensitive); tone.style to "formal".
//
// # Record file
//
// One line per event, in this format:
//
//	started <pid>      at start, before anything else (even -exit-at-start)
//	grandchild <pid>   after spawning the grandchild
//	client <name> <version>  on initialize: the client's clientInfo
//	capabilities <json>  on initialize: the client's capabilities, as JSON
//	meta capabilities <json>  on a 2026-07-28 tools/list: the client's
//	                   capabilities in its _meta, as JSON
//	roots changed      on receipt of notifications/roots/list_changed
//	initialized        on receipt of notifications/initialized
//	call <tool>        on every tools/call, before the tool runs (also for
//	                   unknown tools)
//	tools/list         on every tools/list request (each page), before it
//	                   is answered
//	cancelled <tool>   when sleep or progress sees its context cancelled
//	tasks/cancel       on receipt of a tasks/cancel request
//	notice cancelled <id>  on receipt of notifications/cancelled for request
//	                   <id> (its JSON), in every mode, before mcp-go acts on it
//	stdin eof          stdio with -ignore-stdin-eof: stdin reached EOF
//	http delete <path> http/sse: a client sent DELETE (ended its session)
//	header X-Test <v>  http/sse: first request carrying X-Test: <v>
//	http Mcp-Name <v>  http, -ext-tasks: an ext_job request carrying Mcp-Name: <v>
//	subscribe <uri>    (-live) after resources/subscribe; unsubscribe <uri> likewise
//	listen <uri>       (-live) a subscriptions/listen whose filter names <uri>
//	setLevel <level>   (-live) on logging/setLevel
//	complete <arg>     (-live) on completion/complete for argument <arg>
//	skills/list        (-skills) on every skills/list request
//	read <uri>         (-skills) on every resources/read of a skill's file
//
// # Exit statuses and signals
//
// 0 after stdin EOF (stdio) or SIGTERM/SIGINT (any mode; in-flight stdio
// requests are cancelled first, for at most 3s); 2 for the crash tool (and,
// from the flag package, for bad flags); 3 for -crash-after; N for
// -exit-at-start N; 1 for setup errors (e.g. the address is in use) and
// stdin read errors. Besides the lines documented above, stderr may carry
// mcp-go's own diagnostics, prefixed "mcpserver: " in stdio mode.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

type config struct {
	transport      string
	addr           string
	name           string
	instructions   string
	initDelay      time.Duration
	initHang       bool
	initError      bool
	exitAtStart    int
	stderrLines    int
	crashAfter     int
	ignoreSIGTERM  bool
	ignoreStdinEOF bool
	grandchild     bool
	grandchildMode bool
	grandchildSid  bool
	junkStdout     bool
	hugeLine       int
	record         string
	tools          int
	pageSize       int
	protocol       string        // see modern.go
	toolsTTL       time.Duration // see modern.go
	startDelay     time.Duration // see modern.go
	readyAt        int64         // see modern.go
	discoverEmpty  bool          // see modern.go
	refuseListen   bool          // see modern.go
	live           bool
	extTasks       bool   // see exttasks.go
	skills         bool   // see skills.go
	sandboxTools   bool   // see sandbox.go
	dialMode       string // see sandbox.go
}

const hiddenFlag = "grandchild-mode"

func parseFlags() *config {
	c := &config{}
	fs := flag.CommandLine
	fs.StringVar(&c.transport, "transport", "stdio", "transport: stdio, http (streamable HTTP at /mcp) or sse (legacy SSE at /sse)")
	fs.StringVar(&c.addr, "addr", "127.0.0.1:0", "listen address for http and sse")
	fs.StringVar(&c.name, "name", "testserver", "serverInfo name")
	fs.StringVar(&c.instructions, "instructions", "", "the instructions of the initialize result")
	fs.DurationVar(&c.initDelay, "init-delay", 0, "delay the initialize answer")
	fs.BoolVar(&c.initHang, "init-hang", false, "never answer initialize")
	fs.BoolVar(&c.initError, "init-error", false, "answer initialize with a JSON-RPC error")
	fs.IntVar(&c.exitAtStart, "exit-at-start", -1, "exit at start with this status (-1 = disabled)")
	fs.IntVar(&c.stderrLines, "stderr-lines", 0, "write this many lines to stderr at start")
	fs.IntVar(&c.crashAfter, "crash-after", 0, "exit with status 3 on the (N+1)-th tools/call (0 = never)")
	fs.BoolVar(&c.ignoreSIGTERM, "ignore-sigterm", false, "ignore SIGTERM")
	fs.BoolVar(&c.ignoreStdinEOF, "ignore-stdin-eof", false, "stdio: keep running after stdin EOF")
	fs.BoolVar(&c.grandchild, "grandchild", false, "spawn a SIGTERM-ignoring grandchild process")
	fs.BoolVar(&c.grandchildMode, hiddenFlag, false, "internal")
	fs.BoolVar(&c.grandchildSid, "grandchild-setsid", false, "with -grandchild: the grandchild leaves the process group (setsid)")
	fs.BoolVar(&c.junkStdout, "junk-stdout", false, "stdio: write a non-JSON line before every message")
	fs.IntVar(&c.hugeLine, "huge-line", 0, "stdio: write a non-JSON line of N bytes at start")
	fs.StringVar(&c.record, "record", "", "append event lines to this file")
	fs.IntVar(&c.tools, "tools", 0, "register N extra tools tool_0..tool_{N-1}")
	fs.IntVar(&c.pageSize, "page-size", 0, "list pagination page size (0 = none)")
	modernFlags(fs, c)
	extTaskFlags(fs, c)
	skillFlags(fs, c)
	fs.BoolVar(&c.live, "live", false, "live resources and prompts: subscriptions, list_changed, completion")
	fs.BoolVar(&c.sandboxTools, "sandbox-tools", false, "the tools dial, read_path and write_path (see sandbox.go)")
	fs.StringVar(&c.dialMode, dialFlag, "", "internal")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage of %s:\n", os.Args[0])
		fs.VisitAll(func(f *flag.Flag) {
			if f.Name == hiddenFlag || f.Name == dialFlag {
				return
			}
			fmt.Fprintf(fs.Output(), "  -%s\t%s (default %q)\n", f.Name, f.Usage, f.DefValue)
		})
	}
	flag.Parse()
	if flag.NArg() > 0 {
		usageError("unexpected arguments: %s", strings.Join(flag.Args(), " "))
	}
	switch c.transport {
	case "stdio", "http", "sse":
	default:
		usageError("unknown -transport %q (want stdio, http or sse)", c.transport)
	}
	if err := validProtocol(c.protocol); err != nil {
		usageError("%v", err)
	}
	if err := validExtTasks(c); err != nil {
		usageError("%v", err)
	}
	if c.skills && c.transport != "stdio" {
		usageError("-skills needs -transport stdio")
	}
	if c.hugeLine < 0 || c.stderrLines < 0 || c.crashAfter < 0 || c.tools < 0 || c.pageSize < 0 {
		usageError("numeric flags must not be negative")
	}
	return c
}

func usageError(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "mcpserver: "+format+"\n", args...)
	flag.CommandLine.Usage()
	os.Exit(2)
}

func main() {
	cfg := parseFlags()
	if cfg.grandchildMode {
		runGrandchild()
		return
	}
	if cfg.dialMode != "" {
		runDialChild(cfg.dialMode)
		return
	}

	rec, err := openRecorder(cfg.record)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcpserver: %v\n", err)
		os.Exit(1)
	}
	rec.event("started %d", os.Getpid())

	if cfg.exitAtStart >= 0 {
		fmt.Fprintln(os.Stderr, "fatal: exiting at start")
		os.Exit(cfg.exitAtStart)
	}

	// Signals are wired before anything slow happens, so that a SIGTERM
	// arriving during start-up is also a clean exit.
	term := make(chan os.Signal, 1)
	if cfg.ignoreSIGTERM {
		signal.Ignore(syscall.SIGTERM)
		signal.Notify(term, syscall.SIGINT)
	} else {
		signal.Notify(term, syscall.SIGINT, syscall.SIGTERM)
	}
	usr1 := make(chan os.Signal, 1)
	notifyUSR1(usr1)

	time.Sleep(cfg.startDelay) // a slow start: nothing is read meanwhile
	for i := 1; i <= cfg.stderrLines; i++ {
		fmt.Fprintf(os.Stderr, "stderr line %d\n", i)
	}

	if cfg.grandchild {
		if err := spawnGrandchild(rec, cfg.grandchildSid); err != nil {
			fmt.Fprintf(os.Stderr, "mcpserver: grandchild: %v\n", err)
			os.Exit(1)
		}
	}

	a := newApp(cfg, rec)
	if cfg.transport == "stdio" {
		// Set before any request can be served: notify and the init hooks
		// look at it.
		a.out = newStdoutWriter(os.Stdout, cfg.junkStdout, a.watch("stdio"))
	}
	a.build()
	go a.watchUSR1(usr1)
	(revisionRole{a}).waitReadyAt()

	if cfg.transport == "stdio" {
		a.serveStdio(term)
	} else {
		a.serveNet(term)
	}
}

// serveStdio serves one session on stdin/stdout and exits the process.
func (a *app) serveStdio(term <-chan os.Signal) {
	if a.cfg.hugeLine > 0 {
		line := make([]byte, a.cfg.hugeLine+1)
		for i := range a.cfg.hugeLine {
			line[i] = 'x'
		}
		line[a.cfg.hugeLine] = '\n'
		if _, err := os.Stdout.Write(line); err != nil {
			os.Exit(1)
		}
	}
	if a.cfg.junkStdout {
		if _, err := io.WriteString(os.Stdout, junkLine); err != nil {
			os.Exit(1)
		}
	}

	var in io.Reader = os.Stdin
	if a.cfg.ignoreStdinEOF {
		in = noEOFReader{os.Stdin, a.rec}
	}
	in = a.skillsInput((taskRole{a}).extTasksInput(a.watchInput(in)))
	ss := server.NewStdioServer(a.srv)
	server.WithWorkerPoolSize(64)(ss)
	ss.SetErrorLogger(log.New(os.Stderr, "mcpserver: ", 0))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- ss.Listen(ctx, in, a.out) }()

	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintf(os.Stderr, "mcpserver: %v\n", err)
			os.Exit(1)
		}
	case <-term:
		cancel()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
		}
	}
	os.Exit(0)
}

// serveNet serves streamable HTTP or legacy SSE on -addr and exits the
// process on SIGTERM/SIGINT.
func (a *app) serveNet(term <-chan os.Signal) {
	ln, err := net.Listen("tcp", a.cfg.addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcpserver: %v\n", err)
		os.Exit(1)
	}
	base := "http://" + ln.Addr().String()
	mux := http.NewServeMux()
	var url string
	var closeSessions func()
	switch a.cfg.transport {
	case "http":
		// Stateful, like the reference SDKs: an unknown session ID gets 404.
		h := server.NewStreamableHTTPServer(a.srv, server.WithEndpointPath("/mcp"), server.WithStateful(true))
		mux.Handle("/mcp", (revisionRole{a}).discoverEmptyHTTP(taskRole{a}.extTasksHTTP(a.trackStreamable(h))))
		url = base + "/mcp"
		closeSessions = func() { h.CloseSessions(context.Background()) }
	case "sse":
		s := server.NewSSEServer(a.srv, server.WithBaseURL(base),
			server.WithSessionIDGenerator(sseSessionID))
		mux.Handle("/sse", a.trackSSE(s))
		mux.Handle("/message", s)
		url = base + "/sse"
		closeSessions = s.CloseSessions
	}
	hs := &http.Server{Handler: a.recordHTTP(a.watchPOST(mux)), ReadHeaderTimeout: 10 * time.Second}

	if _, err := fmt.Fprintf(os.Stdout, "URL %s\n", url); err != nil {
		os.Exit(1)
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()

	select {
	case err := <-errc:
		fmt.Fprintf(os.Stderr, "mcpserver: %v\n", err)
		os.Exit(1)
	case <-term:
		closeSessions()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = hs.Shutdown(ctx)
		cancel()
	}
	os.Exit(0)
}

// recordHTTP records, for tests, each DELETE (a client ending its session)
// as "http delete <path>" and the value of an X-Test request header as
// "header X-Test <value>" (once per distinct value).
func (a *app) recordHTTP(h http.Handler) http.Handler {
	var seen sync.Map
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			a.rec.event("http delete %s", r.URL.Path)
		}
		if v := r.Header.Get("X-Test"); v != "" {
			if _, dup := seen.LoadOrStore(v, true); !dup {
				a.rec.event("header X-Test %s", v)
			}
		}
		h.ServeHTTP(w, r)
	})
}
