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
// A line that is not JSON is answered with -32700 (id null); a message
// that is not a request, a notification or a response with -32600; a
// method the handler does not know with -32601 (the handler says so with
// ErrMethodNotFound).
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
// is the raw params member (nil when absent). It is not modified by the
// Conn once handed to a handler.
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
	// skipped and answered -32600 (id null).
	MaxLine int
	// Queue is how many notifications wait to be handled at most (default
	// 1024).
	Queue int
	// CancelMethod, if set, is the notification sent, with params
	// {"requestId": id}, when the context of a Call ends before its
	// answer ($/cancel_request in ACP).
	CancelMethod string
	// Logger gets the Conn's few lines (default: discard).
	Logger *slog.Logger
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

	mu      sync.Mutex
	nextID  int64
	pending map[string]chan *message // our calls, by id
	closed  bool

	dropped  atomic.Int64 // notifications dropped since the last report
	reported atomic.Int64 // unix nanoseconds of the last report
}

// New starts a Conn reading in and writing out. Each message written is
// one line, written with one Write call.
func New(in io.Reader, out io.Writer, opts Options) *Conn {
	if opts.MaxLine <= 0 {
		opts.MaxLine = 64 << 20
	}
	if opts.Queue <= 0 {
		opts.Queue = 1024
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Conn{opts: opts, in: bufio.NewReaderSize(in, 64<<10), out: out,
		done: make(chan struct{}), queue: make(chan *Request, opts.Queue), pending: map[string]chan *message{}}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.active.Add(1)
	go c.notifications()
	go c.read()
	return c
}

// Done is closed when the connection has ended (the reader's EOF or
// error, or Close).
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

// message is one message read, of any kind.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
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

// readLine returns the next line (without its newline), at most MaxLine
// bytes; a longer one is skipped and answered.
func (c *Conn) readLine() ([]byte, error) {
	var line []byte
	for {
		frag, err := c.in.ReadSlice('\n')
		if len(line)+len(frag) > c.opts.MaxLine+1 {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = c.in.ReadSlice('\n')
			}
			c.reply(json.RawMessage("null"), nil, &Error{Code: CodeInvalidRequest, Message: fmt.Sprintf("message over %d bytes", c.opts.MaxLine)})
			if err != nil {
				return nil, err
			}
			line = line[:0]
			continue
		}
		line = append(line, frag...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte{'\n'}), err
	}
}

// dispatch handles one line.
func (c *Conn) dispatch(line []byte) {
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		c.reply(json.RawMessage("null"), nil, &Error{Code: CodeParseError, Message: "Parse error: " + err.Error()})
		return
	}
	switch {
	case m.Method != "":
		r := &Request{ID: m.ID, Method: m.Method, Params: m.Params}
		if !r.IsCall() && c.opts.Preempt != nil && c.opts.Preempt(r) {
			return
		}
		if r.IsCall() {
			c.active.Add(1)
			go c.serve(r)
			return
		}
		select {
		case c.queue <- r:
		default:
			c.drop()
		}
	case m.ID != nil && (m.Result != nil || m.Error != nil):
		c.mu.Lock()
		ch := c.pending[string(m.ID)]
		delete(c.pending, string(m.ID))
		c.mu.Unlock()
		if ch != nil {
			ch <- &m
		}
	default:
		id := m.ID
		if id == nil {
			id = json.RawMessage("null")
		}
		c.reply(id, nil, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: neither a request, a notification nor a response"})
	}
}

// serve runs the handler of request r and answers it.
func (c *Conn) serve(r *Request) {
	defer c.active.Done()
	res, err := c.opts.Handler(c.ctx, r)
	c.reply(r.ID, res, err)
}

// notifications handles the queued notifications in order.
func (c *Conn) notifications() {
	defer c.active.Done()
	for r := range c.queue {
		if _, err := c.opts.Handler(c.ctx, r); err != nil {
			c.opts.Logger.Debug("notification not handled", "method", r.Method, "err", err)
		}
	}
}

// drop counts a notification the queue had no room for, and reports the
// count at most once a second.
func (c *Conn) drop() {
	n := c.dropped.Add(1)
	now := time.Now().UnixNano()
	last := c.reported.Load()
	if now-last < int64(time.Second) || !c.reported.CompareAndSwap(last, now) {
		return
	}
	c.dropped.Add(-n)
	c.opts.Logger.Warn("client notifications dropped: more arrived at once than can wait", "dropped", n, "queue", c.opts.Queue)
}

// reply writes the answer to request id: res, or the error err stands for.
func (c *Conn) reply(id json.RawMessage, res any, err error) {
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
	_ = c.write(b)
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
// waiting until the answer comes, ctx ends (then Options.CancelMethod is
// sent) or the connection ends (ErrClosed). An error response is an
// *Error.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	c.nextID++
	id := json.RawMessage(strconv.FormatInt(c.nextID, 10))
	ch := make(chan *message, 1)
	c.pending[string(id)] = ch
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
	select {
	case m := <-ch:
		if m.Error != nil {
			return m.Error
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
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
	close(c.queue)
	close(c.done)
	if n := c.dropped.Swap(0); n > 0 {
		c.opts.Logger.Warn("client notifications dropped: more arrived at once than can wait", "dropped", n, "queue", c.opts.Queue)
	}
}
