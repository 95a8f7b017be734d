package acp

import (
	"context"
	"errors"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/bridge"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/sysprompt"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/acpgate/acpgate/session"
)

// This file is how the roles (peer, commands, turns, userRequests,
// agentConfig, auth, sharedServers) see a live session: the interfaces
// they take it as, and the methods behind them, each a question or a
// change the session answers with its own parts (their own locks), so
// that no role reaches into liveSession's fields.

// peerSession is a live session as the peer sees it: what it tells the
// client of, and when (liveSession implements it). Safe for concurrent
// use.
type peerSession interface {
	sessionID() string
	lifetime() context.Context
	known() bool
	isClosed() bool
	openConnecting(server string) bool
	closeConnecting(server string) bool
	markFailed(server string) bool
	tellNotices(read func() []mcpclient.Status, send func(Notice))
	tellNews(send func(map[string]any))
	nextNews() <-chan struct{}
	waitSettled(ctx context.Context) error
	statuses() []mcpclient.Status
}

var _ peerSession = (*liveSession)(nil)

// configSession is a live session as agentConfig sees it when it builds
// the session's system prompt and model (liveSession implements it): its
// place, tools and servers, its model as built, and its prompt's builder
// and instructions files. Safe for concurrent use.
type configSession interface {
	sessionID() string
	promptInput(in *sysprompt.Input)
	projectDirs() []string
	nativeTools() []gateway.Tool
	allowed(tool gateway.Tool) bool
	statuses() []mcpclient.Status
	hasModel() bool
	modelBuilt() (gateway.Provider, uint64)
	rebuildModel(built uint64, build func(sc sessionConfig, choice string) (gateway.Provider, uint64)) gateway.Provider
	buildPrompt(cf *agentConfig, in sysprompt.Input, files []sysprompt.Instructions, servers []promptServer, extra []sysprompt.Section) sysprompt.Prompt
	loadedFiles() (files []sysprompt.Instructions, skipped []sysprompt.Skipped, loaded bool)
	keepFiles(files []sysprompt.Instructions, skipped []sysprompt.Skipped)
	skills() *sessionSkills
}

var _ configSession = (*liveSession)(nil)

// advertSession is a live session as commands.advertiseCommands sees it:
// the peer's view, its commands, and the record of what was advertised
// (liveSession implements it). Safe for concurrent use.
type advertSession interface {
	peerSession
	advertising(f func())
	asCommands() commandView
	advertised(key string) (same bool)
}

var _ advertSession = (*liveSession)(nil)

// askSession is a live session as userRequests sees it when it puts a
// server's question to the user: the peer's view, the model and state
// (for sampling), its "always" decisions and its sign-ins (liveSession
// implements it). Safe for concurrent use.
type askSession interface {
	peerSession
	configSession
	samplingTerms(server string) samplingTerms
	remember(key, decision string)
	knownCh() <-chan struct{}
	setSignIn(server string, st *signInState)
	endSignIn(st mcpclient.Status) []endedSignIn
}

var _ askSession = (*liveSession)(nil)

// turnSession is a live session as turns and turnLog see it when they run
// and record a turn: the peer's and agentConfig's views, its commands,
// tools and resources, its log and metadata, and what its state says of
// and keeps from a turn (liveSession implements it). Safe for concurrent
// use.
type turnSession interface {
	peerSession
	configSession
	asCommands() commandView
	toolAccess() gateway.ToolAccess
	caller() sessionCaller
	takeChanged() []resourceKey
	subscribeMention(ctx context.Context, k resourceKey)
	bridgeOptions(cf *agentConfig) *bridge.Options
	prepareRun(cf *agentConfig, run *gateway.RunOptions, prior []gateway.Message)
	addHistory(msgs []gateway.Message, history gateway.History)
	chargeUsage(cf *agentConfig, u gateway.Usage) (window int, cost *acpsdk.Cost, costs map[string]any)
	maxStoredResultBytes() int
	titled() bool
	updateMeta(f func(m *session.Meta)) error
	appendRecord(kind string, v any) error
	blobs() *blobSet
	syncSoon()
	takeSteers(last bool) [][]acpsdk.ContentBlock
	hooksRun() *hookRun
}

var _ turnSession = (*liveSession)(nil)

// lifetime is the session's life: done once it is closed. What is sent to
// the client for the session is sent within it.
func (s *liveSession) lifetime() context.Context { return s.ctx }

// known reports whether the client knows the session (it was announced)
// and the session is open: only then is it told of the session's servers
// and commands.
func (s *liveSession) known() bool {
	announced, closed := s.shown.isAnnounced(), s.running.isClosed()
	return announced && !closed
}

// isClosed reports whether the session is closed.
func (s *liveSession) isClosed() bool { return s.running.isClosed() }

// knownCh is closed once the client knows the session
// (serverCards.knownCh).
func (s *liveSession) knownCh() <-chan struct{} { return s.shown.knownCh() }

// openConnecting notes that server's "still connecting" card is shown;
// false when it already is (serverCards.openConnecting).
func (s *liveSession) openConnecting(server string) bool { return s.shown.openConnecting(server) }

// closeConnecting notes that server's "still connecting" card is closed;
// false when none was open (serverCards.closeConnecting).
func (s *liveSession) closeConnecting(server string) bool { return s.shown.closeConnecting(server) }

// markFailed notes that server's failure card is shown; false when it
// need not be (serverCards.markFailed).
func (s *liveSession) markFailed(server string) bool { return s.shown.markFailed(server) }

// tellNotices sends, through send, the notices the servers' states that
// read gives call for (serverNotices.tell).
func (s *liveSession) tellNotices(read func() []mcpclient.Status, send func(Notice)) {
	s.notices.tell(read, send)
}

// tellNews sends, through send, the servers' states when they differ from
// what the client was last told (serverNews.tell of serversMeta).
func (s *liveSession) tellNews(send func(map[string]any)) { s.news.tell(s.serversMeta, send) }

// nextNews is closed at the servers' next change (serverNews.next).
func (s *liveSession) nextNews() <-chan struct{} { return s.news.next() }

// waitSettled waits until the session's tool view has seen every change
// of its servers, its own and the shared ones, so far (Manager.Wait), or
// the startup budget or ctx ends.
func (s *liveSession) waitSettled(ctx context.Context) error {
	wctx, cancel := context.WithDeadline(ctx, s.snapshot().startBy)
	defer cancel()
	err := s.mgr.Wait(wctx)
	if s.shared != nil {
		err = errors.Join(err, s.shared.Wait(wctx))
	}
	return err
}

// sharedChanged follows an event of the agent's shared servers as
// serverChanged does the session's own; own reports whether the session
// has a server of its own of that name.
func (s *liveSession) sharedChanged(e mcpclient.Event) (own bool) {
	s.serverChanged(e)
	if e.Kind == mcpclient.EventStatus {
		_, own = s.mgr.Status(e.Server)
	}
	return own
}

// advertising runs f alone among the session's advertisements of its
// commands, so that a list computed earlier is never sent after a newer
// one.
func (s *liveSession) advertising(f func()) {
	s.res.advertising.Lock()
	defer s.res.advertising.Unlock()
	f()
}

// advertised records key as the commands advertised; same reports that it
// was already (resourceState.advertised).
func (s *liveSession) advertised(key string) (same bool) { return s.res.advertised(key) }

// takeChanged returns the subscribed resources updated since it was last
// called (resourceState.takeChanged).
func (s *liveSession) takeChanged() []resourceKey { return s.res.takeChanged() }

// setSignIn records server's sign-in as shown (signIns.set).
func (s *liveSession) setSignIn(server string, st *signInState) { s.signIns.set(server, st) }

// endSignIn ends the sign-ins of st's server that st reports ended
// (signIns.end).
func (s *liveSession) endSignIn(st mcpclient.Status) []endedSignIn {
	return s.signIns.end(st)
}

// logoutAll signs the session out of every server that is not stdio;
// failed is called for each that could not (a server without OAuth is
// no failure).
func (s *liveSession) logoutAll(ctx context.Context, failed func(server string, err error)) {
	for _, st := range s.mgr.Statuses() {
		if st.Transport != mcpclient.TransportStdio {
			if err := s.mgr.Logout(ctx, st.Name); err != nil && !errors.Is(err, mcpclient.ErrNoOAuth) {
				failed(st.Name, err)
			}
		}
	}
}

// syncSoon has the session's log reach the disk within the store's sync
// delay (session.Session.SyncSoon).
func (s *liveSession) syncSoon() { s.store.SyncSoon() }

// appendRecord appends a record of kind to the session's log.
func (s *liveSession) appendRecord(kind string, v any) error { return s.store.Append(kind, v) }

// blobs is which blobs the session wrote to its log (blobs.go).
func (s *liveSession) blobs() *blobSet { return &s.written }

// titled reports whether the session has a title.
func (s *liveSession) titled() bool { return s.store.Meta().Title != "" }

// updateMeta changes the session's saved metadata (session.Session.UpdateMeta).
func (s *liveSession) updateMeta(f func(m *session.Meta)) error { return s.store.UpdateMeta(f) }

// toolAccess is what the session's tool calls go through.
func (s *liveSession) toolAccess() gateway.ToolAccess { return s.access }

// addCost adds amount in currency cur to the session's cost, returning
// its total in cur, and all its costs (picker.addCost, picker.costs).
func (s *liveSession) addCost(cur string, amount float64) (total float64, costs map[string]float64) {
	total = s.pick.addCost(cur, amount)
	return total, s.pick.costs()
}

// modelBuilt is the model built for the session and the endpoint
// generation it was built for (picker.model).
func (s *liveSession) modelBuilt() (gateway.Provider, uint64) { return s.pick.model() }

// rebuildModel builds the session's model again with build (given its
// configuration and model choice) unless another turn did since built
// (picker.rebuilt).
func (s *liveSession) rebuildModel(built uint64, build func(sc sessionConfig, choice string) (gateway.Provider, uint64)) gateway.Provider {
	p, gen := build(s.snapshot().cfg, s.pick.choice())
	return s.pick.rebuilt(built, p, gen)
}

// promptInput is what the system prompt says of where the session works
// and what its client asked for: cwd, directories and the client's
// prompt.
func (s *liveSession) promptInput(in *sysprompt.Input) {
	in.Cwd, in.Dirs, in.Client = s.cwd, s.dirs, s.clientPrompt
}

// projectDirs are the session's cwd and additional directories.
func (s *liveSession) projectDirs() []string { return append([]string{s.cwd}, s.dirs...) }

// nativeTools are the native tools of the session's tool view now.
func (s *liveSession) nativeTools() []gateway.Tool { return s.sync.Current().Native() }
