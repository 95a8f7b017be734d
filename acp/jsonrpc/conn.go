// Package jsonrpc is a JSON-RPC 2.0 connection over newline-delimited
// JSON, ACP's stdio framing, in the manner of golang.org/x/tools'
// internal/jsonrpc2_v2: one place for the state of requests in flight both
// ways, preemptive handling (cancellation) before any queue, replies
// written out of order as each handler finishes.
//
// A Conn reads messages from one reader on one goroutine. A request runs
// its handler on a goroutine of its own and is answered when the handler
// returns, whatever order that is in. Notifications are handled one at a
// time, in the order they came, from a bounded queue: a client that
// writes more than the queue holds at once gets the excess dropped, with
// one log line a second saying how many, and the connection goes on (it
// is never closed for that). Options.Preempt sees every notification
// first, on the reading goroutine, so that a cancellation is acted on
// before what is queued. Responses to the Conn's own calls (Call) are matched by id.
//
// The peer's requests in flight — being handled, or handled and waiting
// for their answer to be written — are bounded too (Options.MaxInFlight).
// A request beyond the bound is not handled: the reading goroutine answers
// it at once with -32603 naming the bound, counted with one log line a
// second. Reading never waits for a handler, so the bound cannot
// deadlock: cancellations ($/cancel_request, Preempt) and the answers to
// the Conn's own calls are read whatever the handlers wait for (a handler
// waiting for the peer's answer to a Call holds its slot, and the answer
// still gets through). Reading waits only for writing: while the peer does
// not read what the Conn writes, the refusal cannot be written, so the
// Conn stops reading and the pipe pushes back. Memory stays O(bound)
// whatever the peer writes; once the peer reads again, every request it
// sent is answered, handled or refused. (A peer that blocks writing while
// it does not read deadlocks with any bounded reader.)
//
// A line that is not JSON is answered with -32700; a message that is not
// a JSON-RPC 2.0 request, notification or response, or a line longer than
// Options.MaxLine, with -32600 naming the member at fault (envelope.go);
// each with the id the message starts with, or null. A method the
// handler does not know is answered -32601 (the handler says so with
// ErrMethodNotFound). A response whose error member is malformed fails
// the call it answers with an internal error, as does one longer than
// MaxLine.
//
// When Options.CancelMethod is set ($/cancel_request in ACP), the
// notification of that name ends the context of the request it names,
// and a Call whose context ends sends it. A Call returns only after the
// notifications read before its answer have been handled, so that what a
// peer says before answering (a cancellation, progress) is seen first.
package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The JSON-RPC error codes the Conn answers with.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Error is a JSON-RPC error object. A handler returns one (or wraps one) to
// answer with it; Call returns one for an error response.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error implements error.
func (e *Error) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// ErrMethodNotFound is what a handler returns (or wraps) for a method it
// does not know: the request is answered -32601 naming the method; a
// notification is dropped with a debug line.
var ErrMethodNotFound = errors.New("method not found")

// ErrClosed is what Call returns once the connection has ended.
var ErrClosed = errors.New("jsonrpc: connection closed")

// Request is one request (ID set) or notification (ID nil) read. Params
// is the raw params member (nil when absent), a View of the line read. It
// is not modified by the Conn once handed to a handler.
type Request struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage
}

// IsCall reports whether r is a request (to be answered).
func (r *Request) IsCall() bool { return r.ID != nil }

// Handler handles a request or a notification. ctx ends when the
// connection does. For a request, the result (marshalled; nil is null) or
// the error answers it.
type Handler func(ctx context.Context, r *Request) (result any, err error)

// Options configure a Conn. Handler is required.
type Options struct {
	Handler Handler
	// Preempt, if set, sees each notification first, on the reading
	// goroutine, before the queue, and reports whether it has handled it
	// (cancellation is handled so, ahead of what is queued). It must not
	// block.
	Preempt func(r *Request) bool
	// MaxLine bounds one message (default 64 MiB): a longer line is
	// skipped and answered -32600 with the id it starts with (a response
	// fails the call it answers).
	MaxLine int
	// Queue is how many notifications wait to be handled at most (default
	// 1024).
	Queue int
	// MaxInFlight is how many of the peer's requests are handled, or wait
	// for their answer to be written, at most (default 1024); one more is
	// answered at once with -32603 (see the package doc).
	MaxInFlight int
	// CancelMethod, if set, is the notification, with params
	// {"requestId": id}, that cancels a request both ways: sent when the
	// context of a Call ends before its answer, and, read, ending the
	// context of the handler of the request it names ($/cancel_request in
	// ACP).
	CancelMethod string
	// Logger gets the Conn's few lines (default: discard).
	Logger *slog.Logger
}

// Then answers a request with Result and, once the answer has been
// written, runs After on a goroutine of its own (notifications about
// what the answer created follow it).
type Then struct {
	Result any
	After  func()
}

// Conn is one connection. Its methods are safe for concurrent use.
type Conn struct {
	opts Options
	in   *bufio.Reader
	out  io.Writer

	ctx    context.Context // ends when reading ends
	cancel context.CancelFunc
	done   chan struct{} // closed when reading has ended
	queue  chan *Request
	active sync.WaitGroup // handlers running, and the notification worker

	writeMu  sync.Mutex
	writeErr error

	mu       sync.Mutex
	nextID   int64
	pending  map[string]chan answer        // our calls, by id key
	inflight map[string]context.CancelFunc // the peer's requests being handled, by id key
	busy     int                           // the peer's requests handled or waiting to be written (MaxInFlight)
	closed   bool

	// The notifications' progress, for the barrier of Call: enqueued
	// counts those queued, completed those handled; advanced is closed
	// (and replaced) at each completion.
	nmu       sync.Mutex
	enqueued  uint64
	completed uint64
	advanced  chan struct{}

	dropped tally // notifications the queue had no room for
	refused tally // requests over MaxInFlight
}

// tally counts events that are logged at most once a second, with how
// many there were since the last line.
type tally struct {
	n        atomic.Int64 // since the last report
	reported atomic.Int64 // unix nanoseconds of the last report
}

// add counts one event and calls report with the count when a second has
// passed since the last report.
func (t *tally) add(report func(n int64)) {
	n := t.n.Add(1)
	now := time.Now().UnixNano()
	last := t.reported.Load()
	if now-last < int64(time.Second) || !t.reported.CompareAndSwap(last, now) {
		return
	}
	t.n.Add(-n)
	report(n)
}

// flush reports what was counted and not yet reported, if anything.
func (t *tally) flush(report func(n int64)) {
	if n := t.n.Swap(0); n > 0 {
		report(n)
	}
}

// answer is a response to one of our calls: its result or error, and how
// many notifications had been queued when it was read.
type answer struct {
	result    json.RawMessage
	err       *Error
	watermark uint64
}

// New returns a Conn reading in (once Start is called) and writing out.
// Each message written is one line, written with one Write call.
func New(in io.Reader, out io.Writer, opts Options) *Conn {
	if opts.MaxLine <= 0 {
		opts.MaxLine = 64 << 20
	}
	if opts.Queue <= 0 {
		opts.Queue = 1024
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = 1024
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Conn{opts: opts, in: bufio.NewReaderSize(in, 64<<10), out: out,
		done: make(chan struct{}), queue: make(chan *Request, opts.Queue),
		pending: map[string]chan answer{}, inflight: map[string]context.CancelFunc{}, advanced: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c
}

// Start starts reading (and handling) messages; it is called once, after
// what the handler needs of the Conn is in place. Calls and notifications
// may be sent before it.
func (c *Conn) Start() {
	c.active.Add(1)
	go c.notifications()
	go c.read()
}

// Done is closed when the connection has ended (the reader's EOF or
// error).
func (c *Conn) Done() <-chan struct{} { return c.done }

// Wait returns once every handler has returned and its answer was written,
// or ctx ended (its error then).
func (c *Conn) Wait(ctx context.Context) error {
	all := make(chan struct{})
	go func() { c.active.Wait(); close(all) }()
	select {
	case <-all:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// read reads messages until the input ends.
func (c *Conn) read() {
	defer c.end()
	for {
		line, err := c.readLine()
		if len(bytes.TrimSpace(line)) > 0 {
			c.dispatch(line)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				c.opts.Logger.Info("reading the connection failed", "err", err)
			}
			return
		}
	}
}

// headKept is how much of a line over MaxLine is kept to find its id.
const headKept = 64 << 10

// readLine returns the next line (without its newline), at most MaxLine
// bytes, in a buffer of its own; a longer one is skipped and answered
// (tooLong). A line longer than the reader's buffer is kept as copies of
// its fragments, joined once at its end: reading it costs twice its size
// at most, and its size after (a buffer grown by appending would cost
// several times its size, each growth a new copy).
func (c *Conn) readLine() ([]byte, error) {
	var frags [][]byte // the full buffers of a long line, copied
	size := 0
	for {
		frag, err := c.in.ReadSlice('\n')
		if size+len(frag) > c.opts.MaxLine+1 {
			head := join(frags, frag, headKept)
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = c.in.ReadSlice('\n')
			}
			c.tooLong(head)
			if err != nil {
				return nil, err
			}
			frags, size = nil, 0
			continue
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			frags = append(frags, bytes.Clone(frag))
			size += len(frag)
			continue
		}
		return bytes.TrimSuffix(join(frags, frag, size+len(frag)), []byte{'\n'}), err
	}
}

// join returns at most the first n bytes of frags followed by last, in a
// new buffer.
func join(frags [][]byte, last []byte, n int) []byte {
	total := len(last)
	for _, f := range frags {
		total += len(f)
	}
	b := make([]byte, 0, min(n, total))
	for _, f := range append(frags, last) {
		b = append(b, f[:min(len(f), cap(b)-len(b))]...)
	}
	return b
}

// tooLong answers a line over MaxLine, of which head is the start: an
// answer to one of our calls fails the call, anything else is answered
// -32600 with the id it starts with.
func (c *Conn) tooLong(head []byte) {
	id, response := LeadingID(head)
	if response {
		c.opts.Logger.Warn("peer answered with a message over the size limit; the call fails", "id", string(id), "limit", c.opts.MaxLine)
		c.answered(id, answer{err: &Error{Code: CodeInternalError, Message: fmt.Sprintf("Internal error: the answer is larger than %d bytes", c.opts.MaxLine)}})
		return
	}
	c.opts.Logger.Warn("peer sent a message over the size limit", "id", string(id), "limit", c.opts.MaxLine)
	c.reply(id, nil, &Error{Code: CodeInvalidRequest, Message: fmt.Sprintf("Invalid Request: message larger than %d bytes", c.opts.MaxLine)})
}

// dispatch handles one line.
func (c *Conn) dispatch(line []byte) {
	e, id, perr := parse(line)
	if perr != nil {
		c.opts.Logger.Warn("peer message rejected", "method", e.method, "id", string(id), "code", perr.Code, "error", perr.Message)
		c.reply(id, nil, perr)
		return
	}
	switch e.kind {
	case kindResponse:
		a := answer{result: e.result}
		if e.err != nil {
			var repaired bool
			if a.err, repaired = repairError(e.err); repaired {
				c.opts.Logger.Warn("peer answered with a malformed error; the call fails with an internal error", "id", string(e.id), "kind", Kind(e.err))
			}
		}
		if e.id != nil {
			c.answered(e.id, a)
		}
	case kindRequest:
		c.request(&Request{ID: e.id, Method: e.method, Params: e.params})
	default:
		c.notification(&Request{Method: e.method, Params: e.params})
	}
}

// request starts the handler of r on a goroutine of its own, or, with
// MaxInFlight requests in flight, refuses r at once (on the reading
// goroutine: while the refusal cannot be written, reading waits).
func (c *Conn) request(r *Request) {
	ctx, cancel := context.WithCancel(c.ctx)
	key := idKey(r.ID)
	if !c.admit(key, cancel) {
		cancel()
		c.refused.add(c.reportRefused)
		_ = c.reply(r.ID, nil, &Error{Code: CodeInternalError, Message: fmt.Sprintf(
			"Internal error: %d requests are in flight, the most handled at once; this one was not handled", c.opts.MaxInFlight)})
		return
	}
	c.active.Add(1)
	go func() {
		defer c.active.Done()
		res, err := c.opts.Handler(ctx, r)
		c.handled(key)
		cancel()
		var after func()
		if t, ok := res.(Then); ok {
			res, after = t.Result, t.After
		}
		written := c.reply(r.ID, res, err)
		c.release()
		if written == nil && after != nil {
			go after()
		}
	}()
}

// admit takes one of the MaxInFlight slots for the peer's request of id
// key, cancellable with cancel, and reports whether there was one.
func (c *Conn) admit(key string, cancel context.CancelFunc) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.busy >= c.opts.MaxInFlight {
		return false
	}
	c.busy++
	c.inflight[key] = cancel
	return true
}

// handled forgets the cancellation of the request of id key: its handler
// has returned (its slot is held until its answer is written: release).
func (c *Conn) handled(key string) {
	c.mu.Lock()
	delete(c.inflight, key)
	c.mu.Unlock()
}

// release gives back the slot of a request whose answer was written (or
// failed to be).
func (c *Conn) release() {
	c.mu.Lock()
	c.busy--
	c.mu.Unlock()
}

// reportRefused logs n requests refused over MaxInFlight.
func (c *Conn) reportRefused(n int64) {
	c.opts.Logger.Warn("peer requests refused: more were in flight than are handled at once", "refused", n, "limit", c.opts.MaxInFlight)
}

// notification handles a cancellation at once, gives Preempt its turn,
// and queues the rest (dropping what does not fit).
func (c *Conn) notification(r *Request) {
	if c.opts.CancelMethod != "" && r.Method == c.opts.CancelMethod {
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(r.Params, &p) == nil && p.RequestID != nil {
			c.mu.Lock()
			cancel := c.inflight[idKey(p.RequestID)]
			c.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		}
		return
	}
	if c.opts.Preempt != nil && c.opts.Preempt(r) {
		return
	}
	c.nmu.Lock()
	select {
	case c.queue <- r:
		c.enqueued++
	default:
		c.dropped.add(c.reportDropped)
	}
	c.nmu.Unlock()
}

// answered hands an answer to the call waiting for id, if one is.
func (c *Conn) answered(id json.RawMessage, a answer) {
	c.nmu.Lock()
	a.watermark = c.enqueued
	c.nmu.Unlock()
	key := idKey(id)
	c.mu.Lock()
	ch := c.pending[key]
	delete(c.pending, key)
	c.mu.Unlock()
	if ch != nil {
		ch <- a
	}
}

// idKey is the canonical form of a JSON-RPC id (compacted JSON).
func idKey(id json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return string(id)
	}
	return b.String()
}

// notifications handles the queued notifications in order.
func (c *Conn) notifications() {
	defer c.active.Done()
	for r := range c.queue {
		if _, err := c.opts.Handler(c.ctx, r); err != nil && !(errors.Is(err, ErrMethodNotFound) && strings.HasPrefix(r.Method, "_")) {
			c.opts.Logger.Debug("notification not handled", "method", r.Method, "err", err)
		}
		c.nmu.Lock()
		c.completed++
		close(c.advanced)
		c.advanced = make(chan struct{})
		c.nmu.Unlock()
	}
}

// handledUpTo waits until the first n notifications queued have been
// handled, ctx ends or the connection does.
func (c *Conn) handledUpTo(ctx context.Context, n uint64) error {
	for {
		c.nmu.Lock()
		done, advanced := c.completed >= n, c.advanced
		c.nmu.Unlock()
		if done {
			return nil
		}
		select {
		case <-advanced:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.done:
			return ErrClosed
		}
	}
}

// reportDropped logs n notifications the queue had no room for.
func (c *Conn) reportDropped(n int64) {
	c.opts.Logger.Warn("peer notifications dropped: more arrived at once than can wait", "dropped", n, "queue", c.opts.Queue)
}

// reply writes the answer to request id (nil: null): res, or the error
// err stands for.
func (c *Conn) reply(id json.RawMessage, res any, err error) error {
	if id == nil {
		id = json.RawMessage("null")
	}
	out := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result,omitempty"`
		Error   *Error          `json:"error,omitempty"`
	}{JSONRPC: "2.0", ID: id}
	if err != nil {
		out.Error = asError(err)
	} else if res == nil {
		out.Result = json.RawMessage("null")
	} else {
		out.Result = res
	}
	b, merr := json.Marshal(out)
	if merr != nil {
		b, _ = json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *Error          `json:"error"`
		}{"2.0", id, &Error{Code: CodeInternalError, Message: "Internal error: the result cannot be encoded: " + merr.Error()}})
	}
	return c.write(b)
}

// asError is the JSON-RPC error err answers with.
func asError(err error) *Error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, ErrMethodNotFound):
		return &Error{Code: CodeMethodNotFound, Message: "Method not found: " + err.Error()}
	default:
		return &Error{Code: CodeInternalError, Message: "Internal error: " + err.Error()}
	}
}

// write writes one message as one line. After a failed write every later
// one fails the same way.
func (c *Conn) write(b []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.writeErr != nil {
		return c.writeErr
	}
	if _, err := c.out.Write(append(b, '\n')); err != nil {
		c.writeErr = err
		return err
	}
	return nil
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params any) error {
	b, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitempty"`
	}{"2.0", method, params})
	if err != nil {
		return err
	}
	return c.write(b)
}

// Call sends a request and decodes its result into result (nil: ignored),
// waiting until the answer comes and the notifications read before it
// have been handled, ctx ends (then Options.CancelMethod is sent) or the
// connection ends (ErrClosed). Once the peer has closed its end the
// request is still written (it may still read), and ErrClosed returned
// at once. An error response is an *Error. The answer's line is a buffer
// of its own, which the Conn neither reads nor writes once Call has
// returned: a View decoded into result may be kept and changed.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	c.mu.Lock()
	closed := c.closed
	c.nextID++
	id := json.RawMessage(strconv.FormatInt(c.nextID, 10))
	ch := make(chan answer, 1)
	if !closed {
		c.pending[string(id)] = ch
	}
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, string(id))
		c.mu.Unlock()
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  any             `json:"params,omitempty"`
	}{"2.0", id, method, params})
	if err == nil {
		err = c.write(b)
	}
	if err != nil {
		forget()
		return err
	}
	if closed {
		// The peer closed its end: it may still read (a last word, such
		// as a disconnect), but no answer can come.
		return ErrClosed
	}
	select {
	case a := <-ch:
		if err := c.handledUpTo(ctx, a.watermark); err != nil {
			return err
		}
		if a.err != nil {
			return a.err
		}
		if result != nil {
			return json.Unmarshal(a.result, result)
		}
		return nil
	case <-ctx.Done():
		forget()
		if c.opts.CancelMethod != "" {
			// Off the caller's path: a peer that does not read must not
			// hold up the caller's return.
			go func() { _ = c.Notify(c.opts.CancelMethod, map[string]json.RawMessage{"requestId": id}) }()
		}
		return ctx.Err()
	case <-c.done:
		forget()
		return ErrClosed
	}
}

// end ends the connection once reading has: handlers' contexts end, the
// notification worker stops after what is queued, calls waiting for an
// answer fail with ErrClosed.
func (c *Conn) end() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	c.nmu.Lock()
	close(c.queue)
	c.nmu.Unlock()
	close(c.done)
	c.dropped.flush(c.reportDropped)
	c.refused.flush(c.reportRefused)
}
