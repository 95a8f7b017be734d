package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/gateway"
)

// This file is the user's hold on a running turn: prompts sent while it
// runs wait in the session's queue (session/prompt), prompts steered into
// it join it at its next safe point (_session/steering, the extension
// claude-agent-acp and codex-acp serve), and session/cancel ends it and
// empties the queue. docs/steering.md is the user's page of it.

// methodSteering is the steering extension's method, as claude-agent-acp
// and codex-acp name it.
const methodSteering = "_session/steering"

// The limits of the queue and of steering: how many prompts may wait
// behind a running turn, how many steered prompts a turn may hold before
// it takes them, and how large (its JSON) a steered prompt may be.
const (
	maxQueuedPrompts = 8
	maxPendingSteers = 8
	maxSteerBytes    = 256 << 10
)

// The outcomes of a steering request (the extension's outcome member).
const (
	steerInjected       = "injected"
	steerStartedNewTurn = "startedNewTurn"
	steerPromptRequired = "promptRequired"
)

// Errors of the queue and of steering.
var (
	// errQueueFull: maxQueuedPrompts wait already.
	errQueueFull = errors.New("prompt queue is full")
	// errSteersFull: the running turn holds maxPendingSteers already.
	errSteersFull = errors.New("too many steered prompts are waiting")
	// errNotRunning: no turn takes steered prompts now.
	errNotRunning = errors.New("no running turn")
)

// turnSlot is a session's running turn, the prompts queued behind it, the
// prompts steered into it not yet taken, and whether the session is
// closed. The zero value is idle and open; safe for concurrent use (its
// own lock, never held while another is taken).
type turnSlot struct {
	mu     sync.Mutex
	cancel context.CancelFunc // of the running turn; nil when idle
	turn   chan struct{}      // closed when the running turn ends
	closed bool
	// waiting are the queued prompts, in the order they came.
	waiting []*queuedTurn
	// steers are the prompts steered into the running turn, not yet
	// taken; taking is whether the running turn still takes them (false
	// once it took its last: it is ending).
	steers [][]acpsdk.ContentBlock
	taking bool
}

// queuedTurn is a prompt waiting for the running turn to end: ready is
// closed when it becomes the running one (its cancel and turn in the
// slot).
type queuedTurn struct {
	cancel context.CancelFunc
	turn   chan struct{}
	ready  chan struct{}
}

// take makes the caller's turn (cancel, turn) the running one: at once
// when the session is idle, else after the turns queued before it, told
// to queued (its place: 1 is next). ok is false when the session is
// closed, its queue is full (err says which; id names the session), or
// ctx ended while waiting (session/cancel: this prompt is cancelled too).
func (ts *turnSlot) take(ctx context.Context, id string, cancel context.CancelFunc, turn chan struct{}, queued func(place int)) (ok bool, err error) {
	ts.mu.Lock()
	if ts.closed {
		ts.mu.Unlock()
		return false, invalidParams("session %q is closed", id)
	}
	if ts.cancel == nil && len(ts.waiting) == 0 {
		ts.cancel, ts.turn, ts.taking = cancel, turn, true
		ts.mu.Unlock()
		return true, nil
	}
	if len(ts.waiting) >= maxQueuedPrompts {
		ts.mu.Unlock()
		return false, invalidRequest("%v: session %q has %d prompts waiting behind its running turn (at most %d); wait for one to run, or cancel", errQueueFull, id, maxQueuedPrompts, maxQueuedPrompts)
	}
	q := &queuedTurn{cancel: cancel, turn: turn, ready: make(chan struct{})}
	ts.waiting = append(ts.waiting, q)
	place := len(ts.waiting)
	ts.mu.Unlock()
	if queued != nil {
		queued(place)
	}
	select {
	case <-q.ready:
		return true, nil
	case <-ctx.Done():
	}
	ts.mu.Lock()
	for i, w := range ts.waiting {
		if w == q {
			ts.waiting = append(ts.waiting[:i], ts.waiting[i+1:]...)
			ts.mu.Unlock()
			return false, nil
		}
	}
	ts.mu.Unlock()
	// Handed the turn as ctx ended: pass it on.
	ts.end()
	return false, nil
}

// end ends the running turn (the caller's, taken with take) and hands
// the slot to the first queued prompt. It returns how many steered
// prompts the turn never took (dropped: liveSession.turn takes them
// first unless the turn was cancelled, so these came as it ended).
func (ts *turnSlot) end() (dropped int) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	dropped = len(ts.steers)
	ts.cancel, ts.turn, ts.steers, ts.taking = nil, nil, nil, false
	if len(ts.waiting) > 0 && !ts.closed {
		next := ts.waiting[0]
		ts.waiting = ts.waiting[1:]
		ts.cancel, ts.turn, ts.taking = next.cancel, next.turn, true
		close(next.ready)
	}
	return dropped
}

// interrupt cancels the running turn and every queued prompt, and drops
// the steered prompts not yet taken.
func (ts *turnSlot) interrupt() {
	ts.mu.Lock()
	cancels := make([]context.CancelFunc, 0, 1+len(ts.waiting))
	if ts.cancel != nil {
		cancels = append(cancels, ts.cancel)
	}
	for _, w := range ts.waiting {
		cancels = append(cancels, w.cancel)
	}
	ts.steers = nil
	ts.mu.Unlock()
	for _, c := range cancels {
		c()
	}
}

// close marks the session closed (no turn starts from now on), cancels
// the queued prompts and returns the running turn's cancel and end (nil,
// nil: none).
func (ts *turnSlot) close() (context.CancelFunc, chan struct{}) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.closed = true
	for _, w := range ts.waiting {
		w.cancel()
	}
	return ts.cancel, ts.turn
}

// isClosed reports whether the session is closed.
func (ts *turnSlot) isClosed() bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.closed
}

// steer adds prompt to the running turn's steered prompts. It fails with
// errNotRunning when no turn takes them (idle, or the turn is ending),
// errSteersFull past maxPendingSteers.
func (ts *turnSlot) steer(prompt []acpsdk.ContentBlock) error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	switch {
	case ts.closed || ts.cancel == nil || !ts.taking:
		return errNotRunning
	case len(ts.steers) >= maxPendingSteers:
		return errSteersFull
	}
	ts.steers = append(ts.steers, prompt)
	return nil
}

// takeSteers returns the steered prompts not yet taken; with last and
// none, the running turn takes no more (gateway.Steering's rule).
func (ts *turnSlot) takeSteers(last bool) [][]acpsdk.ContentBlock {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	out := ts.steers
	ts.steers = nil
	if last && len(out) == 0 {
		ts.taking = false
	}
	return out
}

// queueLength is how many prompts wait behind the running turn.
func (ts *turnSlot) queueLength() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.waiting)
}

// takeSteers hands the running turn the prompts steered into it
// (turnSlot.takeSteers).
func (s *liveSession) takeSteers(last bool) [][]acpsdk.ContentBlock {
	return s.running.takeSteers(last)
}

// turnSteering is a model turn's gateway.Steering: each prompt it takes
// is shown to the client as the user's message and recorded in the turn's
// log where it joined the conversation, so that load and resume replay
// it in place. When the model would end the turn with nothing steered,
// the session's Stop hooks may make it go on (hooks.go).
type turnSteering struct {
	ctx   context.Context
	s     turnSession
	t     *turnLog
	stops int // how often Stop hooks made the turn go on
}

// Take implements gateway.Steering.
func (st *turnSteering) Take(last bool) [][]gateway.Content {
	prompts := st.s.takeSteers(false)
	if len(prompts) == 0 && last {
		if hr := st.s.hooksRun(); hr != nil {
			if reason, goOn := hr.stopCheck(st.ctx, st.stops); goOn {
				st.stops++
				return append(st.echo(st.s.takeSteers(false)), []gateway.Content{{Type: gateway.ContentText, Text: reason}})
			}
		}
		prompts = st.s.takeSteers(true)
	}
	return st.echo(prompts)
}

// echo shows and records prompts as the user's, and returns them as the
// model gets them.
func (st *turnSteering) echo(prompts [][]acpsdk.ContentBlock) [][]gateway.Content {
	if len(prompts) == 0 {
		return nil
	}
	st.t.flush()
	out := make([][]gateway.Content, 0, len(prompts))
	for _, p := range prompts {
		for _, b := range p {
			u := acpsdk.SessionUpdate{UserMessageChunk: &acpsdk.SessionUpdateUserMessageChunk{Content: b}}
			st.t.record(u)
			st.t.tu.peer.update(st.t.s, u)
		}
		out = append(out, fromACP(p))
	}
	return out
}

// steerParams are _session/steering's params: the session, the prompt
// (content blocks, as session/prompt's) and _meta.steering.idleBehavior.
type steerParams struct {
	SessionID acpsdk.SessionId      `json:"sessionId"`
	Prompt    []acpsdk.ContentBlock `json:"prompt"`
	Meta      *struct {
		Steering *struct {
			IdleBehavior *string `json:"idleBehavior"`
		} `json:"steering"`
	} `json:"_meta"`
}

// steerResult is _session/steering's result: the outcome, and a reason
// with promptRequired (always noRunningTurn).
type steerResult struct {
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`
}

// steer answers _session/steering. With a turn running, the prompt joins
// it at its next safe point (injected). With none, it starts a turn of
// its own (startedNewTurn), unless the client asked for idleBehavior
// promptRequired: then nothing is done and the client keeps the prompt.
func (a *Agent) steer(ctx context.Context, raw json.RawMessage) (any, error) {
	if len(raw) > maxSteerBytes {
		return nil, invalidParams("prompt: the steered prompt is %d bytes, more than the %d a steer may have", len(raw), maxSteerBytes)
	}
	if ierr := checkPrompt(raw); ierr != nil {
		return nil, ierr
	}
	var p steerParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if p.SessionID == "" {
		return nil, invalidParams("sessionId: missing")
	}
	if len(p.Prompt) == 0 {
		return nil, invalidParams("prompt: must be a non-empty array of content blocks")
	}
	promptRequired := false
	if p.Meta != nil && p.Meta.Steering != nil && p.Meta.Steering.IdleBehavior != nil {
		if *p.Meta.Steering.IdleBehavior != steerPromptRequired {
			return nil, invalidParams("_meta.steering.idleBehavior: unsupported value %q (acpgate takes %q)", *p.Meta.Steering.IdleBehavior, steerPromptRequired)
		}
		promptRequired = true
	}
	s, err := a.lookup(p.SessionID)
	if err != nil {
		return nil, err
	}
	switch err := s.running.steer(p.Prompt); {
	case err == nil:
		a.logger.Debug("prompt steered into the running turn", "session", s.id)
		return steerResult{Outcome: steerInjected}, nil
	case errors.Is(err, errSteersFull):
		return nil, invalidRequest("%v: the running turn of session %q has %d steered prompts it has not taken yet (at most %d)", err, s.id, maxPendingSteers, maxPendingSteers)
	}
	if s.isClosed() {
		return nil, invalidParams("session %q is closed", s.id)
	}
	if promptRequired {
		return steerResult{Outcome: steerPromptRequired, Reason: "noRunningTurn"}, nil
	}
	// The established default (claude-agent-acp's): a turn of its own,
	// which no session/prompt answers.
	steered := a.steeredTurn(s)
	go func() {
		reason, err := s.turn(withSession(s.ctx, s), nil, func(ctx context.Context) acpsdk.StopReason {
			return steered(ctx, p.Prompt)
		}, steered)
		a.logger.Debug("steered turn ended", "session", s.id, "stop", reason, "err", err)
	}()
	return steerResult{Outcome: steerStartedNewTurn}, nil
}

// steeredTurn returns what runs a steered prompt as a turn of session s
// (or as the rest of one: liveSession.turn's carry): shown to the client
// as the user's message, and recorded.
func (a *Agent) steeredTurn(s *liveSession) func(ctx context.Context, prompt []acpsdk.ContentBlock) acpsdk.StopReason {
	return func(ctx context.Context, prompt []acpsdk.ContentBlock) acpsdk.StopReason {
		return stopReason(a.turns.runEchoed(ctx, s, prompt))
	}
}

// queuedNotice tells the client that its prompt waits (place: 1 is next):
// a notice to clients that show them, and to every client a
// session_info_update whose _meta.acpgate.queuedPrompts is the queue's
// length.
func (a *Agent) queuedNotice(s *liveSession, place int) {
	a.peer.update(s, acpsdk.SessionUpdate{SessionInfoUpdate: &acpsdk.SessionSessionInfoUpdate{Meta: map[string]any{"acpgate": map[string]any{"queuedPrompts": s.running.queueLength()}}}})
	if a.peer.sessionCapabilities().notices {
		a.peer.updateOwn(s, Notice{Severity: NoticeInfo, Title: "Prompt queued", Description: fmt.Sprintf("It runs when the running turn ends (place %d in the queue).", place)})
	}
}

// invalidRequest is a JSON-RPC -32600 error with a readable message.
func invalidRequest(format string, args ...any) *acpsdk.RequestError {
	msg := fmt.Sprintf(format, args...)
	return &acpsdk.RequestError{Code: -32600, Message: "Invalid request: " + msg, Data: map[string]any{"error": msg}}
}
