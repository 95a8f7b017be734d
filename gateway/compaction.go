package gateway

import "context"

// Compactor keeps a session's conversation within its model's context
// window (gateway/compact implements it). The Runner asks it before each
// model call whether the request fits, and tells it what each answer
// reported of the request's size. One Compactor serves one session; the
// Runner calls it from the turn's goroutine, one call at a time.
type Compactor interface {
	// Fit returns the conversation compacted when f.Request would not fit
	// (or f.Force or f.Overflowed says so), nil when it is left as it is.
	// It may call f.Model (a summary). A non-nil Compaction with an error
	// is what was done before the error; the caller may use it.
	Fit(ctx context.Context, f FitRequest) (*Compaction, error)
	// Observe records the usage the model reported for a request sent.
	Observe(req ModelRequest, u Usage)
}

// FitRequest is a request about to be sent, to be made to fit.
type FitRequest struct {
	// Model is the session's model: it writes the summaries.
	Model Provider
	// Request is the model call about to be made; its Messages are the
	// whole conversation.
	Request ModelRequest
	// Window is the model's context window in tokens (0: unknown).
	Window int
	// Overflowed says the endpoint refused Request as longer than the
	// model's context window (ErrContextLength).
	Overflowed bool
	// Force compacts whatever the size (the user's /compact); Focus, if
	// set, is what the summary should keep above all.
	Force bool
	Focus string
	// Started, when set, is called once, from Fit's goroutine, when Fit
	// starts compacting: before it changes the conversation or asks
	// Model for a summary. A Fit that called it returns a Compaction, an
	// error, or both (never nil and nil).
	Started func()
}

// Compaction is a conversation made smaller.
type Compaction struct {
	// Messages is the compacted conversation: it replaces the request's
	// Messages.
	Messages []Message
	// Turns is how many turns were summarised into one message (0: none).
	Turns int
	// Elided is how many tool results had their bodies replaced by a note.
	Elided int
	// Before and After are the request's estimated size in tokens.
	Before, After int
	// SummaryCalls is how many model calls the summary took; Usage is what
	// they reported.
	SummaryCalls int
	Usage        Usage
	// Summary is the summary's text as Messages hold it (neutralised; ""
	// when no turn was summarised), for the user to see.
	Summary string
}
