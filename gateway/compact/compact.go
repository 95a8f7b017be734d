// Package compact keeps a session's conversation within its model's
// context window: a Compactor is the gateway.Compactor of one session.
//
// It knows each request's size before it is sent: the provider's reported
// input tokens for what the last request sent, plus an estimate (bytes ÷ 4,
// calibrated by the ratio the last response showed) for what is new.
// Before a request would pass the threshold (a share of the window,
// DefaultThreshold unless set), the conversation is compacted down to
// about five eighths of the threshold (half the window at the default):
//
//  1. the oldest tool results' bodies are replaced by a one-line note (the
//     call and its result message stay; the results the model has not
//     answered yet are kept);
//  2. if that is not enough, the oldest turns are summarised by the
//     session's own model into one message, and the most recent turns stay
//     verbatim. The conversation is cut only where every tool call before
//     the cut has its result before it, so a call is never parted from its
//     result. The summary requests fit the window too: a long transcript is
//     summarised in parts, each request carrying the summary so far.
//
// When the window is unknown, the endpoint's refusal of a request as too
// long (gateway.ErrContextLength) tells: the request's size becomes the
// session's window bound, and the same compaction follows. The user's
// /compact (FitRequest.Force) summarises every turn but the last.
package compact

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/acpgate/acpgate/gateway"
)

// DefaultThreshold is the share of the context window a request may fill
// before the conversation is compacted; Never turns that off (compaction
// then happens only on the endpoint's refusal and on demand).
const (
	DefaultThreshold = 0.8
	Never            = -1
)

// targetShare is the share of the threshold a compaction brings a request
// down to, so that the next compaction is some turns away (and the
// requests in between share their prefix, for the providers' caches).
const targetShare = 5.0 / 8

// Options configures a Compactor. A nil *Options means the defaults.
type Options struct {
	// Threshold is the share of the context window, in (0, 1], a request
	// may fill before the conversation is compacted: 0 means
	// DefaultThreshold, Never (any negative value) no compaction before
	// the endpoint refuses a request.
	Threshold float64
	// Logger receives the compactions (default: discarded).
	Logger *slog.Logger
	// Neutralize makes the summary, which the model wrote after reading
	// tool results and other untrusted text, unable to end or forge a
	// frame (the caller's frames around untrusted text); nil leaves it as
	// it is.
	Neutralize func(string) string
}

// Compactor keeps one session's conversation within its model's context
// window (it implements gateway.Compactor). Its methods are safe for
// concurrent use; the Runner calls them from the session's turn, one at a
// time.
type Compactor struct {
	logger     *slog.Logger
	neutralize func(string) string

	mu        sync.Mutex
	threshold float64
	est       estimator
	// bound is the window learnt from the endpoint's refusals (0: none):
	// the size of the smallest request it refused as too long.
	bound int
}

var _ gateway.Compactor = (*Compactor)(nil)

// New returns a Compactor with opts (nil: the defaults).
func New(opts *Options) *Compactor {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Neutralize == nil {
		o.Neutralize = func(s string) string { return s }
	}
	c := &Compactor{logger: o.Logger, neutralize: o.Neutralize}
	c.SetThreshold(o.Threshold)
	return c
}

// SetThreshold changes the threshold (as Options.Threshold): the
// configuration was reloaded.
func (c *Compactor) SetThreshold(t float64) {
	switch {
	case t == 0:
		t = DefaultThreshold
	case t < 0:
		t = Never
	case t > 1:
		t = 1
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.threshold = t
}

// Estimate returns the estimated size of req in tokens.
func (c *Compactor) Estimate(req gateway.ModelRequest) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.est.estimate(req)
}

// Observe implements gateway.Compactor: the reported input tokens
// calibrate the estimate.
func (c *Compactor) Observe(req gateway.ModelRequest, u gateway.Usage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.est.observe(req, u)
}

// ErrEmptySummary is returned when the model answers a summary request
// with no text.
var ErrEmptySummary = errors.New("the model returned an empty summary")

// Fit implements gateway.Compactor. It compacts f.Request's conversation
// when the request would pass the threshold of the window (f.Window, or
// the bound learnt from the endpoint), when f.Overflowed says the endpoint
// refused it, or when f.Force asks; nil means the conversation stays as it
// is (it fits, or nothing in it can be compacted).
func (c *Compactor) Fit(ctx context.Context, f gateway.FitRequest) (*gateway.Compaction, error) {
	c.mu.Lock()
	size := c.est.estimate(f.Request)
	if f.Overflowed && (c.bound == 0 || size < c.bound) {
		c.bound = size
	}
	window, threshold := f.Window, c.threshold
	if c.bound > 0 && (window == 0 || c.bound < window) {
		window = c.bound
	}
	w := &work{msgs: slices.Clone(f.Request.Messages), size: size, est: c.est, req: f.Request, model: f.Model, focus: f.Focus, neutralize: c.neutralize, started: f.Started}
	c.mu.Unlock()

	if !f.Force && !f.Overflowed && (window == 0 || threshold < 0 || size <= share(threshold, window)) {
		return nil, nil
	}
	if threshold < 0 {
		threshold = DefaultThreshold
	}
	w.window, w.threshold = window, threshold
	w.res.Before = size
	err := w.run(ctx, f.Force)
	if w.learnt > 0 {
		c.mu.Lock()
		if c.bound == 0 || w.learnt < c.bound {
			c.bound = w.learnt
		}
		c.mu.Unlock()
	}
	if w.res.Elided == 0 && w.res.Turns == 0 && w.summarised == 0 {
		return nil, err
	}
	w.res.Messages, w.res.After = w.msgs, w.size
	c.logger.Info("conversation compacted", "turns", w.res.Turns, "elided", w.res.Elided,
		"before", w.res.Before, "after", w.res.After, "window", window, "summaryCalls", w.res.SummaryCalls)
	return &w.res, err
}

// share is the tokens that share of window makes.
func share(s float64, window int) int { return int(s * float64(window)) }

// work is one compaction under way.
type work struct {
	req       gateway.ModelRequest
	model     gateway.Provider
	focus     string
	window    int     // the window in force (0: unknown)
	threshold float64 // in (0, 1]
	msgs      []gateway.Message
	size      int // the request's estimated size with msgs, in tokens
	est       estimator
	res       gateway.Compaction
	// neutralize prepares the summary's text (Options.Neutralize).
	neutralize func(string) string
	// summarised counts the messages replaced by the summary; learnt is a
	// window bound learnt from a summary request the endpoint refused.
	summarised int
	learnt     int
	// started is FitRequest.Started, until begin has called it.
	started func()
}

// begin says, once, that the compaction starts (FitRequest.Started): it
// is about to change the conversation or ask for a summary.
func (w *work) begin() {
	if w.started != nil {
		w.started()
		w.started = nil
	}
}

// run compacts: tool results, then a summary, down to the target; or, on
// demand (force), a summary of every turn but the last.
func (w *work) run(ctx context.Context, force bool) error {
	if force {
		return w.summarise(ctx, w.lastTurn())
	}
	target := share(w.threshold*targetShare, w.window)
	w.elide(target)
	if w.size <= target {
		return nil
	}
	return w.summarise(ctx, w.split(target, w.summaryTokens()))
}

// elide replaces the bodies of the oldest tool results with a note until
// the request is at most target tokens. The results the model has not
// answered yet (those at the end) stay.
func (w *work) elide(target int) {
	end := len(w.msgs)
	for end > 0 && w.msgs[end-1].Role == gateway.RoleTool {
		end--
	}
	for i := 0; i < end && w.size > target; i++ {
		m := &w.msgs[i]
		if m.Role != gateway.RoleTool || m.Result == nil {
			continue
		}
		body := m.Result.ModelText()
		note := elisionNote(m.ToolName, len(body))
		if len(body) <= 2*len(note) { // a short result, or a note already
			continue
		}
		w.begin()
		w.size -= w.est.tokens(len(body) - len(note))
		m.Result = &gateway.Result{Content: []gateway.Content{{Type: gateway.ContentText, Text: note}}, IsError: m.Result.IsError}
		w.res.Elided++
	}
}

// elisionNote is what stands for a tool result's body of n bytes.
func elisionNote(tool string, n int) string {
	return fmt.Sprintf("[This %d-byte result of %s was removed when the conversation was compacted; call the tool again if it is needed.]", n, tool)
}

// cut is a place the conversation may be cut: every tool call before it
// has its result before it. turn says a user message starts there.
type cut struct {
	at   int
	turn bool
}

// cuts returns the places w.msgs may be cut so that the part after the cut
// keeps the last step (the latest user message, or the latest assistant
// message and its results) and the part before holds something besides
// earlier summaries.
func (w *work) cuts() []cut {
	last := len(w.msgs) - 1
	for last > 0 && w.msgs[last].Role == gateway.RoleTool {
		last--
	}
	var out []cut
	open := map[string]bool{}
	substance := false
	for i, m := range w.msgs {
		if i > last {
			break
		}
		if i > 0 && len(open) == 0 && m.Role != gateway.RoleTool && substance {
			out = append(out, cut{at: i, turn: m.Role == gateway.RoleUser})
		}
		switch m.Role {
		case gateway.RoleAssistant:
			for _, tc := range m.ToolCalls {
				open[tc.ID] = true
			}
		case gateway.RoleTool:
			delete(open, m.ToolCallID)
		}
		substance = substance || !isSummary(&m)
	}
	return out
}

// lastTurn is where the last turn starts (0: there is no earlier one to
// summarise).
func (w *work) lastTurn() int {
	at := 0
	for _, c := range w.cuts() {
		if c.turn {
			at = c.at
		}
	}
	return at
}

// split returns where to cut so that the request, the part before the cut
// replaced by a summary of about summary tokens, is at most target tokens:
// the earliest turn that is enough, else the earliest step that is, else
// the latest cut. 0: there is nothing to cut.
func (w *work) split(target, summary int) int {
	cuts := w.cuts()
	if len(cuts) == 0 {
		return 0
	}
	suffix := make([]int, len(w.msgs)+1) // tokens of msgs[i:]
	for i := len(w.msgs) - 1; i >= 0; i-- {
		suffix[i] = suffix[i+1] + w.est.tokens(messageBytes(&w.msgs[i]))
	}
	fixed := w.size - suffix[0] // the system prompt, the tools, the calibration
	fits := func(c cut) bool { return fixed+summary+suffix[c.at] <= target }
	if i := slices.IndexFunc(cuts, func(c cut) bool { return c.turn && fits(c) }); i >= 0 {
		return cuts[i].at
	}
	if i := slices.IndexFunc(cuts, fits); i >= 0 {
		return cuts[i].at
	}
	return cuts[len(cuts)-1].at
}

// summaryTokens bounds a summary's length: a sixteenth of the window,
// between 512 and 4096 tokens (2048 when the window is unknown).
func (w *work) summaryTokens() int {
	if w.window <= 0 {
		return 2048
	}
	return min(max(w.window/16, 512), 4096)
}
