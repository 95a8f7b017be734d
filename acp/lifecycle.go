package acp

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/google/uuid"

	"github.com/acpgate/acpgate/acp/jsonrpc"
	"github.com/acpgate/acpgate/acp/sdkservers"
	"github.com/acpgate/acpgate/bridge"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/internal/base/telemetry"
	"github.com/acpgate/acpgate/internal/inputs/mcpservers"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/acpgate/acpgate/session"
)

// This file is the session lifecycle: session/new, load, resume, fork,
// list, close, delete and cancel, and what opening and closing a session
// does.

// serverSpecs converts the client's mcpServers into specs. Their route
// has checked them (see normalizeServers): every entry is a stdio, http,
// sse or acp server with a name, unique in the list.
func serverSpecs(in []acpsdk.McpServer) ([]mcpclient.ServerSpec, error) {
	return mcpservers.Specs(sdkservers.FromSDKList(in), "mcpServers")
}

// checkCwd requires an absolute working directory.
func checkCwd(cwd string) error {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return invalidParams("cwd must be an absolute path, got %q", cwd)
	}
	return nil
}

// newSession answers session/new.
func (a *Agent) newSession(ctx context.Context, p acpsdk.NewSessionRequest) (any, error) {
	s, err := a.start(ctx, sessionStart{place: sessionPlace{p.Cwd, p.AdditionalDirectories}, servers: p.McpServers, meta: p.Meta})
	if err != nil {
		return nil, err
	}
	return a.created(s), nil
}

// created is the answer to session/new and session/fork: the session's
// id, modes, options and servers; once it has gone out, the failure
// cards and the command list follow (announce), for the client then
// knows the session.
func (a *Agent) created(s *liveSession) jsonrpc.Then {
	resp := acpsdk.NewSessionResponse{SessionId: acpsdk.SessionId(s.sessionID()), Modes: s.modes(), ConfigOptions: s.configOptions(a.conf), Meta: s.responseMeta()}
	return jsonrpc.Then{Result: resp, After: func() { a.announce(s) }}
}

// sessionStart is what session/new and session/fork ask of a new
// session.
type sessionStart struct {
	place   sessionPlace
	servers []acpsdk.McpServer
	meta    map[string]any // the request's _meta
	from    string         // the session to fork ("": none)
}

// start creates a session, stored and open: the path of session/new and
// session/fork. Its servers are the client's merged with the
// configured ones. A fork's history, mode, model choice and "always"
// decisions are its source's as stored at this moment (Store.Fork), and
// so are its profile and its system prompt from the client unless the
// request gives others. A bad _meta.systemPrompt is refused before
// anything is stored.
func (a *Agent) start(ctx context.Context, req sessionStart) (*liveSession, error) {
	ctx = telemetry.Extract(ctx, req.meta) // the session's servers' parent
	if err := checkCwd(req.place.cwd); err != nil {
		return nil, err
	}
	if err := checkDirs(req.place.dirs); err != nil {
		return nil, err
	}
	specs, err := serverSpecs(req.servers)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	change, ierr := requestedPrompt(req.meta)
	if ierr != nil {
		return nil, ierr
	}
	stored := ""
	if req.from != "" {
		m, err := a.opts.Store.Get(req.from)
		if err != nil {
			return nil, storeError(err, req.from, "forking")
		}
		stored, _ = m.Extra["profile"].(string)
	}
	profile := a.conf.profile(req.meta, stored)
	sc, err := a.conf.sessionConfigFor(profile)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	id := "sess_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	st, records, err := a.store(ctx, id, req, profile, change)
	if err != nil {
		return nil, err
	}
	s, err := a.open(ctx, st, req.place, specs, sc, history(records))
	if err != nil {
		return nil, err
	}
	return s, nil
}

// store creates session id for start: a new one, or a copy of req.from
// (titled after it, its cost and its /mcp add and remove changes left
// behind: a fork has the request's servers), with the profile, the
// request's cwd and directories, and the system prompt from the client
// that change gives (a fork keeps its source's when it gives none).
func (a *Agent) store(ctx context.Context, id string, req sessionStart, profile string, change promptChange) (*session.Session, []session.Record, error) {
	place := func(m *session.Meta) {
		change.apply(m)
		delete(m.Extra, "profile")
		if profile != "" {
			m.Extra["profile"] = profile
		}
		delete(m.Extra, extraDirs)
		if len(req.place.dirs) > 0 {
			m.Extra[extraDirs] = req.place.dirs
		}
	}
	if req.from != "" {
		unlock, err := a.ids.lock(ctx, req.from)
		if err != nil {
			return nil, nil, internalError("forking session %q: %v", req.from, err)
		}
		defer unlock()
		st, records, err := a.opts.Store.Fork(req.from, id, func(m *session.Meta) {
			m.Cwd = req.place.cwd
			m.Title = forkTitle(m.Title)
			delete(m.Extra, extraCost)
			delete(m.Extra, extraServerEdits)
			place(m)
		})
		if err != nil {
			return nil, nil, storeError(err, req.from, "forking")
		}
		return st, records, nil
	}
	st, err := a.opts.Store.Create(id, req.place.cwd)
	if err != nil {
		return nil, nil, internalError("creating the session: %v", err)
	}
	if profile != "" || len(req.place.dirs) > 0 || change.changes(st.Meta()) {
		if err := st.UpdateMeta(place); err != nil {
			_ = st.Close()
			return nil, nil, internalError("saving the session: %v", err)
		}
	}
	return st, nil, nil
}

// forkSession answers session/fork (ACP, unstable): a new session with
// its own id, log and servers (the request's merged with the configured
// ones, as for session/new) whose history, mode, model choice and
// "always" decisions are copied from the source as stored now (a turn
// running there is copied as far as it is written); the source is left as
// it is and stays open if it is. The response is session/new's.
func (a *Agent) forkSession(ctx context.Context, params json.RawMessage) (any, error) {
	from, ierr := stringParam(params, "sessionId")
	if ierr != nil {
		return nil, ierr.rpcError()
	}
	// mcpServers were checked as session/new's (normalizeServers).
	var p struct {
		Cwd                   string             `json:"cwd"`
		AdditionalDirectories []string           `json:"additionalDirectories"`
		McpServers            []acpsdk.McpServer `json:"mcpServers"`
		Meta                  map[string]any     `json:"_meta"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams("%v", err)
	}
	s, err := a.start(ctx, sessionStart{place: sessionPlace{p.Cwd, p.AdditionalDirectories}, servers: p.McpServers, meta: p.Meta, from: from})
	if err != nil {
		return nil, err
	}
	return a.created(s), nil
}

// deleteSession answers session/delete: a session open on this
// connection is closed first (its turn cancelled, its servers stopped,
// as session/close does), then its log and metadata are removed for good:
// session/list no longer shows it and session/load answers it as unknown.
func (a *Agent) deleteSession(ctx context.Context, params json.RawMessage) (any, error) {
	id, ierr := stringParam(params, "sessionId")
	if ierr != nil {
		return nil, ierr.rpcError()
	}
	unlock, err := a.ids.lock(ctx, id)
	if err != nil {
		return nil, internalError("deleting session %q: %v", id, err)
	}
	defer unlock()
	if _, err := a.closeLive(ctx, id); err != nil {
		a.logger.Warn("deleting a session that did not close cleanly", "session", id, "err", err)
	}
	if err := a.opts.Store.Delete(id); err != nil {
		return nil, storeError(err, id, "deleting")
	}
	a.logger.Info("session deleted", "session", id)
	return struct{}{}, nil
}

// extraDirs is the session metadata key of its additional directories.
const extraDirs = "additionalDirectories"

// open starts a session's servers (waiting at most the startup budget) and
// registers it.
func (a *Agent) open(ctx context.Context, st *session.Session, place sessionPlace, client []mcpclient.ServerSpec, sc sessionConfig, history gateway.History) (*liveSession, error) {
	meta := st.Meta()
	sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	cwd := place.cwd
	listed := a.conf.listModels(ctx, sc) // meanwhile, bounded
	mode := meta.Mode
	if mode != modeAuto {
		mode = modeAsk
	}
	always := map[string]string{}
	for k, v := range meta.Always {
		always[k] = v
	}
	s := &liveSession{
		id: meta.ID, cwd: cwd, dirs: place.dirs, store: st, ctx: sctx, stop: stop,
		st:     sessionState{cfg: sc, mode: mode, always: always, history: history},
		shared: a.shared.mgr, subs: &a.subs, logger: a.logger, compactor: a.conf.newCompactor(meta.ID, sc), clientPrompt: keptPrompt(meta, a.logger),
	}
	source := "startup"
	if len(history) > 0 {
		source = "resume"
	}
	if s.hooks = a.conf.sessionHooks(sc, cwd, place.dirs, source); s.hooks != nil {
		s.hooked = &hookRun{pe: a.peer, log: a.logger, s: s}
	}
	edits, edited := s.restore(meta, client, func(choice string) (gateway.Provider, uint64) {
		return a.conf.provider(ctx, sc, choice)
	})
	specs := a.conf.merge(edits.configured(sc.servers), edited)
	s.skillSet = a.conf.newSkills(s)
	native := append(a.conf.nativeTools(meta.ID, cwd, place.dirs, sc), s.skillSet.tool())
	s.grant(bridge.NewSync(sc.bridgeOptions(a.conf.bridgeBase(meta.ID)), native...),
		func(ctx context.Context, call gateway.CallInfo, tool gateway.Tool) (gateway.Decision, error) {
			return a.perms.approve(ctx, s, call, tool)
		})
	if s.hooked != nil {
		s.access.Hooks = callHooks{hr: *s.hooked}
	}
	mo := a.mcpOptions(s, cwd, specs, sc)
	mgr, err := mcpclient.New(specs, &mo)
	if err != nil {
		stop()
		_ = st.Close()
		return nil, invalidParams("%v", err)
	}
	s.connect(mgr, a.conf.budgetFor(sc))
	a.mu.Lock()
	if a.closing {
		a.mu.Unlock()
		_ = a.closeSession(ctx, s)
		return nil, internalError("the agent is shutting down")
	}
	a.sessions[meta.ID] = s
	a.mu.Unlock()
	a.opts.Telemetry.SessionOpened(ctx)
	s.launch(listed)
	return s, nil
}

// mcpOptions returns the MCP client options of session s: the agent's
// template with the session's limits, logger, cwd, sign-in, events and
// answers to the servers' requests.
func (a *Agent) mcpOptions(s *liveSession, cwd string, specs []mcpclient.ServerSpec, sc sessionConfig) mcpclient.Options {
	mo := a.opts.MCP
	mo.Trace = telemetry.ParentOf(s.ctx) // session/new's trace context
	sc.applyLimits(&mo, specs)
	mo.Logger = a.logger.With("session", s.sessionID())
	mo.Cwd = cwd
	mo.Prepare = a.conf.prepareFor(s.isClientServer, policyOf(sc.sandboxes.ClientServerSandbox))
	mo.Workspace = append([]string{cwd}, s.dirs...)
	mo.Redact = a.conf.redact()
	mo.SignIn = a.asks.presentSignIn(s)
	observe := a.opts.MCP.OnEvent
	mo.OnEvent = func(e mcpclient.Event) {
		s.serverChanged(e)
		a.serverEvent(s, e)
		a.resourceEvent(s, e)
		if observe != nil {
			observe(e)
		}
	}
	// Servers' questions and roots are always answered; sampling is
	// declared when the session has a model (as chosen now: a model
	// /reload brings reaches servers started after it).
	requests := serverRequests{u: a.asks, s: s}
	mo.Elicitor, mo.Roots = requests, requests
	mo.Tunnel = a.tunnel
	if s.hasModel() {
		mo.Sampler = requests
	}
	return mo
}

// announce sends what a client wants right after a session opens: the
// slash commands, a card for every server that failed, and to a client
// that takes notices, one for each of the servers it uses that failed or
// needs sign-in.
func (a *Agent) announce(s *liveSession) {
	s.markAnnounced()
	a.cmds.advertiseCommands(s, true)
	for _, st := range s.failedServers() {
		a.peer.failureCard(s, st)
	}
	a.peer.notifyServers(s, s.statuses)
	a.peer.serversInfo(s)
}

// serverEvent reports servers that fail, at start or after restarts,
// closes the "still connecting" card of a server that settled, sends the
// notice a change of state calls for, and tells the client the servers'
// new states.
func (a *Agent) serverEvent(s *liveSession, e mcpclient.Event) {
	if e.Kind != mcpclient.EventStatus {
		return
	}
	if e.Status.State == mcpclient.StateFailed {
		a.peer.failureCard(s, e.Status)
	}
	if e.Status.State != mcpclient.StateConnecting {
		a.peer.settledCard(s, e.Status)
	}
	a.asks.signInEvent(s, e.Status)
	a.peer.notifyServers(s, statusOf(e.Status))
	a.peer.serversInfo(s)
}

// LoadSession answers session/load: the history is replayed to the
// client before the response.
func (a *Agent) LoadSession(ctx context.Context, p acpsdk.LoadSessionRequest) (acpsdk.LoadSessionResponse, error) {
	ctx = telemetry.Extract(ctx, p.Meta) // the session's servers' parent
	s, records, err := a.reopen(ctx, string(p.SessionId), sessionPlace{p.Cwd, p.AdditionalDirectories}, p.McpServers, p.Meta)
	if err != nil {
		return acpsdk.LoadSessionResponse{}, err
	}
	a.turns.replay(s, records)
	meta := s.responseMeta() // what announce compares the servers' states with
	a.announce(s)
	return acpsdk.LoadSessionResponse{Modes: s.modes(), ConfigOptions: s.configOptions(a.conf), Meta: meta}, nil
}

// ResumeSession answers session/resume: like load, without the replay.
func (a *Agent) ResumeSession(ctx context.Context, p acpsdk.ResumeSessionRequest) (acpsdk.ResumeSessionResponse, error) {
	ctx = telemetry.Extract(ctx, p.Meta) // the session's servers' parent
	s, _, err := a.reopen(ctx, string(p.SessionId), sessionPlace{p.Cwd, p.AdditionalDirectories}, p.McpServers, p.Meta)
	if err != nil {
		return acpsdk.ResumeSessionResponse{}, err
	}
	meta := s.responseMeta()
	a.announce(s)
	return acpsdk.ResumeSessionResponse{Modes: s.modes(), ConfigOptions: s.configOptions(a.conf), Meta: meta}, nil
}

// reopen opens a stored session with the servers and directories of the
// request, and its system prompt from the client when it gives one (else
// the session keeps the one it has).
func (a *Agent) reopen(ctx context.Context, id string, place sessionPlace, mcp []acpsdk.McpServer, reqMeta map[string]any) (*liveSession, []session.Record, error) {
	if err := checkCwd(place.cwd); err != nil {
		return nil, nil, err
	}
	if err := checkDirs(place.dirs); err != nil {
		return nil, nil, err
	}
	specs, err := serverSpecs(mcp)
	if err != nil {
		return nil, nil, invalidParams("%v", err)
	}
	change, ierr := requestedPrompt(reqMeta)
	if ierr != nil {
		return nil, nil, ierr
	}
	unlock, err := a.ids.lock(ctx, id)
	if err != nil {
		return nil, nil, internalError("loading session %q: %v", id, err)
	}
	defer unlock()
	a.mu.Lock()
	_, live := a.sessions[id]
	a.mu.Unlock()
	if live {
		return nil, nil, invalidParams("session %q is already open on this connection", id)
	}
	st, records, err := a.opts.Store.Resume(id)
	if err != nil {
		return nil, nil, storeError(err, id, "loading")
	}
	stored, _ := st.Meta().Extra["profile"].(string)
	sc, err := a.conf.sessionConfigFor(a.conf.profile(reqMeta, stored))
	if err != nil {
		_ = st.Close()
		return nil, nil, invalidParams("%v", err)
	}
	if !slices.Equal(storedDirs(st.Meta()), place.dirs) || change.changes(st.Meta()) {
		if err := st.UpdateMeta(func(m *session.Meta) {
			delete(m.Extra, extraDirs)
			if len(place.dirs) > 0 {
				m.Extra[extraDirs] = place.dirs
			}
			change.apply(m)
		}); err != nil {
			_ = st.Close()
			return nil, nil, internalError("saving session %q: %v", id, err)
		}
	}
	s, err := a.open(ctx, st, place, specs, sc, history(records))
	if err != nil {
		return nil, nil, err
	}
	return s, records, nil
}

// ListSessions answers session/list.
func (a *Agent) ListSessions(_ context.Context, p acpsdk.ListSessionsRequest) (acpsdk.ListSessionsResponse, error) {
	var cwd, cursor string
	if p.Cwd != nil {
		cwd = *p.Cwd
	}
	if p.Cursor != nil {
		cursor = *p.Cursor
	}
	metas, next, err := a.opts.Store.List(cwd, cursor, 50)
	if errors.Is(err, session.ErrInvalidCursor) {
		return acpsdk.ListSessionsResponse{}, invalidParams("cursor %q is not one session/list returned", cursor)
	}
	if err != nil {
		return acpsdk.ListSessionsResponse{}, internalError("listing sessions: %v", err)
	}
	resp := acpsdk.ListSessionsResponse{Sessions: []acpsdk.SessionInfo{}}
	for _, m := range metas {
		info := acpsdk.SessionInfo{SessionId: acpsdk.SessionId(m.ID), Cwd: m.Cwd, UpdatedAt: acpsdk.Ptr(m.Updated.UTC().Format(time.RFC3339Nano))}
		if m.Title != "" {
			info.Title = acpsdk.Ptr(m.Title)
		}
		info.AdditionalDirectories = storedDirs(m)
		resp.Sessions = append(resp.Sessions, info)
	}
	if next != "" {
		resp.NextCursor = &next
	}
	return resp, nil
}

// CloseSession answers session/close: cancels the running turn, stops the
// servers, clears the session's tools and closes its store.
func (a *Agent) CloseSession(ctx context.Context, p acpsdk.CloseSessionRequest) (acpsdk.CloseSessionResponse, error) {
	live, err := a.closeLive(ctx, string(p.SessionId))
	if !live {
		return acpsdk.CloseSessionResponse{}, invalidParams("unknown session %q", p.SessionId)
	}
	return acpsdk.CloseSessionResponse{}, err
}

// closeLive closes session id if it is open on this connection (live
// says whether it was), within closeBound whatever ctx says.
func (a *Agent) closeLive(ctx context.Context, id string) (live bool, err error) {
	a.mu.Lock()
	s, ok := a.sessions[id]
	delete(a.sessions, id)
	a.mu.Unlock()
	if !ok {
		return false, nil
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeBound)
	defer cancel()
	if err := a.closeSession(cctx, s); err != nil {
		return true, internalError("closing session %q: %v", id, err)
	}
	return true, nil
}

// storeError is the answer to the store's error err about session id
// (doing says what failed): invalid params for an invalid, unknown or
// busy id, else an internal error.
func storeError(err error, id, doing string) error {
	switch {
	case errors.Is(err, session.ErrInvalidID):
		return badParam("sessionId", "invalid session id %q (acpgate's ids are 1 to %d letters, digits, '_' and '-')", id, session.MaxIDLen).rpcError()
	case errors.Is(err, session.ErrNotFound):
		return badParam("sessionId", "unknown session %q", id).rpcError()
	case errors.Is(err, session.ErrInUse):
		return badParam("sessionId", "session %q is already open on this connection", id).rpcError()
	}
	return internalError("%s session %q: %v", doing, id, err)
}

// idLocks serialises what opens, forks from or deletes one session id
// (session/load, resume, fork, delete), so that, say, a delete and a load
// of one session never interleave. The zero value is ready; safe for
// concurrent use.
type idLocks struct {
	mu   sync.Mutex
	held map[string]chan struct{} // closed when released
}

// lock waits until id is free and takes it, or returns ctx's error;
// unlock releases it.
func (l *idLocks) lock(ctx context.Context, id string) (unlock func(), err error) {
	for {
		l.mu.Lock()
		busy, ok := l.held[id]
		if !ok {
			if l.held == nil {
				l.held = map[string]chan struct{}{}
			}
			mine := make(chan struct{})
			l.held[id] = mine
			l.mu.Unlock()
			return func() {
				l.mu.Lock()
				delete(l.held, id)
				l.mu.Unlock()
				close(mine)
			}, nil
		}
		l.mu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// closeSession tears a session down: turn, servers, tools, store. Servers
// not gone when ctx ends are killed at once.
func (a *Agent) closeSession(ctx context.Context, s *liveSession) error {
	defer a.opts.Telemetry.SessionClosed(ctx)
	return s.close(ctx, func() { a.asks.forgetURLs(s) })
}

// SetSessionMode answers session/set_mode.
func (a *Agent) SetSessionMode(_ context.Context, p acpsdk.SetSessionModeRequest) (acpsdk.SetSessionModeResponse, error) {
	s, err := a.lookup(p.SessionId)
	if err != nil {
		return acpsdk.SetSessionModeResponse{}, err
	}
	if err := a.setMode(s, string(p.ModeId)); err != nil {
		return acpsdk.SetSessionModeResponse{}, err
	}
	// Clients of either API see the change: the config option "mode"
	// changed outside session/set_config_option.
	a.peer.update(s, acpsdk.SessionUpdate{CurrentModeUpdate: &acpsdk.SessionCurrentModeUpdate{CurrentModeId: p.ModeId}})
	a.peer.update(s, acpsdk.SessionUpdate{ConfigOptionUpdate: &acpsdk.SessionConfigOptionUpdate{ConfigOptions: s.configOptions(a.conf)}})
	return acpsdk.SetSessionModeResponse{}, nil
}

// Cancel answers session/cancel: the running turn ends with cancelled and
// its MCP calls are cancelled at their servers.
func (a *Agent) Cancel(_ context.Context, p acpsdk.CancelNotification) error {
	s, err := a.lookup(p.SessionId)
	if err != nil {
		return err
	}
	s.interrupt()
	return nil
}

// storedDirs returns the additional directories saved with a session.
func storedDirs(m session.Meta) []string {
	switch list := m.Extra[extraDirs].(type) {
	case []string:
		return list
	case []any: // as decoded from the disk
		var dirs []string
		for _, d := range list {
			if s, ok := d.(string); ok {
				dirs = append(dirs, s)
			}
		}
		return dirs
	}
	return nil
}

// checkDirs requires the additional directories of a session to be
// absolute paths.
func checkDirs(dirs []string) error {
	for i, d := range dirs {
		if !filepath.IsAbs(d) {
			return invalidParams("additionalDirectories[%d] must be an absolute path, got %q", i, d)
		}
	}
	return nil
}
