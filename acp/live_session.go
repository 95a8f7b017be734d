package acp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"path/filepath"
	"slices"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/bridge"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/compact"
	"github.com/acpgate/acpgate/gateway/sysprompt"
	"github.com/acpgate/acpgate/internal/base/ratelimit"
	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/acpgate/acpgate/session"
)

// This file is a live session's state (liveSession) and the small
// questions the roles ask of it: its turn, its policy, its permission
// decisions, its roots, its modes and servers as reported to the editor;
// and what the Agent does to it as it opens, runs turns and closes.

// liveSession is a session open on this connection.
type liveSession struct {
	id    string
	cwd   string
	dirs  []string // the client's additionalDirectories
	store *session.Session
	mgr   *mcpclient.Manager
	sync  *bridge.Sync // the session's tools, derived from its servers' events
	// access is what the session's tool calls go through, for the model's
	// turns and /call alike: its tool view (sync), policy and approver.
	access gateway.ToolAccess
	ctx    context.Context // the session's life; cancelled by close
	stop   context.CancelFunc
	// clientPrompt is the system prompt from the client the session
	// keeps (_meta.systemPrompt; the zero value: none). Fixed while open.
	clientPrompt sysprompt.ClientPrompt

	// shared is the agent's shared servers (nil: none) and subs counts
	// the sessions' subscriptions on them.
	shared *mcpclient.Manager
	subs   *sharedSubs
	logger *slog.Logger

	// mu guards st; update is the one place that takes it.
	mu sync.Mutex
	st sessionState

	// The session's parts, each with its own lock (taken after mu when
	// both are, never before) and its own methods:
	running turnSlot      // the running turn, its queue and steers; closed (steering.go)
	shown   serverCards   // what the client was shown of the servers (servers.go)
	news    serverNews    // the servers' changes, told to the client (servers.go)
	notices serverNotices // the notices sent, per server (notices.go)
	signIns signIns       // the sign-ins shown (signin.go)
	pick    picker        // the model choice and the model built for it (config_options.go)
	ed      editState     // what /mcp add and remove changed (server_edits.go)
	res     resourceState // mentioned resources, advertised commands (resources.go)
	// compactor keeps history within the model's window (compaction.go).
	compactor *compact.Compactor
	// media decides which images and audio reach the session's model
	// (its limits, set on every turn; an endpoint that refused them).
	media gateway.MediaGate
	// written is the blobs written to the session log (blobs.go).
	written blobSet
	// skillSet is the session's skills (skills.go).
	skillSet *sessionSkills
	// hooks are the session's hooks and hooked runs them (hooks.go); both
	// nil when it has none. Set before the session is registered.
	hooks  *sessionHooks
	hooked *hookRun
}

// sessionState is what liveSession.mu guards: what the configuration
// says (replaced by /reload), the mode and "always" decisions, the
// history, the startup budget's end, the sampling limits and the system
// prompt. It is read and changed only in liveSession.update (snapshot
// copies it).
type sessionState struct {
	cfg     sessionConfig
	mode    string
	always  map[string]string // tool name -> "allow" | "reject"
	history gateway.History
	// startBy is when the startup budget ends: prompts and /call wait for
	// servers still connecting until then, no longer.
	startBy time.Time
	// sampleLimits holds the servers' sampling rate limits.
	sampleLimits map[string]*ratelimit.Window
	// prompt is the session's system prompt (system_prompt.go).
	prompt promptState
}

// update runs f on the session's state under its lock: the one place
// that state is read or changed. f must not call back into the session's
// state (update or snapshot) and takes only the parts' locks (they come
// after mu), never another session's.
func (s *liveSession) update(f func(st *sessionState)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.st)
}

// snapshot is a copy of the session's state as it is now. Its maps
// (always, sampleLimits) and its prompt's builder are the session's own,
// not copies: read or change them only in update.
func (s *liveSession) snapshot() sessionState {
	var st sessionState
	s.update(func(cur *sessionState) { st = *cur })
	return st
}

// isClientServer reports whether the server called name came from the
// client (its request or /mcp add) rather than the configuration.
func (s *liveSession) isClientServer(name string) bool { return s.ed.fromClient(name) }

// sessionPlace is where a session works: its cwd and the additional
// directories the client gave (both absolute).
type sessionPlace struct {
	cwd  string
	dirs []string
}

// allowed is the session's tool policy: its allow/deny globs; and
// load_skill only while the session has skills.
func (s *liveSession) allowed(tool gateway.Tool) bool {
	if tool.Name == loadSkillTool && !s.skillSet.any() {
		return false // offered only to a session with skills
	}
	return s.snapshot().cfg.policy.Allowed(tool.Name)
}

// roots are the session's directories as MCP roots: file:// URIs named
// after the directory.
func (s *liveSession) roots() []mcpclient.Root {
	dirs := append([]string{s.cwd}, s.dirs...)
	out := make([]mcpclient.Root, 0, len(dirs))
	for _, d := range dirs {
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(d)}
		out = append(out, mcpclient.Root{URI: u.String(), Name: filepath.Base(d)})
	}
	return out
}

// modes is the session's permission mode for clients of ACP's modes API
// (kept in step with the config option "mode").
func (s *liveSession) modes() *acpsdk.SessionModeState {
	return &acpsdk.SessionModeState{CurrentModeId: acpsdk.SessionModeId(s.snapshot().mode), AvailableModes: permissionModes()}
}

// responseMeta is serversMeta for a session/new, load or resume response,
// kept as the state the client knows (see peer.serversInfo).
func (s *liveSession) responseMeta() map[string]any {
	return s.news.known(s.serversMeta)
}

// metaKey is meta as JSON, to compare two states.
func metaKey(meta map[string]any) string {
	b, _ := json.Marshal(meta)
	return string(b)
}

// serversMeta is the _meta of a session/new or load response (and of the
// session_info_updates that follow): each server's state and tool count.
func (s *liveSession) serversMeta() map[string]any {
	list := []map[string]any{}
	for _, st := range s.mgr.Statuses() {
		e := map[string]any{"name": st.Name, "transport": string(st.Transport), "state": string(st.State), "tools": st.Tools}
		if st.Error != "" {
			e["error"] = st.Error
		}
		if st.Warning != "" {
			e["warning"] = st.Warning
		}
		list = append(list, e)
	}
	return map[string]any{"acpgate": map[string]any{"mcpServers": list}}
}

// remember keeps an "always" decision ("allow" or "reject") about key (a
// tool name, or samplingKey of a server) for the session, and saves it.
func (s *liveSession) remember(key, decision string) {
	s.update(func(st *sessionState) { st.always[key] = decision })
	if err := s.store.UpdateMeta(func(m *session.Meta) {
		if m.Always == nil {
			m.Always = map[string]string{}
		}
		m.Always[key] = decision
	}); err != nil {
		s.logger.Warn("saving a permission decision", "session", s.id, "err", err)
	}
}

// samplingLimiter returns the server's sampling rate limit in the session
// (nil: none), made the first time it is asked for.
func (st *sessionState) samplingLimiter(server string, perMinute int) *ratelimit.Window {
	if perMinute <= 0 {
		return nil
	}
	if st.sampleLimits == nil {
		st.sampleLimits = map[string]*ratelimit.Window{}
	}
	l, ok := st.sampleLimits[server]
	if !ok {
		l = ratelimit.New(perMinute, time.Minute)
		st.sampleLimits[server] = l
	}
	return l
}

// The permission modes of a session.
const (
	modeAsk  = "ask"
	modeAuto = "auto"
)

// statuses is the state of the session's servers, its own and then the
// shared ones it sees (those its own do not shadow).
func (s *liveSession) statuses() []mcpclient.Status {
	out := s.mgr.Statuses()
	if s.shared == nil {
		return out
	}
	for _, st := range s.shared.Statuses() {
		if _, own := s.mgr.Status(st.Name); !own {
			out = append(out, st)
		}
	}
	return out
}

// sessionID implements permissionSession.
func (s *liveSession) sessionID() string { return s.id }

// decision implements permissionSession.
func (s *liveSession) decision(key string) (mode, always string) {
	s.update(func(st *sessionState) { mode, always = st.mode, st.always[key] })
	return mode, always
}

// autoApproved implements permissionSession: the configuration's policy.
func (s *liveSession) autoApproved(tool string) bool {
	return s.snapshot().cfg.policy.AutoApproved(tool)
}

var _ permissionSession = (*liveSession)(nil)

// restore takes back what the session's metadata kept: the model choice
// (built by provider for the chosen name) and the MCP server changes
// (client is the servers the client asked for; changes that do not apply
// are logged and dropped). It returns the edits and the client's servers
// as edited (editState.current).
func (s *liveSession) restore(meta session.Meta, client []mcpclient.ServerSpec, provider func(choice string) (gateway.Provider, uint64)) (serverEdits, []mcpclient.ServerSpec) {
	s.pick.restore(meta)
	s.pick.setProvider(provider(s.pick.choice()))
	edits, err := restoreEdits(meta)
	if err == nil {
		err = s.ed.start(client, edits)
	} else {
		_ = s.ed.start(client, serverEdits{})
	}
	if err != nil {
		s.logger.Warn("MCP server changes not restored", "session", s.id, "err", err)
	}
	return s.ed.current()
}

// grant gives the session its tool view and what its tool calls go
// through: that view, its policy (allowed) and approve.
func (s *liveSession) grant(sync *bridge.Sync, approve func(ctx context.Context, call gateway.CallInfo, tool gateway.Tool) (gateway.Decision, error)) {
	s.sync = sync
	s.access = gateway.ToolAccess{Tools: sync, Policy: s.allowed, Approver: approve}
}

// connect gives the session its Manager (not launched) and starts its
// startup budget. Called before the session is registered.
func (s *liveSession) connect(mgr *mcpclient.Manager, budget time.Duration) {
	s.mgr = mgr
	s.update(func(st *sessionState) { st.startBy = time.Now().Add(budget) })
}

// launch starts the session's servers once it is registered, and takes
// the models listed meanwhile into its picker.
func (s *liveSession) launch(listed <-chan []gateway.ModelInfo) {
	// Attached once registered: a shared server's change from now on
	// reaches the view by its event (sharedEvent), an earlier one by
	// Attach's reading of the catalog.
	s.sync.Attach(sessionCaller{own: s.mgr, shared: s.shared})
	// The servers connect in the background: the session is answered at
	// once, showing them connecting, and what needs their tools waits for
	// them within the startup budget (peer.waitServers).
	s.mgr.Launch()
	models := <-listed
	s.pick.setListed(models)
}

// serverChanged follows an event of the session's servers: its tool view
// takes it, and the change is noted for the client (serverNews).
func (s *liveSession) serverChanged(e mcpclient.Event) {
	s.sync.OnEvent(e)
	s.news.changed()
}

// hasModel reports whether the session has a model built for it now.
func (s *liveSession) hasModel() bool {
	p, _ := s.pick.model()
	return p != nil
}

// failedServers is the state of the session's own servers that failed.
func (s *liveSession) failedServers() []mcpclient.Status {
	var failed []mcpclient.Status
	for _, st := range s.mgr.Statuses() {
		if st.State == mcpclient.StateFailed {
			failed = append(failed, st)
		}
	}
	return failed
}

// markAnnounced notes that the client was told of the session's servers
// (serverCards.announce).
func (s *liveSession) markAnnounced() { s.shown.announce() }

// resourceUpdated marks a subscribed resource updated, for the model's
// next turn.
func (s *liveSession) resourceUpdated(k resourceKey) { s.res.updated(k) }

// turn runs run as the session's running turn (turnSlot.take), with a
// context cancelled by session/cancel and by the session's close. A
// prompt sent while another turn runs waits in the session's queue
// (queued is told its place) and runs when the turns before it have
// ended. A turn that could not start is cancelled (err says why when the
// session is closed or its queue is full). Prompts steered into the turn
// that it ended without taking (a model error, the step limit, a
// max_tokens stop) are not lost: unless the turn was cancelled, the
// same turn goes on with them (carry), before any queued prompt runs.
func (s *liveSession) turn(ctx context.Context, queued func(place int), run func(ctx context.Context) acpsdk.StopReason, carry func(ctx context.Context, prompt []acpsdk.ContentBlock) acpsdk.StopReason) (acpsdk.StopReason, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopOnClose := context.AfterFunc(s.ctx, cancel)
	defer stopOnClose()
	turn := make(chan struct{})
	if ok, err := s.running.take(ctx, s.id, cancel, turn, queued); !ok {
		return acpsdk.StopReasonCancelled, err
	}
	defer func() {
		if dropped := s.running.end(); dropped > 0 {
			s.logger.Info("steered prompts dropped: the turn ended before taking them", "session", s.id, "prompts", dropped)
		}
		close(turn)
	}()
	reason := run(ctx)
	for ctx.Err() == nil {
		left := s.running.takeSteers(true)
		if len(left) == 0 {
			break
		}
		s.logger.Info("the turn ended before taking steered prompts; it goes on with them", "session", s.id, "prompts", len(left))
		reason = carry(ctx, slices.Concat(left...))
	}
	return reason, nil
}

// interrupt cancels the session's running turn and its queued prompts
// (session/cancel's rule: docs/steering.md).
func (s *liveSession) interrupt() { s.running.interrupt() }

// close tears the session down: turn, servers, tools, then (after
// detached) its store. Servers not gone when ctx ends are killed at once.
func (s *liveSession) close(ctx context.Context, detached func()) error {
	cancel, turn := s.running.close()
	if cancel != nil {
		cancel()
		// A turn stuck writing to a client that stopped reading must not
		// keep the servers alive: past ctx, close without it.
		select {
		case <-turn:
		case <-ctx.Done():
			s.logger.Warn("closing a session whose turn has not ended", "session", s.id)
		}
	}
	if s.hooked != nil {
		s.hooked.sessionEnd()
	}
	s.unsubscribeAll(ctx)
	s.stop()
	err := s.mgr.Close(ctx)
	s.sync.Detach()
	detached()
	return errors.Join(err, s.store.Close())
}

// addHistory adds a model turn's messages to the session's history;
// history, when set, is the whole conversation after a turn that
// compacted it, and replaces the history instead.
func (s *liveSession) addHistory(msgs []gateway.Message, history gateway.History) {
	s.update(func(st *sessionState) {
		if history != nil {
			st.history = history
		} else {
			st.history = append(st.history, msgs...)
		}
	})
}

// prepareRun sets what the session's state says on a model turn's
// options: the note of server edits not yet told (before the input), the
// history and then prior, the configuration's run options, the context
// window and the compactor.
func (s *liveSession) prepareRun(cf *agentConfig, run *gateway.RunOptions, prior []gateway.Message) {
	input := run.Input
	s.update(func(st *sessionState) {
		if note := s.ed.takeUntold(); note != "" {
			run.Input = append([]gateway.Content{{Type: gateway.ContentText, Text: note}}, input...)
		}
		run.History = append(st.history[:len(st.history):len(st.history)], prior...)
		st.cfg.runOptions(run)
		run.ModelName, run.ContextWindow, _ = s.current(cf, st.cfg)
		run.ProviderName = cf.settings(st.cfg).ResolvedProvider()
		s.compaction(run, st.cfg)
		s.media.SetLimits(st.cfg.mediaLimits())
	})
	run.Media = &s.media
}

// bridgeOptions is the bridge's options of the session's configuration
// now (agentConfig.bridgeBase).
func (s *liveSession) bridgeOptions(cf *agentConfig) *bridge.Options {
	cfg := s.snapshot().cfg
	return cfg.bridgeOptions(cf.bridgeBase(s.id))
}

// samplingTerms is what a session's configuration and decisions say of a
// server's sampling requests.
type samplingTerms struct {
	pol     samplingPolicy
	limits  gateway.OutputLimits
	media   *gateway.MediaGate // the session's: what images and audio reach the model
	trusted bool
	always  string            // the "always" decision about the server ("": none)
	limiter *ratelimit.Window // nil: no rate limit
}

// samplingTerms returns the session's terms for server's sampling
// requests, its rate limiter made the first time.
func (s *liveSession) samplingTerms(server string) samplingTerms {
	var t samplingTerms
	s.update(func(st *sessionState) {
		t.pol = st.cfg.samplingFor(server)
		t.limits = st.cfg.outputLimits()
		s.media.SetLimits(st.cfg.mediaLimits())
		t.media = &s.media
		t.trusted, t.always = st.cfg.trusted[server], st.always[samplingKey(server)]
		t.limiter = st.samplingLimiter(server, t.pol.perMinute)
	})
	return t
}

// chargeUsage returns the context window of the session's model and,
// when its pricing is configured, adds the cost of usage u to the
// session's (cost, in the pricing's currency; costs, all of them as
// saved; both nil without pricing). The cost is counted in telemetry too
// (acpgate.gen_ai.cost).
func (s *liveSession) chargeUsage(cf *agentConfig, u gateway.Usage) (window int, cost *acpsdk.Cost, costs map[string]any) {
	s.update(func(st *sessionState) {
		var pricing *config.Pricing
		var model string
		model, window, pricing = s.current(cf, st.cfg)
		if pricing != nil {
			cur := pricing.CurrencyCode()
			spent := pricing.Cost(u.InputTokens, u.OutputTokens) + pricing.CacheCost(u.CacheWriteTokens, u.CacheReadTokens, cf.settings(st.cfg).ResolvedProvider())
			cf.opts.Telemetry.Cost(context.Background(), model, cur, spent)
			total, all := s.addCost(cur, spent)
			cost = &acpsdk.Cost{Amount: total, Currency: cur}
			costs = costMeta(all)
		}
	})
	return window, cost, costs
}
