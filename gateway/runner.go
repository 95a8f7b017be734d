package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpgate/acpgate/internal/base/telemetry"
)

// EventKind says what an Event reports.
type EventKind int

// The kinds of Event, in the order a turn produces them.
const (
	EventText             EventKind = iota + 1 // Text: a chunk of the answer
	EventThinking                              // Text: a chunk of reasoning
	EventToolCallStarted                       // Call: the model asked for a tool (pending)
	EventToolCallRunning                       // Call: approved, running
	EventToolCallProgress                      // Call, Progress
	EventToolCallFinished                      // Call, Result, Failed
	EventUsage                                 // Usage: tokens of one model call
	// EventCompactionStarted: the conversation is being compacted before
	// a model call (the compactor has started; a summary may take a
	// while). EventCompacted or EventCompactionFailed follows.
	EventCompactionStarted
	EventCompacted        // Compaction: the conversation was compacted before a model call
	EventCompactionFailed // Err: a compaction that started did not change the conversation
	// EventSteered: Input, a prompt the user steered into the running
	// turn, was added to the conversation as a user message (after the
	// step's tool results, before the next model call).
	EventSteered
)

// CallInfo describes a tool call for events and approval.
type CallInfo struct {
	ID       string
	Name     string // the tool's name
	Title    string
	Kind     ToolKind
	RawInput json.RawMessage
	Meta     map[string]any // the tool's Meta
	// Content is what the call will do, from the tool's Preview (nil:
	// nothing to show before it runs).
	Content []Content
}

// callKey is the context key of the CallInfo of a running tool.
type callKey struct{}

// WithCall returns ctx carrying call: the context a tool's Execute gets,
// so that what runs on its behalf (a question its tool puts to the user,
// for one) can name the call.
func WithCall(ctx context.Context, call CallInfo) context.Context {
	return context.WithValue(ctx, callKey{}, call)
}

// CallFrom returns the CallInfo of the tool call ctx runs for, if any.
func CallFrom(ctx context.Context) (CallInfo, bool) {
	c, ok := ctx.Value(callKey{}).(CallInfo)
	return c, ok
}

// Event is something that happened in a turn.
type Event struct {
	Kind     EventKind
	Text     string
	Call     *CallInfo
	Progress Progress
	Result   *Result
	Failed   bool
	Usage    Usage
	// Compaction is what compacting the conversation did (EventCompacted).
	Compaction *Compaction
	// Err is why a compaction failed (EventCompactionFailed); it wraps
	// the turn context's error when the turn was cancelled or timed out
	// meanwhile.
	Err error
	// Input is the steered prompt (EventSteered).
	Input []Content
}

// Sink receives a turn's events. The Runner never calls it concurrently and
// calls it in order; it should return quickly.
type Sink func(Event)

// Decision is the answer to an approval request.
type Decision int

// The decisions.
const (
	Allow Decision = iota + 1
	Reject
)

// Approver is asked before a tool runs. A Reject (or an error) means the
// call is not made and the model is told so; the turn goes on. It is
// called from the turn's goroutine, one call at a time.
type Approver func(ctx context.Context, call CallInfo, tool Tool) (Decision, error)

// Policy decides whether a tool is exposed to the model and may be called
// (by the model or directly). It is called from the turn's goroutine.
type Policy func(tool Tool) bool

// ToolAccess is what a session's tool calls go through: the tools it
// offers and its decisions on them. A session builds it once, bound to
// itself, and passes it to every Run and Execute: the Runner never looks a
// session up. Zero fields mean no tools, every tool allowed, every call
// approved.
type ToolAccess struct {
	Tools    ToolView
	Policy   Policy
	Approver Approver
	// Hooks, if set, are consulted around each call (nil: none).
	Hooks CallHooks
}

// CallHooks are the user's hooks around tool calls. BeforeCall is asked
// for each call the policy allows, after it is announced and before it is
// approved, from the turn's goroutine one call at a time; AfterCall is
// given each call's result once it ran, and may be called concurrently
// for the calls of one model answer.
type CallHooks interface {
	BeforeCall(ctx context.Context, call CallInfo) CallCheck
	AfterCall(ctx context.Context, call CallInfo, res Result) Result
}

// HookDecision is what hooks decided of a call before it runs.
type HookDecision int

// The decisions of hooks.
const (
	// HookNone leaves the call to approval.
	HookNone HookDecision = iota
	// HookAllow runs the call without asking the Approver.
	HookAllow
	// HookAsk asks the Approver with a context for which MustAsk is
	// true: the user is asked even where the session's mode or a
	// remembered decision would answer.
	HookAsk
	// HookDeny does not run the call: the model gets Reason as its
	// result.
	HookDeny
)

// CallCheck is what CallHooks.BeforeCall decided of a call.
type CallCheck struct {
	Decision HookDecision
	// Reason is the result the model gets for a denied call.
	Reason string
	// Input, when set, replaces the call's input (a JSON object).
	Input json.RawMessage
	// Context is text for the model, added to the call's result.
	Context []string
}

// mustAskKey is the context key of MustAsk.
type mustAskKey struct{}

// MustAsk reports whether the user must be asked to approve the call ctx
// is the approval of (hooks said so: HookAsk).
func MustAsk(ctx context.Context) bool {
	v, _ := ctx.Value(mustAskKey{}).(bool)
	return v
}

// inputSlotKey is the context key of RewriteInput's slot.
type inputSlotKey struct{}

// RewriteInput, called by an Approver with the context it was given,
// makes an approved call run with input instead of the model's (a
// PermissionRequest hook's updatedInput); input must be a JSON object,
// or the call is not made and the model is told why. It reports whether
// ctx is an approval's (false: nothing changes).
func RewriteInput(ctx context.Context, input json.RawMessage) bool {
	slot, ok := ctx.Value(inputSlotKey{}).(*json.RawMessage)
	if ok {
		*slot = input
	}
	return ok
}

// current is the tool set in force now.
func (acc *ToolAccess) current() *Toolset {
	if acc.Tools == nil {
		return nil
	}
	return acc.Tools.Current()
}

// allowed applies the policy (to every tool but the Runner's own).
func (acc *ToolAccess) allowed(t Tool) bool {
	return t.builtin || acc.Policy == nil || acc.Policy(t)
}

// RunOptions is one prompt turn: whose, with which model, on which
// conversation, with which tools and decisions, reporting to which sink.
type RunOptions struct {
	// Key names the session in the Runner's logs (optional).
	Key string
	// Model is the session's model; nil means none is configured: the
	// turn is answered with the NoModelMessage.
	Model Provider
	// History is the conversation so far; Input the user's new message.
	History []Message
	Input   []Content
	// ToolAccess gives the tools and decisions of the session: its Tools
	// are read once per model call (a change reaches the next model call),
	// and the calls of a model answer are looked up in the tools it was
	// offered.
	ToolAccess
	// Sink receives the turn's events (nil: none).
	Sink Sink
	// SearchThreshold is how many tools (besides the native ones) the
	// model is offered at most: with more, it gets the native tools,
	// search_tools and call_tool instead, on every request (a search
	// returns at most this many matches). Default DefaultSearchThreshold;
	// NoToolSearch offers every tool always.
	SearchThreshold int
	// ContextWindow is the model's context window in tokens, where known
	// (0: unknown). Tool search also takes over when the tools' schemas
	// would fill more than a tenth of it.
	ContextWindow int
	// Compactor, if set, keeps the conversation within ContextWindow: it
	// is asked before each model call, and again, for one retry, when the
	// endpoint refuses a request as too long (ErrContextLength).
	Compactor Compactor
	// System is the turn's system prompt ("": RunnerOptions.System). It
	// is the same for every model call of the turn.
	System string
	// Output bounds what each model call of the turn may write.
	Output OutputLimits
	// Media decides which images and audio of the conversation each model
	// call sends (nil: the provider's bounds alone); it remembers, for the
	// session, an endpoint that refused them.
	Media *MediaGate
	// ModelName and ProviderName name the model and its API
	// (gen_ai.provider.name: "openai", "anthropic") in telemetry.
	ModelName, ProviderName string
	// Steering, if set, is where the turn takes the prompts the user
	// steers into it while it runs.
	Steering Steering
}

// Steering hands a running turn the prompts the user steered into it.
// The Runner calls Take from the turn's goroutine at each safe point:
// after a step's tool results and before the next model call, and once
// more when the model ends its turn (last true). Each prompt taken becomes
// a user message of the turn (EventSteered); prompts taken at the last
// point make the turn go on with another model call. When Take(true)
// returns nothing, the turn will take no more: an implementation must
// refuse steers from then on (the turn is ending), so that no steer it
// accepted is lost.
type Steering interface {
	Take(last bool) [][]Content
}

// RunnerOptions configures a Runner. Zero fields take defaults. The model,
// tools and decisions are not options: each Run names its session's.
type RunnerOptions struct {
	// MaxModelCalls bounds the model calls of one turn (default 50).
	MaxModelCalls int
	// System is the system prompt of turns whose RunOptions name none.
	System string
	// NoModelMessage is the answer to a prompt when no model is
	// configured (default DefaultNoModelMessage): the caller's words, which
	// can say what works without one.
	NoModelMessage string
	// Telemetry records a span per model request, tool call and
	// compaction (nil: off).
	Telemetry *telemetry.Telemetry

	Logger *slog.Logger
}

// DefaultNoModelMessage is the answer to a prompt when no model is set up.
const DefaultNoModelMessage = "No model is configured, so I cannot answer prompts yet. " +
	"Configure an OpenAI-compatible model (a model name, and an API key and base URL if needed) and start a new session."

// Runner runs prompt turns with the tools each turn is given. Safe for
// concurrent use by different sessions; one session should run one turn at
// a time.
type Runner struct {
	opts RunnerOptions
	seq  atomic.Uint64
}

// NewRunner returns a Runner.
func NewRunner(opts RunnerOptions) *Runner {
	if opts.MaxModelCalls <= 0 {
		opts.MaxModelCalls = 50
	}
	if opts.NoModelMessage == "" {
		opts.NoModelMessage = DefaultNoModelMessage
	}

	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Runner{opts: opts}
}

// TurnResult is the outcome of a turn.
type TurnResult struct {
	Stop StopReason
	// Messages are the messages the turn added to the conversation: the
	// user's, then the model's and the tool results, in order. Append them
	// to the history.
	Messages []Message
	Usage    Usage
	// History, when set, is the whole conversation after the turn because
	// the turn compacted it: it replaces RunOptions.History and Messages
	// (which still lists what the turn added, as it happened).
	History History
}

// ErrUnknownTool and ErrToolDenied are returned by Execute.
var (
	ErrUnknownTool = errors.New("unknown tool")
	ErrToolDenied  = errors.New("tool not allowed")
)

// Run runs one prompt turn: the model is called with the history, the
// input and the tools of opts.Tools its Policy allows; tool calls are
// approved by opts.Approver and run (several concurrently, results in
// order) and their results given back, until the model ends its turn, the
// model-call limit is hit, the model hits its token limit or refuses, or
// ctx is cancelled. A nil model means none is configured: the turn is
// answered with NoModelMessage. A provider error ends the turn with an
// error; the messages so far are still returned. What each model call
// writes is bounded by opts.Output: an answer past its text cap is kept up
// to the cap and ends the turn (StopMaxTokens, an error wrapping
// ErrAnswerTooLong); a call past its arguments cap is not run, and the
// model gets an error as its result. With a Compactor the conversation is
// compacted when it would not fit (TurnResult.History).
func (r *Runner) Run(ctx context.Context, opts RunOptions) (res TurnResult, err error) {
	sink := serialize(opts.Sink)
	model := opts.Model
	res = TurnResult{Messages: []Message{{Role: RoleUser, Content: opts.Input}}}
	if model == nil {
		sink(Event{Kind: EventText, Text: r.opts.NoModelMessage})
		res.Messages = append(res.Messages, Message{Role: RoleAssistant, Content: []Content{{Type: ContentText, Text: r.opts.NoModelMessage}}})
		res.Stop = StopEndTurn
		return res, nil
	}
	conv := &conversation{base: opts.History}
	defer func() {
		if conv.compacted {
			res.History = conv.messages(res.Messages)
		}
	}()
	system := opts.System
	if system == "" {
		system = r.opts.System
	}
	for calls := 0; ; calls++ {
		if ctx.Err() != nil {
			res.Stop = StopCancelled
			return res, nil
		}
		if calls == r.opts.MaxModelCalls {
			res.Stop = StopMaxTurnRequests
			return res, nil
		}
		specs, tools := offer(&opts)
		req := ModelRequest{System: system, Messages: conv.messages(res.Messages), Tools: specs, CacheKey: opts.Key}
		resp, preset, err := r.complete(ctx, &opts, conv, req, len(res.Messages), sink)
		if err != nil && (ctx.Err() != nil || !stopped(err)) {
			if ctx.Err() != nil {
				res.Stop = StopCancelled
				return res, nil
			}
			return res, err
		}
		res.Usage = res.Usage.Add(resp.Usage)
		sink(Event{Kind: EventUsage, Usage: resp.Usage})
		resp.Message.Role = RoleAssistant
		if m := resp.Message; err == nil || len(m.Content) > 0 || m.Thinking != "" || len(m.ToolCalls) > 0 {
			// (An answer stopped before any of it came is not kept: an
			// empty assistant message is one an endpoint may refuse.)
			res.Messages = append(res.Messages, m)
		}
		switch {
		case errors.Is(err, ErrAnswerTooLong):
			res.Stop = resp.Stop
			return res, err
		case resp.Stop == StopMaxTokens, resp.Stop == StopRefusal:
			res.Stop = resp.Stop
			return res, nil
		case len(resp.Message.ToolCalls) == 0:
			if steered := takeSteers(ctx, &opts, true, sink); len(steered) > 0 {
				res.Messages = append(res.Messages, steered...)
				continue
			}
			res.Stop = StopEndTurn
			return res, nil
		}
		res.Messages = append(res.Messages, r.runCalls(ctx, opts.Key, &opts.ToolAccess, tools, resp.Message.ToolCalls, preset, sink)...)
		res.Messages = append(res.Messages, takeSteers(ctx, &opts, false, sink)...)
	}
}

// takeSteers takes the prompts steered into the turn (opts.Steering) at a
// safe point, as user messages, each told to the sink. A cancelled turn
// takes none.
func takeSteers(ctx context.Context, opts *RunOptions, last bool, sink Sink) []Message {
	if opts.Steering == nil || ctx.Err() != nil {
		return nil
	}
	var msgs []Message
	for _, in := range opts.Steering.Take(last) {
		sink(Event{Kind: EventSteered, Input: in})
		msgs = append(msgs, Message{Role: RoleUser, Content: in})
	}
	return msgs
}

// conversation is what a turn's model calls send: the history, replaced
// when it is compacted, then the turn's messages from index from on (the
// ones added since).
type conversation struct {
	base      []Message
	from      int
	compacted bool
}

// messages is the conversation given the turn's messages so far.
func (c *conversation) messages(turn []Message) []Message {
	return concat(c.base, turn[c.from:])
}

// complete makes one model call with req: the conversation is compacted
// first if it would not fit, and once more, for one retry, if the endpoint
// refuses it as too long. turn is how many messages the turn has so far.
// A call stopped at an output cap returns the answer kept (outputGuard.bound),
// the results of the calls that must not run, and an error wrapping
// ErrAnswerTooLong or ErrArgumentsTooLong.
func (r *Runner) complete(ctx context.Context, opts *RunOptions, conv *conversation, req ModelRequest, turn int, sink Sink) (ModelResponse, map[string]*Result, error) {
	r.fit(ctx, opts, conv, &req, turn, false, sink)
	resp, preset, err := r.call(ctx, opts, req, sink)
	if errors.Is(err, ErrContextLength) && ctx.Err() == nil && r.fit(ctx, opts, conv, &req, turn, true, sink) {
		resp, preset, err = r.call(ctx, opts, req, sink)
	}
	if stopped(err) && ctx.Err() == nil {
		r.opts.Logger.Warn("stopped reading the model's answer", "session", opts.Key, "err", err)
	}
	if err == nil && opts.Compactor != nil {
		opts.Compactor.Observe(req, resp.Usage)
	}
	return resp, preset, err
}

// call makes one model call, its output bounded by opts.Output: text and
// thinking go to the sink as they stream in, up to the cap. The request's
// images and audio are what opts.Media lets through; when the endpoint
// refuses a request that carries some (ErrRequestRefused), the session's
// gate is told, and the request goes once more with notes in their place.
func (r *Runner) call(ctx context.Context, opts *RunOptions, req ModelRequest, sink Sink) (ModelResponse, map[string]*Result, error) {
	gate := opts.Media
	if gate == nil {
		gate = &MediaGate{}
	}
	ctx, span := r.opts.Telemetry.StartChat(ctx, telemetry.Chat{Provider: opts.ProviderName, Model: opts.ModelName})
	onDelta := func(d Delta) {
		if d.Thinking != "" {
			sink(Event{Kind: EventThinking, Text: d.Thinking})
		}
		if d.Text != "" {
			sink(Event{Kind: EventText, Text: d.Text})
		}
	}
	sent := req
	var media int
	sent.Messages, media = gate.Prepare(opts.Model, req.Messages)
	resp, preset, err := complete(ctx, opts.Model, sent, opts.Output, onDelta)
	if media > 0 && errors.Is(err, ErrRequestRefused) && ctx.Err() == nil {
		if gate.Refuse() {
			r.opts.Logger.Warn("the model endpoint refused a request with images or audio; the session sends none from now on", "session", opts.Key, "err", err)
		}
		sent.Messages, _ = gate.Prepare(opts.Model, req.Messages)
		resp, preset, err = complete(ctx, opts.Model, sent, opts.Output, onDelta)
	}
	if span != nil {
		u := resp.Usage
		span.Usage(ctx, u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens)
		span.Set(telemetry.KeyResponseFinishReasons.StringSlice([]string{string(resp.Stop)}))
		span.SetContent(telemetry.KeyOutputMessages, func() string { return contentText(resp.Message.Content) })
		span.End(ctx, err)
	}
	return resp, preset, err
}

// fit asks the session's compactor to make req fit (overflowed: the
// endpoint refused it as too long) and, when it compacted the
// conversation, takes the result for req and the rest of the turn. The
// sink is told when a compaction starts and how it ends. A failure is
// logged: the request goes as it is.
func (r *Runner) fit(ctx context.Context, opts *RunOptions, conv *conversation, req *ModelRequest, turn int, overflowed bool, sink Sink) bool {
	if opts.Compactor == nil {
		return false
	}
	started := false
	var span *telemetry.Span
	c, err := opts.Compactor.Fit(ctx, FitRequest{Model: opts.Model, Request: *req, Window: opts.ContextWindow, Overflowed: overflowed, Started: func() {
		started = true
		_, span = r.opts.Telemetry.StartCompaction(ctx)
		sink(Event{Kind: EventCompactionStarted})
	}})
	span.End(ctx, err)
	if err != nil && ctx.Err() == nil {
		r.opts.Logger.Warn("compacting the conversation failed", "session", opts.Key, "err", err)
	}
	if c == nil {
		if started {
			if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
				err = errors.Join(cerr, err)
			}
			sink(Event{Kind: EventCompactionFailed, Err: err})
		}
		return false
	}
	conv.base, conv.from, conv.compacted = c.Messages, turn, true
	req.Messages = c.Messages
	sink(Event{Kind: EventCompacted, Compaction: c})
	return true
}

func concat(a, b []Message) []Message {
	out := make([]Message, 0, len(a)+len(b))
	return append(append(out, a...), b...)
}

// exposed returns the specs of the tools the policy lets the model see.
func exposed(tools []Tool, acc *ToolAccess) []ToolSpec {
	specs := make([]ToolSpec, 0, len(tools))
	for _, t := range tools {
		if acc.allowed(t) {
			specs = append(specs, t.spec())
		}
	}
	return specs
}

// spec is what the model is told of the tool.
func (t Tool) spec() ToolSpec {
	return ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.InputSchema}
}

// Execute runs one tool of acc directly, with no model, through the same
// policy, approval, events and result handling as a model's call in Run
// with the same ToolAccess. key names the session in logs. It fails only
// if the tool is unknown or not allowed; a failed call is a Result with
// IsError.
func (r *Runner) Execute(ctx context.Context, key string, acc ToolAccess, name string, args json.RawMessage, sink Sink) (Result, error) {
	tools := acc.current()
	tool, ok := tools.Lookup(name)
	if !ok {
		return Result{}, fmt.Errorf("%w %q", ErrUnknownTool, name)
	}
	if !acc.allowed(tool) {
		return Result{}, fmt.Errorf("%w: %q is denied by the tool policy", ErrToolDenied, name)
	}
	msgs := r.runCalls(ctx, key, &acc, tools, []ToolCall{{ID: r.newID(), Name: name, Arguments: args}}, nil, serialize(sink))
	return *msgs[0].Result, nil
}

func (r *Runner) newID() string {
	return fmt.Sprintf("call_%d_%d", time.Now().UnixNano(), r.seq.Add(1))
}

// pendingCall is a tool call on its way through approval and execution.
type pendingCall struct {
	call   ToolCall
	info   CallInfo
	tool   Tool
	result *Result // set when decided without running
	// check is what the hooks decided before the call (CallHooks).
	check CallCheck
}

// runCalls runs a model response's tool calls: each is announced, then
// approved in order, then the approved ones run concurrently. Calls are
// looked up in tools (the set the model was offered) and decided by acc.
// Calls with a result in preset (by ID) are not run: that is their result.
// It returns one RoleTool message per call, in order.
func (r *Runner) runCalls(ctx context.Context, key string, acc *ToolAccess, tools *Toolset, calls []ToolCall, preset map[string]*Result, sink Sink) []Message {
	pending := make([]*pendingCall, len(calls))
	for i, c := range calls {
		bad := preset[c.ID]
		if c.ID == "" {
			c.ID = r.newID()
		}
		if bad == nil {
			c, bad = throughCallTool(tools, c)
		}
		p := &pendingCall{call: c, info: CallInfo{ID: c.ID, Name: c.Name, Title: c.Name, Kind: KindOther, RawInput: c.Arguments}}
		tool, ok := tools.Lookup(c.Name)
		switch {
		case bad != nil:
			p.result = bad
		case !ok:
			p.result = ptr(ErrorResult(fmt.Sprintf("There is no tool named %q.", c.Name)))
		case !acc.allowed(tool):
			p.result = ptr(ErrorResult(fmt.Sprintf("The tool %q is not allowed by policy.", c.Name)))
		default:
			p.tool = tool
			base := tool.Title
			if base == "" {
				base = tool.Name
			}
			p.info.Title, p.info.Kind, p.info.Meta = CallTitle(base, c.Arguments), tool.Kind, tool.Meta
		}
		if !json.Valid(c.Arguments) && len(c.Arguments) > 0 && p.result == nil {
			p.result = ptr(ErrorResult(fmt.Sprintf("The arguments for %q are not valid JSON: %s", c.Name, c.Arguments)))
		}
		if p.result == nil && tool.Preview != nil && ctx.Err() == nil {
			content, err := tool.Preview(ctx, orEmpty(c.Arguments))
			if err != nil {
				p.result = ptr(ErrorResult(err.Error()))
			}
			p.info.Content = content
		}
		sink(Event{Kind: EventToolCallStarted, Call: &p.info})
		pending[i] = p
	}
	for _, p := range pending {
		r.checkCall(ctx, acc, p)
		if p.result != nil || acc.Approver == nil || p.check.Decision == HookAllow {
			continue
		}
		if ctx.Err() != nil {
			p.result = ptr(ErrorResult("Cancelled before it ran."))
			continue
		}
		var rewritten json.RawMessage
		actx := context.WithValue(ctx, inputSlotKey{}, &rewritten)
		if p.check.Decision == HookAsk {
			actx = context.WithValue(actx, mustAskKey{}, true)
		}
		d, err := acc.Approver(actx, p.info, p.tool)
		switch {
		case ctx.Err() != nil:
			p.result = ptr(ErrorResult("Cancelled before it ran."))
		case err != nil:
			r.opts.Logger.Warn("approval failed; not running the tool", "session", key, "tool", p.info.Name, "err", err)
			p.result = ptr(ErrorResult(fmt.Sprintf("The tool call could not be approved: %v", err)))
		case d != Allow:
			p.result = ptr(ErrorResult("The user rejected this tool call. Do not retry it; continue without it or ask the user."))
		case len(rewritten) > 0:
			p.rewrite(rewritten)
		}
	}
	finished := func(p *pendingCall) {
		sink(Event{Kind: EventToolCallFinished, Call: &p.info, Result: p.result, Failed: p.result.IsError})
	}
	var wg sync.WaitGroup
	for _, p := range pending {
		if p.result != nil {
			finished(p)
			continue
		}
		sink(Event{Kind: EventToolCallRunning, Call: &p.info})
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := r.execute(ctx, p, sink)
			res = res.WithModelText(p.check.Context...)
			if acc.Hooks != nil && ctx.Err() == nil {
				res = acc.Hooks.AfterCall(ctx, p.info, res)
			}
			p.result = &res
			finished(p)
		}()
	}
	wg.Wait()
	msgs := make([]Message, len(pending))
	for i, p := range pending {
		msgs[i] = Message{Role: RoleTool, ToolCallID: p.call.ID, ToolName: p.call.Name, Result: p.result}
	}
	return msgs
}

// checkCall asks the hooks about p, a call not decided yet: a denied call
// gets its result, a rewritten one its new input.
func (r *Runner) checkCall(ctx context.Context, acc *ToolAccess, p *pendingCall) {
	if acc.Hooks == nil || p.result != nil || ctx.Err() != nil {
		return
	}
	p.check = acc.Hooks.BeforeCall(ctx, p.info)
	switch {
	case p.check.Decision == HookDeny:
		p.result = ptr(ErrorResult(p.check.Reason))
	case len(p.check.Input) > 0:
		p.rewrite(p.check.Input)
	}
}

// rewrite makes p run with input (a hook's rewrite), or, when input is
// not a JSON object, not run, the model told why.
func (p *pendingCall) rewrite(input json.RawMessage) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(input, &obj) != nil || obj == nil {
		p.result = ptr(ErrorResult(fmt.Sprintf("A hook rewrote the input of %q into something that is not a JSON object; the call was not made.", p.call.Name)))
		return
	}
	p.call.Arguments, p.info.RawInput = input, input
}

// execute runs one approved call, turning errors and panics into failed
// results.
func (r *Runner) execute(ctx context.Context, p *pendingCall, sink Sink) (res Result) {
	defer func() {
		if v := recover(); v != nil {
			r.opts.Logger.Error("tool panicked", "tool", p.info.Name, "panic", v)
			res = ErrorResult(fmt.Sprintf("The tool %q crashed: %v", p.info.Name, v))
		}
	}()
	server, _ := p.tool.Meta["server"].(string)
	ctx, span := r.opts.Telemetry.StartTool(ctx, telemetry.Tool{Name: p.call.Name, CallID: p.call.ID, Server: server})
	defer func() {
		if span != nil {
			span.SetContent(telemetry.KeyToolCallArguments, func() string { return string(p.call.Arguments) })
			span.SetContent(telemetry.KeyToolCallResult, func() string { return contentText(res.Content) })
			if res.IsError {
				span.Fail("tool_error", "the tool's result is an error")
			}
			span.End(ctx, ctx.Err())
		}
	}()
	res, err := p.tool.Execute(WithCall(ctx, p.info), orEmpty(p.call.Arguments), func(pr Progress) {
		sink(Event{Kind: EventToolCallProgress, Call: &p.info, Progress: pr})
	})
	if err != nil {
		if ctx.Err() != nil {
			return ErrorResult("Cancelled.")
		}
		return ErrorResult(err.Error())
	}
	return res
}

func ptr[T any](v T) *T { return &v }

// contentText is the text of content, for telemetry that opted in to it.
func contentText(content []Content) string {
	var b strings.Builder
	for _, c := range content {
		if c.Type == ContentText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// orEmpty is args, or an empty object when the model sent none.
func orEmpty(args json.RawMessage) json.RawMessage {
	if len(args) == 0 {
		return json.RawMessage("{}")
	}
	return args
}

// serialize makes sink safe to call from several goroutines, in order.
func serialize(sink Sink) Sink {
	if sink == nil {
		return func(Event) {}
	}
	var mu sync.Mutex
	return func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		sink(e)
	}
}
