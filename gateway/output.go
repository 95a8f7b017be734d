package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// This file bounds what one model call writes: the text and thinking of
// its answer, and the arguments of each tool call. Providers pass every
// piece to the runner as it streams in (Delta); the runner counts them
// here, the one place the caps are kept, and stops the call (cancelling
// its context) at the first piece past a cap. A provider stops reading as
// soon as its context is done and returns what it received, so that what
// was received up to the cap is kept.

// The default output caps (OutputLimits).
const (
	// DefaultMaxAnswerBytes bounds the text and thinking of one answer:
	// 4 MiB, some eight times the longest answer a provider gives today
	// (128k output tokens).
	DefaultMaxAnswerBytes = 4 << 20
	// DefaultMaxArgumentBytes bounds the arguments of one tool call: 1 MiB.
	DefaultMaxArgumentBytes = 1 << 20
)

// ErrAnswerTooLong is wrapped by the error of a turn whose model answer
// (its text and thinking) went past OutputLimits.MaxAnswerBytes: the rest
// of the answer was not read, what came before the cap is kept, and the
// turn ends (StopMaxTokens).
var ErrAnswerTooLong = errors.New("the model's answer is longer than the limit")

// ErrArgumentsTooLong is wrapped by the error of a tool call whose
// arguments went past OutputLimits.MaxArgumentBytes: the call is not
// run, and the model is told so as its result.
var ErrArgumentsTooLong = errors.New("the arguments of a tool call are longer than the limit")

// OutputLimits bound what one model call may write. Zero fields take the
// defaults.
type OutputLimits struct {
	// MaxAnswerBytes bounds the bytes of text and thinking of one answer
	// (default DefaultMaxAnswerBytes).
	MaxAnswerBytes int
	// MaxArgumentBytes bounds the bytes of the arguments of one tool call
	// (default DefaultMaxArgumentBytes).
	MaxArgumentBytes int
}

// withDefaults fills the zero fields.
func (l OutputLimits) withDefaults() OutputLimits {
	if l.MaxAnswerBytes <= 0 {
		l.MaxAnswerBytes = DefaultMaxAnswerBytes
	}
	if l.MaxArgumentBytes <= 0 {
		l.MaxArgumentBytes = DefaultMaxArgumentBytes
	}
	return l
}

// CallDelta is a piece of a tool call's arguments as it streams in.
type CallDelta struct {
	// Index tells the calls of one answer apart (the provider's own
	// numbering: the same for every piece of one call).
	Index int
	// ID and Name are the call's, as the answer will give them.
	ID, Name string
	// Arguments is the piece.
	Arguments string
}

// outputGuard counts one model call's output against its limits.
type outputGuard struct {
	limits         OutputLimits
	stop           context.CancelCauseFunc
	text, thinking int         // bytes of each passed on
	args           map[int]int // bytes of arguments by CallDelta.Index
	long           *ToolCall   // the call whose arguments went past the cap

	mu  sync.Mutex
	err error // why the call was stopped (nil: it was not)
}

// guardKey is the context key of the guard of the model call a request
// is made for (BoundEvents).
type guardKey struct{}

// Complete makes one model call with req, its output bounded by limits
// (zero fields: the defaults): text and thinking go to onDelta (nil:
// nowhere) as they stream in, up to the cap. At the first piece past a
// cap it stops reading the answer and returns what is kept with an error
// wrapping ErrAnswerTooLong (the text and thinking up to the cap, no tool
// call) or ErrArgumentsTooLong (the call's arguments replaced by {}).
// Every model call acpgate makes goes through it (the Runner's too).
func Complete(ctx context.Context, model Provider, req ModelRequest, limits OutputLimits, onDelta func(Delta)) (ModelResponse, error) {
	resp, _, err := complete(ctx, model, req, limits, onDelta)
	return resp, err
}

// complete is Complete, returning also the results of the calls that
// must not run (outputGuard.bound).
func complete(ctx context.Context, model Provider, req ModelRequest, limits OutputLimits, onDelta func(Delta)) (ModelResponse, map[string]*Result, error) {
	g, callCtx := guard(ctx, limits)
	defer g.close()
	resp, err := model.Complete(callCtx, req, func(d Delta) {
		if d = g.delta(d); onDelta != nil && (d.Text != "" || d.Thinking != "") {
			onDelta(d)
		}
	})
	if cause := g.stoppedBy(); cause != nil && ctx.Err() == nil {
		return resp, g.bound(&resp), cause
	}
	return resp, nil, err
}

// stopped reports whether err says a call was stopped at an output cap.
func stopped(err error) bool {
	return errors.Is(err, ErrAnswerTooLong) || errors.Is(err, ErrArgumentsTooLong)
}

// guard returns the guard of one model call and the context the call runs
// in, cancelled when the guard stops it.
func guard(ctx context.Context, limits OutputLimits) (*outputGuard, context.Context) {
	ctx, stop := context.WithCancelCause(ctx)
	g := &outputGuard{limits: limits.withDefaults(), stop: stop, args: map[int]int{}}
	return g, context.WithValue(ctx, guardKey{}, g)
}

// stoppedBy is why the call was stopped (nil: it was not).
func (g *outputGuard) stoppedBy() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// maxEvent bounds one event of the answer's stream: twice the larger cap
// (room for JSON's escapes) and 64 KiB for the event's own fields.
func (g *outputGuard) maxEvent() int {
	return 2*max(g.limits.MaxAnswerBytes, g.limits.MaxArgumentBytes) + 64<<10
}

// maxBody bounds the body of a response that is not a stream (a whole
// answer, when streaming is off): four times the larger cap and 64 KiB.
func (g *outputGuard) maxBody() int {
	return 4*max(g.limits.MaxAnswerBytes, g.limits.MaxArgumentBytes) + 64<<10
}

// BoundEvents is an HTTP middleware (as openai-go's and
// anthropic-sdk-go's option.WithMiddleware take) that bounds the
// responses to requests made for a call of Complete. Each event of a
// streamed answer (text/event-stream) is read up to twice the call's
// larger cap, which no piece within the caps needs (the SDKs gather an
// event whole, from lines of up to 32 MiB each, before decoding it); any
// other response (a whole answer) up to four times that cap. Past them
// the call stops as an answer too long. Other requests pass as they are.
func BoundEvents(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	resp, err := next(req)
	g, ok := req.Context().Value(guardKey{}).(*outputGuard)
	if err != nil || !ok || resp == nil || resp.Body == nil {
		return resp, err
	}
	r := &eventReader{ReadCloser: resp.Body, g: g, max: g.maxBody(), what: "the answer went past %d bytes"}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		r.events, r.max, r.what = true, g.maxEvent(), "one event of the answer's stream went past %d bytes"
	}
	resp.Body = r
	return resp, nil
}

// eventReader is a response's body that stops its call past max bytes:
// of one event (events), or of the whole body.
type eventReader struct {
	io.ReadCloser
	g           *outputGuard
	max         int
	events      bool
	what        string // the error's words, with the bound
	line, event int    // bytes of the current line and event
	err         error  // set once it stopped the call
}

// Read implements io.Reader.
func (e *eventReader) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.ReadCloser.Read(p)
	for i, b := range p[:n] {
		switch {
		case e.events && b == '\n' && e.line == 0: // a blank line ends an event
			e.event = 0
		case e.events && b == '\n':
			e.line = 0
		case !e.events || b != '\r':
			e.line++
			if e.event++; e.event > e.max {
				e.err = fmt.Errorf("%w: "+e.what, ErrAnswerTooLong, e.max)
				e.g.halt(e.err)
				return i, e.err
			}
		}
	}
	return n, err
}

// close releases the call's context.
func (g *outputGuard) close() { g.stop(context.Canceled) }

// delta counts d and returns what of it may be passed on: nothing once
// the call was stopped, text and thinking up to the answer's cap. It stops
// the call at the first piece past a cap.
func (g *outputGuard) delta(d Delta) Delta {
	if g.stoppedBy() != nil {
		return Delta{}
	}
	room := g.limits.MaxAnswerBytes - g.text - g.thinking
	if len(d.Thinking) > room {
		d.Thinking, d.Text = RunePrefix(d.Thinking, room), ""
	} else if len(d.Thinking)+len(d.Text) > room {
		d.Text = RunePrefix(d.Text, room-len(d.Thinking))
	} else {
		room = -1
	}
	g.text, g.thinking = g.text+len(d.Text), g.thinking+len(d.Thinking)
	if room >= 0 {
		g.halt(fmt.Errorf("%w: it went past %d bytes of text and thinking, where it was cut", ErrAnswerTooLong, g.limits.MaxAnswerBytes))
	}
	if c := d.Call; c != nil && g.stoppedBy() == nil {
		d.Call = nil
		g.args[c.Index] += len(c.Arguments)
		if g.args[c.Index] > g.limits.MaxArgumentBytes {
			g.long = &ToolCall{ID: c.ID, Name: c.Name}
			g.halt(fmt.Errorf("%w: the arguments of the call to %q went past %d bytes", ErrArgumentsTooLong, c.Name, g.limits.MaxArgumentBytes))
		}
	}
	return d
}

// halt stops the call for err (the first reason stands).
func (g *outputGuard) halt(err error) {
	g.mu.Lock()
	if g.err == nil {
		g.err = err
	}
	g.mu.Unlock()
	g.stop(err)
}

// bound makes resp, the answer received when the guard stopped the call,
// what the conversation keeps: for an answer too long, its text and
// thinking as passed on (no tool call: the turn ends); for arguments too
// long, the answer with that call's arguments replaced by {} and the calls
// cut off by the stop left out. The provider's own form of the message is
// dropped. It returns the results of the calls that must not run.
func (g *outputGuard) bound(resp *ModelResponse) map[string]*Result {
	m := &resp.Message
	m.Native = nil
	if !errors.Is(g.stoppedBy(), ErrArgumentsTooLong) {
		text := RunePrefix(m.Text(), g.text)
		m.Content, m.ToolCalls = nil, nil
		if text != "" {
			m.Content = []Content{{Type: ContentText, Text: text}}
		}
		m.Thinking = RunePrefix(m.Thinking, g.thinking)
		resp.Stop = StopMaxTokens
		return nil
	}
	kept := m.ToolCalls[:0]
	for _, c := range m.ToolCalls {
		if c.ID != g.long.ID && json.Valid(c.Arguments) {
			kept = append(kept, c)
		}
	}
	g.long.Arguments = json.RawMessage("{}")
	if g.long.ID == "" {
		g.long.ID = "call_too_long" // the provider named it no id
	}
	m.ToolCalls = append(kept, *g.long)
	resp.Stop = StopToolUse
	return map[string]*Result{g.long.ID: ptr(ErrorResult(fmt.Sprintf(
		"This call was not run: %v. Its arguments were dropped. Make the arguments smaller (split the work into several calls, or write large content in parts).", g.stoppedBy())))}
}
