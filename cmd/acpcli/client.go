package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// permissionMode is how session/request_permission is answered.
type permissionMode int

const (
	permReject permissionMode = iota // choose a reject option (stdin is not a terminal)
	permAsk                          // ask on stderr, read the choice from stdin
	permAllow                        // --yes: choose allow_once, else allow_always
)

// cliClient is acpcli's side of ACP: it renders session updates and answers
// permission requests. It offers no file system or terminal methods.
type cliClient struct {
	r       *renderer
	mode    permissionMode
	lines   *lineReader
	barrier *updateBarrier
	servers *serverWatch // the MCP servers' states acpgate reports

	mu     sync.Mutex
	cancel chan struct{} // closed once the current turn is being cancelled
}

func newCLIClient(r *renderer, mode permissionMode, lines *lineReader, barrier *updateBarrier) *cliClient {
	return &cliClient{r: r, mode: mode, lines: lines, barrier: barrier, servers: newServerWatch(), cancel: make(chan struct{})}
}

// beginTurn resets the cancellation state for a new prompt turn.
func (c *cliClient) beginTurn() {
	c.mu.Lock()
	c.cancel = make(chan struct{})
	c.mu.Unlock()
}

// cancelTurn makes pending and future permission requests of this turn
// answer "cancelled", as ACP asks of a client that cancels a turn.
func (c *cliClient) cancelTurn() {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.cancel:
	default:
		close(c.cancel)
	}
}

func (c *cliClient) cancelled() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cancel
}

// SessionUpdate renders a session/update notification.
func (c *cliClient) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	c.r.Update(n.Update)
	if u := n.Update.SessionInfoUpdate; u != nil && u.Meta != nil {
		c.servers.report(u.Meta, false)
	}
	c.barrier.done()
	return nil
}

// RequestPermission answers session/request_permission according to the
// permission mode.
func (c *cliClient) RequestPermission(ctx context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	c.barrier.wait(ctx, time.Second)
	title := c.r.toolTitle(p.ToolCall)
	cancelled := c.cancelled()
	select {
	case <-cancelled:
		c.r.Notef("permission: %s → cancelled (the turn is being cancelled)", title)
		return cancelledOutcome(), nil
	default:
	}
	switch c.mode {
	case permAllow:
		if o, ok := pickOption(p.Options, acp.PermissionOptionKindAllowOnce, acp.PermissionOptionKindAllowAlways); ok {
			c.r.Notef("permission: %s → %s [%s] (--yes)", title, o.Name, o.Kind)
			return selectedOutcome(o), nil
		}
		return c.reject(title, p.Options, "--yes, but no allow option was offered"), nil
	case permAsk:
		return c.ask(ctx, title, p.Options, cancelled), nil
	}
	return c.reject(title, p.Options, "stdin is not a terminal and --yes was not given"), nil
}

// ask shows the options on stderr and reads the choice from stdin.
func (c *cliClient) ask(ctx context.Context, title string, opts []acp.PermissionOption, cancelled <-chan struct{}) acp.RequestPermissionResponse {
	if len(opts) == 0 {
		c.r.Notef("permission: %s → cancelled (no options offered)", title)
		return cancelledOutcome()
	}
	c.r.Notef("permission requested: %s", title)
	for i, o := range opts {
		c.r.Notef("  %d) %s [%s]", i+1, o.Name, o.Kind)
	}
	for {
		c.r.Prompt(fmt.Sprintf("choose 1-%d: ", len(opts)))
		select {
		case line, ok := <-c.lines.Lines():
			if !ok {
				return c.reject(title, opts, "end of input")
			}
			n, err := strconv.Atoi(strings.TrimSpace(line))
			if err == nil && n >= 1 && n <= len(opts) {
				return selectedOutcome(opts[n-1])
			}
			c.r.Notef("not a choice: %q", line)
		case <-cancelled:
			c.r.Notef("permission: %s → cancelled", title)
			return cancelledOutcome()
		case <-ctx.Done():
			c.r.Notef("permission: %s → cancelled (%v)", title, context.Cause(ctx))
			return cancelledOutcome()
		}
	}
}

// reject chooses reject_once (else reject_always, else cancels) and says so.
func (c *cliClient) reject(title string, opts []acp.PermissionOption, why string) acp.RequestPermissionResponse {
	if o, ok := pickOption(opts, acp.PermissionOptionKindRejectOnce, acp.PermissionOptionKindRejectAlways); ok {
		c.r.Notef("permission: %s → %s [%s]: %s", title, o.Name, o.Kind, why)
		return selectedOutcome(o)
	}
	c.r.Notef("permission: %s → cancelled (no reject option offered): %s", title, why)
	return cancelledOutcome()
}

// pickOption returns the first option of the first kind in kinds present.
func pickOption(opts []acp.PermissionOption, kinds ...acp.PermissionOptionKind) (acp.PermissionOption, bool) {
	for _, k := range kinds {
		for _, o := range opts {
			if o.Kind == k {
				return o, true
			}
		}
	}
	return acp.PermissionOption{}, false
}

func selectedOutcome(o acp.PermissionOption) acp.RequestPermissionResponse {
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{
		Selected: &acp.RequestPermissionOutcomeSelected{OptionId: o.OptionId, Outcome: "selected"},
	}}
}

func cancelledOutcome() acp.RequestPermissionResponse {
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{
		Cancelled: &acp.RequestPermissionOutcomeCancelled{Outcome: "cancelled"},
	}}
}

// ReadTextFile is not offered (clientCapabilities.fs.readTextFile is false).
func (c *cliClient) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsReadTextFile)
}

// WriteTextFile is not offered (clientCapabilities.fs.writeTextFile is false).
func (c *cliClient) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsWriteTextFile)
}

// CreateTerminal is not offered (clientCapabilities.terminal is false).
func (c *cliClient) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalCreate)
}

// KillTerminal is not offered.
func (c *cliClient) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalKill)
}

// TerminalOutput is not offered.
func (c *cliClient) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalOutput)
}

// ReleaseTerminal is not offered.
func (c *cliClient) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalRelease)
}

// WaitForTerminalExit is not offered.
func (c *cliClient) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalWaitForExit)
}

// lineReader reads stdin line by line on one goroutine, started on first
// use, so that prompts and permission answers share one reader.
type lineReader struct {
	r    io.Reader
	once sync.Once
	ch   chan string
}

// Lines returns the channel of lines (without line endings); it is closed
// at end of input.
func (l *lineReader) Lines() <-chan string {
	l.once.Do(func() {
		l.ch = make(chan string)
		go func() {
			defer close(l.ch)
			br := bufio.NewReader(l.r)
			for {
				line, err := br.ReadString('\n')
				if line != "" {
					l.ch <- strings.TrimRight(line, "\r\n")
				}
				if err != nil {
					return
				}
			}
		}()
	})
	return l.ch
}

// maxTapLine is the longest line lineTap keeps; the SDK drops the
// connection on lines over 10 MiB anyway.
const maxTapLine = 16 << 20

// lineTap passes the agent's output through to the SDK unchanged, showing
// each complete line to onLine first (so lines are seen in wire order,
// before the SDK acts on them). Reads block until gate is closed.
type lineTap struct {
	r      io.Reader
	gate   <-chan struct{}
	onLine func([]byte) // nil: no tapping
	buf    []byte
	skip   bool // dropping the rest of an over-long line
}

// Read implements io.Reader.
func (t *lineTap) Read(p []byte) (int, error) {
	<-t.gate
	n, err := t.r.Read(p)
	if n > 0 && t.onLine != nil {
		t.feed(p[:n])
	}
	return n, err
}

func (t *lineTap) feed(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if !t.skip {
				t.buf = append(t.buf, b...)
				if len(t.buf) > maxTapLine {
					t.buf, t.skip = t.buf[:0], true
				}
			}
			return
		}
		if !t.skip {
			t.buf = append(t.buf, b[:i]...)
			t.onLine(t.buf)
		}
		t.buf, t.skip = t.buf[:0], false
		b = b[i+1:]
	}
}

// sessionUpdateParams returns the params of a session/update notification,
// exactly as received, or nil if line is anything else.
func sessionUpdateParams(line []byte) json.RawMessage {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(line, &msg) != nil || msg.Method != acp.ClientMethodSessionUpdate || msg.ID != nil || len(msg.Params) == 0 {
		return nil
	}
	return msg.Params
}

// updateBarrier lets a permission request wait until the session/update
// notifications that arrived before it have been rendered: the SDK runs
// inbound requests at once, on their own goroutines, while notifications
// wait in a queue, so a request can overtake the tool_call it is about.
type updateBarrier struct {
	mu      sync.Mutex
	seen    uint64        // session/update notifications read off the wire
	handled uint64        // session/update notifications rendered
	changed chan struct{} // closed and replaced when handled grows
}

func newUpdateBarrier() *updateBarrier {
	return &updateBarrier{changed: make(chan struct{})}
}

// saw counts a notification read by the tap.
func (b *updateBarrier) saw() {
	b.mu.Lock()
	b.seen++
	b.mu.Unlock()
}

// done counts a rendered notification.
func (b *updateBarrier) done() {
	b.mu.Lock()
	b.handled++
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
}

// wait waits until every notification seen so far has been rendered, for
// at most limit (a notification the SDK cannot decode is never rendered).
func (b *updateBarrier) wait(ctx context.Context, limit time.Duration) {
	b.mu.Lock()
	target := b.seen
	b.mu.Unlock()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		b.mu.Lock()
		handled, changed := b.handled, b.changed
		b.mu.Unlock()
		if handled >= target {
			return
		}
		select {
		case <-changed:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}
