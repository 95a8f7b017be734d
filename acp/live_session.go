package acp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/url"
	"path/filepath"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/bridge"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/compact"
	"github.com/acpgate/acpgate/gateway/sysprompt"
	"github.com/acpgate/acpgate/internal/ratelimit"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/acpgate/acpgate/session"
)

// This file is a live session's state (liveSession) and the small
// questions the roles ask of it: its turn, its policy, its permission
// decisions, its roots, its modes and servers as reported to the editor.

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

	// Guarded by mu: what the configuration says (replaced by /reload),
	// the mode and "always" decisions, the history, the startup budget's
	// end, the sampling limits and the system prompt.
	mu      sync.Mutex
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

	// The session's parts, each with its own lock (taken after mu when
	// both are, never before) and its own methods:
	running turnSlot      // the running turn; closed (live_session.go)
	shown   serverCards   // what the client was shown of the servers (servers.go)
	news    serverNews    // the servers' changes, told to the client (servers.go)
	notices serverNotices // the notices sent, per server (notices.go)
	signIns signIns       // the sign-ins shown (signin.go)
	pick    picker        // the model choice and the model built for it (config_options.go)
	ed      editState     // what /mcp add and remove changed (server_edits.go)
	res     resourceState // mentioned resources, advertised commands (resources.go)
	// compactor keeps history within the model's window (compaction.go).
	compactor *compact.Compactor
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

// turnSlot is a session's running turn, one at a time, and whether the
// session is closed. The zero value is idle and open; safe for concurrent
// use (its own lock, never held while another is taken).
type turnSlot struct {
	mu     sync.Mutex
	cancel context.CancelFunc // of the running turn; nil when idle
	turn   chan struct{}      // closed when the running turn ends
	closed bool
}

// take makes the caller's turn (cancel, turn) the running one. A prompt
// sent while another runs supersedes it: the running turn is cancelled
// (it ends with stopReason cancelled) and this one starts once it has
// ended. ok is false when the session is closed (err says so; id names
// it) or ctx ended while waiting (this prompt is cancelled too).
func (ts *turnSlot) take(ctx context.Context, id string, cancel context.CancelFunc, turn chan struct{}) (ok bool, err error) {
	for {
		ts.mu.Lock()
		if ts.closed {
			ts.mu.Unlock()
			return false, invalidParams("session %q is closed", id)
		}
		if ts.cancel == nil {
			ts.cancel, ts.turn = cancel, turn
			ts.mu.Unlock()
			return true, nil
		}
		prevCancel, prevTurn := ts.cancel, ts.turn
		ts.mu.Unlock()
		prevCancel()
		select {
		case <-prevTurn:
		case <-ctx.Done():
			return false, nil
		}
	}
}

// end ends the running turn (the caller's, taken with take).
func (ts *turnSlot) end() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.cancel, ts.turn = nil, nil
}

// interrupt cancels the running turn, if there is one.
func (ts *turnSlot) interrupt() {
	ts.mu.Lock()
	cancel := ts.cancel
	ts.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// close marks the session closed (no turn starts from now on) and
// returns the running turn's cancel and end (nil, nil: none).
func (ts *turnSlot) close() (context.CancelFunc, chan struct{}) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.closed = true
	return ts.cancel, ts.turn
}

// isClosed reports whether the session is closed.
func (ts *turnSlot) isClosed() bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.closed
}

// allowed is the session's tool policy: its allow/deny globs.
func (s *liveSession) allowed(tool gateway.Tool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.policy.Allowed(tool.Name)
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
	s.mu.Lock()
	defer s.mu.Unlock()
	return &acpsdk.SessionModeState{CurrentModeId: acpsdk.SessionModeId(s.mode), AvailableModes: permissionModes()}
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
	s.mu.Lock()
	s.always[key] = decision
	s.mu.Unlock()
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
// (nil: none). Called with s.mu held.
func (s *liveSession) samplingLimiter(server string, perMinute int) *ratelimit.Window {
	if perMinute <= 0 {
		return nil
	}
	if s.sampleLimits == nil {
		s.sampleLimits = map[string]*ratelimit.Window{}
	}
	l, ok := s.sampleLimits[server]
	if !ok {
		l = ratelimit.New(perMinute, time.Minute)
		s.sampleLimits[server] = l
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
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode, s.always[key]
}

// autoApproved implements permissionSession: the configuration's policy.
func (s *liveSession) autoApproved(tool string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.policy.AutoApproved(tool)
}

var _ permissionSession = (*liveSession)(nil)
