package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// app holds the server and the fault-injection state.
type app struct {
	cfg *config
	rec *recorder
	srv *server.MCPServer

	out *stdoutWriter // stdio mode only

	calls     atomic.Int64 // tools/call requests received
	crashOnce sync.Once
	usr1Mu    sync.Mutex
	watches   sync.Map // session ID -> *writeWatch
	tasks     *taskCancels
	live      *live // -live state; nil without it
}

func newApp(cfg *config, rec *recorder) *app {
	return &app{cfg: cfg, rec: rec}
}

// build creates the MCP server with its hooks, tools, resources and prompts.
func (a *app) build() {
	hooks := &server.Hooks{}
	hooks.AddOnRequestInitialization(a.onRequest)
	hooks.AddBeforeInitialize(func(_ context.Context, _ any, req *mcp.InitializeRequest) {
		a.rec.event("client %s %s", req.Params.ClientInfo.Name, req.Params.ClientInfo.Version)
		caps, _ := json.Marshal(req.Params.Capabilities)
		a.rec.event("capabilities %s", caps)
	})
	hooks.AddBeforeCallTool(func(_ context.Context, _ any, req *mcp.CallToolRequest) {
		a.rec.event("call %s", req.Params.Name)
	})

	opts := []server.ServerOption{
		server.WithToolCapabilities(true),
		server.WithResourceCapabilities(false, false),
		server.WithPromptCapabilities(false),
		server.WithLogging(),
		server.WithRecovery(),
		server.WithHooks(hooks),
	}
	opts = append(opts, (taskRole{a}).taskOptions(hooks)...)
	opts = append(opts, (revisionRole{a}).protocolOptions()...)
	opts = append(opts, a.liveOptions(hooks)...)
	opts = append(opts, (taskRole{a}).extTaskOptions()...)
	opts = append(opts, a.skillOptions()...)
	if a.cfg.pageSize > 0 {
		opts = append(opts, server.WithPaginationLimit(a.cfg.pageSize))
	}
	if a.cfg.instructions != "" {
		opts = append(opts, server.WithInstructions(a.cfg.instructions))
	}
	a.srv = server.NewMCPServer(a.cfg.name, "1.0.0", opts...)
	a.srv.AddNotificationHandler(string(mcp.MethodNotificationInitialized),
		func(context.Context, mcp.JSONRPCNotification) { a.rec.event("initialized") })
	a.srv.AddNotificationHandler(mcp.MethodNotificationRootsListChanged,
		func(context.Context, mcp.JSONRPCNotification) { a.rec.event("roots changed") })

	a.addTools()
	a.addRequestTools()
	a.addResourcesAndPrompts()
	(taskRole{a}).addTaskTools()
	(revisionRole{a}).addModernTools()
	a.addLive()
	a.addListing(hooks)
	(taskRole{a}).addExtTaskTools()
	a.addSkills()
	if a.cfg.sandboxTools {
		a.addSandboxTools()
	}
}

// onRequest runs for every JSON-RPC request, before mcp-go dispatches it.
// Its ctx is the session's (stdio: cancelled at shutdown only; http: the
// HTTP request's; sse: never cancelled), not the per-request one that
// notifications/cancelled cancels. A returned error becomes a JSON-RPC
// error with code -32600 (INVALID_REQUEST) and the error text as message.
func (a *app) onRequest(ctx context.Context, _ any, message any) error {
	raw, ok := message.(json.RawMessage)
	if !ok {
		return nil
	}
	var m struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	if err := (revisionRole{a}).gateProtocol(ctx, mcp.MCPMethod(m.Method)); err != nil {
		return err
	}
	a.recordMetaCapabilities(m.Method, raw)
	switch mcp.MCPMethod(m.Method) {
	case mcp.MethodInitialize:
		return a.gateInitialize(ctx)
	case mcp.MethodSubscriptionsListen:
		if a.live != nil {
			a.live.listening(ctx, raw)
		}
	case mcp.MethodToolsCall:
		if n := a.calls.Add(1); a.cfg.crashAfter > 0 && n > int64(a.cfg.crashAfter) {
			// A second racing call blocks here until the process is gone.
			a.crashOnce.Do(func() {
				fmt.Fprintf(os.Stderr, "crashing after %d calls\n", a.cfg.crashAfter)
				os.Exit(3)
			})
		}
	}
	return nil
}

func (a *app) gateInitialize(ctx context.Context) error {
	if d := a.cfg.initDelay; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return errors.New("initialize abandoned")
		}
	}
	if a.cfg.initHang {
		<-ctx.Done()
		// The session is over (stdio: stdin EOF or a signal). Make sure
		// the error response mcp-go is about to write never appears.
		if a.out != nil {
			a.out.drop()
		}
		return errors.New("initialize abandoned")
	}
	if a.cfg.initError {
		fmt.Fprintln(os.Stderr, "init refused")
		return errors.New("init refused")
	}
	return nil
}

// notify sends a notification to the client of the current request and
// returns once it has been written, so that it precedes the request's
// response (stdio: written straight to stdout; http and sse: sent through
// mcp-go, then waited for, see watch.go).
func (a *app) notify(ctx context.Context, method string, params map[string]any) error {
	n := mcp.JSONRPCNotification{
		JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{
			Method: method,
			Params: mcp.NotificationParams{AdditionalFields: params},
		},
	}
	if a.out != nil {
		return a.out.writeJSON(n)
	}
	b, err := json.Marshal(n) // the very bytes mcp-go will write
	if err != nil {
		return err
	}
	return a.sendAndWait(ctx, b, func() error {
		return a.srv.SendNotificationToClient(ctx, method, params)
	})
}

// watchUSR1 adds usr1_tool on SIGUSR1 (once).
func (a *app) watchUSR1(c <-chan os.Signal) {
	for range c {
		a.usr1Mu.Lock()
		if a.srv.GetTool("usr1_tool") == nil {
			a.addNamedTool("usr1_tool")
			fmt.Fprintln(os.Stderr, "usr1_tool added")
		}
		a.usr1Mu.Unlock()
	}
}

// recorder appends event lines to the -record file; a nil recorder or one
// without a file does nothing.
type recorder struct {
	mu sync.Mutex
	f  *os.File
}

func openRecorder(path string) (*recorder, error) {
	if path == "" {
		return &recorder{}, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("record file: %w", err)
	}
	return &recorder{f: f}, nil
}

func (r *recorder) event(format string, args ...any) {
	if r == nil || r.f == nil {
		return
	}
	line := fmt.Sprintf(format, args...) + "\n"
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _ = r.f.WriteString(line) // one write(2) per line thanks to O_APPEND
}

const junkLine = "this is not json\n"

// stdoutWriter is the stdio transport's writer. mcp-go writes every message
// as one Write call of one complete line; this writer serialises those
// calls with its own direct writes, optionally prefixes each with the junk
// line (in the same write), and reports what it wrote to watch.
type stdoutWriter struct {
	mu      sync.Mutex
	w       io.Writer
	junk    bool
	dropped atomic.Bool
	watch   *writeWatch
}

func newStdoutWriter(w io.Writer, junk bool, watch *writeWatch) *stdoutWriter {
	return &stdoutWriter{w: w, junk: junk, watch: watch}
}

func (o *stdoutWriter) Write(p []byte) (int, error) {
	if o.dropped.Load() {
		return len(p), nil
	}
	buf := p
	if o.junk {
		buf = make([]byte, 0, len(junkLine)+len(p))
		buf = append(append(buf, junkLine...), p...)
	}
	o.mu.Lock()
	_, err := o.w.Write(buf)
	o.mu.Unlock()
	if err != nil {
		return 0, err
	}
	o.watch.saw(p)
	return len(p), nil
}

func (o *stdoutWriter) writeJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = o.Write(append(b, '\n'))
	return err
}

// drop discards everything written from now on.
func (o *stdoutWriter) drop() { o.dropped.Store(true) }

// noEOFReader turns EOF into blocking forever (-ignore-stdin-eof),
// recording "stdin eof" once it sees it.
type noEOFReader struct {
	r   io.Reader
	rec *recorder
}

func (n noEOFReader) Read(p []byte) (int, error) {
	k, err := n.r.Read(p)
	if errors.Is(err, io.EOF) {
		if k > 0 {
			return k, nil
		}
		n.rec.event("stdin eof")
		select {}
	}
	return k, err
}

// spawnGrandchild starts this binary again in -grandchild-mode, in our
// process group (or, with setsid, in a new session), with its standard
// streams on /dev/null.
func spawnGrandchild(rec *recorder, setsid bool) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, "-"+hiddenFlag)
	if setsid {
		cmd.SysProcAttr = newSession()
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	fmt.Fprintf(os.Stderr, "grandchild pid %d\n", pid)
	rec.event("grandchild %d", pid)
	go func() { _ = cmd.Wait() }() // reap it if it dies while we live
	return nil
}

// runGrandchild ignores SIGTERM and sleeps, never reading its stdin
// (/dev/null); it gives up after an hour so that a test which fails to kill
// it does not leak it forever.
func runGrandchild() {
	signal.Ignore(syscall.SIGTERM)
	time.Sleep(time.Hour)
	os.Exit(0)
}

// takeLines returns r without the lines take takes (reports true for),
// each line given to take before it is read from the result: the fake's
// extensions answer their own requests there, before mcp-go reads the
// rest, and the recorder sees every message.
func takeLines(r io.Reader, take func(line []byte) bool) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 && !take(line) {
				if _, werr := pw.Write(line); werr != nil {
					return
				}
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}
