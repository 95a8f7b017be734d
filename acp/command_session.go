package acp

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/acpgate/acpgate/bridge"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/compact"
	"github.com/acpgate/acpgate/gateway/sysprompt"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/acpgate/acpgate/session"
)

// This file is what a live session does for the slash commands: commandView,
// its side of commandSession (commands.go), and the live session's own
// methods it asks for what liveSession.mu guards. Each method takes the
// locks it needs: the session's state through liveSession.update (the
// configuration, the history), and the parts' own (ed, pick, the
// Managers, the tool view) after it, never before.

var _ commandSession = commandView{}

// commandState is what commandView asks of its live session
// (liveSession implements it): the state its mutex guards, read and
// changed in its own methods, and the waits and prompts that take the
// session whole. Safe for concurrent use.
type commandState interface {
	sessionID() string
	allowed(tool gateway.Tool) bool
	caller() sessionCaller
	startupBudget(cf *agentConfig) time.Duration
	editedSpecs(cf *agentConfig, edits serverEdits, client []mcpclient.ServerSpec) []mcpclient.ServerSpec
	configProfile() string
	takeConfig(sc sessionConfig)
	historySize() (messages, bytes int)
	historyMedia() (images, audio, bytes int)
	fitInput(cf *agentConfig) (history gateway.History, window int)
	waitServers(ctx context.Context, pe *peer, found func() bool)
	systemPromptFor(ctx context.Context, cf *agentConfig) (sysprompt.Prompt, []sysprompt.Skipped)
}

// commandView is a live session as the slash commands see it: the
// commandSession methods, on their own type so that liveSession's own
// stay few. It holds the session's parts it uses (each with its own
// lock) and the session as commandState; liveSession.asCommands builds it.
type commandView struct {
	sess      commandState
	id        string
	mgr       *mcpclient.Manager
	shared    *mcpclient.Manager // nil: no shared servers
	sync      *bridge.Sync
	access    gateway.ToolAccess
	store     *session.Session
	ed        *editState
	pick      *picker
	compactor *compact.Compactor
	skillSet  *sessionSkills
}

// asCommands is the session as the slash commands see it.
func (s *liveSession) asCommands() commandView {
	return commandView{sess: s, id: s.id, mgr: s.mgr, shared: s.shared, sync: s.sync, access: s.access,
		store: s.store, ed: &s.ed, pick: &s.pick, compactor: s.compactor, skillSet: s.skillSet}
}

// skills implements commandSession.
func (v commandView) skills() *sessionSkills { return v.skillSet }

// sessionID implements commandSession.
func (v commandView) sessionID() string { return v.id }

// ownStatuses implements commandSession.
func (v commandView) ownStatuses() []mcpclient.Status { return v.mgr.Statuses() }

// serverStatus implements commandSession: the session's own servers win
// over shared ones of the same name.
func (v commandView) serverStatus(name string) (st mcpclient.Status, shared, ok bool) {
	if st, ok := v.mgr.Status(name); ok {
		return st, false, true
	}
	if v.shared != nil {
		if st, ok := v.shared.Status(name); ok {
			return st, true, true
		}
	}
	return mcpclient.Status{}, false, false
}

// waitServers implements commandSession (peer.waitServers, peer.waitFor).
func (v commandView) waitServers(ctx context.Context, pe *peer, found func() bool) {
	v.sess.waitServers(ctx, pe, found)
}

// waitServers waits for the session's servers for a command: all of them
// (found nil), or until found reports true (peer.waitServers,
// peer.waitFor).
func (s *liveSession) waitServers(ctx context.Context, pe *peer, found func() bool) {
	if found == nil {
		pe.waitServers(ctx, s)
		return
	}
	pe.waitFor(ctx, s, found)
}

// login implements commandSession.
func (v commandView) login(ctx context.Context, server string) error {
	return v.mgr.Login(ctx, server)
}

// logout implements commandSession.
func (v commandView) logout(ctx context.Context, server string) error {
	return v.mgr.Logout(ctx, server)
}

// restartServer implements commandSession.
func (v commandView) restartServer(ctx context.Context, cf *agentConfig, name string) error {
	wctx, cancel := context.WithTimeout(ctx, v.sess.startupBudget(cf))
	defer cancel()
	err := v.mgr.Restart(wctx, name)
	if err != nil && !errors.Is(err, mcpclient.ErrUnknownServer) && wctx.Err() != nil {
		return nil // cut short: the server goes on connecting
	}
	return err
}

// edits implements commandSession.
func (v commandView) edits() serverEdits {
	edits, _ := v.ed.current()
	return edits
}

// applyEdits implements commandSession. A failure to store the edits is
// logged: the servers are changed all the same.
func (v commandView) applyEdits(ctx context.Context, cf *agentConfig, edits serverEdits) error {
	client, err := v.ed.apply(edits)
	if err != nil {
		return err
	}
	specs := v.sess.editedSpecs(cf, edits, client)
	if err := v.store.UpdateMeta(func(m *session.Meta) {
		delete(m.Extra, extraServerEdits)
		if len(edits.Added) > 0 || len(edits.Removed) > 0 {
			m.Extra[extraServerEdits] = edits
		}
	}); err != nil {
		cf.logger.Warn("saving the MCP server changes", "session", v.id, "err", err)
	}
	wctx, cancel := context.WithTimeout(ctx, v.sess.startupBudget(cf))
	defer cancel()
	if _, err := v.mgr.Reconfigure(wctx, specs); err != nil && wctx.Err() == nil {
		return err
	}
	return nil
}

// editedSpecs is the session's servers with edits and the client's
// servers merged in (agentConfig.merge), their limits applied from its
// configuration.
func (s *liveSession) editedSpecs(cf *agentConfig, edits serverEdits, client []mcpclient.ServerSpec) []mcpclient.ServerSpec {
	var specs []mcpclient.ServerSpec
	s.update(func(st *sessionState) {
		specs = cf.merge(edits.configured(st.cfg.servers), client)
		st.cfg.applyLimits(&mcpclient.Options{}, specs)
	})
	return specs
}

// tellModel implements commandSession.
func (v commandView) tellModel(note string) { v.ed.tell(note) }

// startupBudget is how long what needs the session's servers waits for
// them to connect (agentConfig.budgetFor of its configuration).
func (s *liveSession) startupBudget(cf *agentConfig) time.Duration {
	return cf.budgetFor(s.snapshot().cfg)
}

// tools implements commandSession.
func (v commandView) tools(filter string) []gateway.Tool {
	return slices.DeleteFunc(v.sync.Current().Filter(filter), func(t gateway.Tool) bool { return !v.sess.allowed(t) })
}

// offersTool implements commandSession.
func (v commandView) offersTool(name string) bool {
	_, ok := v.sync.Current().Lookup(name)
	return ok
}

// toolServer implements commandSession (bridge.Sync.Known).
func (v commandView) toolServer(name string) (string, bool) {
	t, ok := v.sync.Known(name)
	return t.Server, ok
}

// toolAccess implements commandSession.
func (v commandView) toolAccess() gateway.ToolAccess { return v.access }

// reload implements commandSession: the configuration is read and the
// servers reconfigured without the session's lock; the session takes the new
// configuration (and forgets its system prompt) once they are.
func (v commandView) reload(ctx context.Context, cf *agentConfig) ([]string, error) {
	sc, err := cf.sessionConfigFor(v.sess.configProfile())
	if err != nil {
		return nil, err
	}
	edits, client := v.ed.current()
	specs := cf.merge(edits.configured(sc.servers), client)
	sc.applyLimits(&mcpclient.Options{}, specs) // timeouts; other limits stay
	restarted, err := v.mgr.Reconfigure(ctx, specs)
	if err != nil {
		return nil, err
	}
	model, gen := cf.provider(ctx, sc, v.pick.choice())
	v.sess.takeConfig(sc)
	v.pick.setProvider(model, gen)
	v.sync.SetOptions(sc.bridgeOptions(cf.bridgeBase(v.id)))
	return restarted, nil
}

// configProfile is the profile the session's configuration was read for.
func (s *liveSession) configProfile() string {
	return s.snapshot().cfg.profile
}

// takeConfig makes sc the session's configuration and forgets its system
// prompt (built again from sc when next asked for).
func (s *liveSession) takeConfig(sc sessionConfig) {
	s.update(func(st *sessionState) {
		st.cfg = sc
		st.resetPrompt()
	})
	s.skillSet.reset()
}

// skills is the session's skills (skills.go).
func (s *liveSession) skills() *sessionSkills { return s.skillSet }

// systemPrompt implements commandSession (agentConfig.systemPrompt,
// agentConfig.instructionFiles).
func (v commandView) systemPrompt(ctx context.Context, cf *agentConfig) (sysprompt.Prompt, []sysprompt.Skipped) {
	return v.sess.systemPromptFor(ctx, cf)
}

// systemPromptFor is the session's system prompt and the instruction
// files left out of it (agentConfig.systemPrompt,
// agentConfig.instructionFiles).
func (s *liveSession) systemPromptFor(ctx context.Context, cf *agentConfig) (sysprompt.Prompt, []sysprompt.Skipped) {
	p := cf.systemPrompt(ctx, s)
	_, skipped := cf.instructionFiles(ctx, s)
	return p, skipped
}

// historySize implements commandSession.
func (v commandView) historySize() (messages, bytes int) { return v.sess.historySize() }

func (v commandView) historyMedia() (images, audio, bytes int) { return v.sess.historyMedia() }

// historyMedia counts the images and audio of the session's history.
func (s *liveSession) historyMedia() (images, audio, bytes int) {
	s.update(func(st *sessionState) { images, audio, bytes = gateway.MediaCount(st.history) })
	return images, audio, bytes
}

// historySize is the number of messages in the session's history and its
// size as JSON.
func (s *liveSession) historySize() (messages, bytes int) {
	s.update(func(st *sessionState) {
		if len(st.history) == 0 {
			return
		}
		history, _ := json.Marshal(st.history)
		messages, bytes = len(st.history), len(history)
	})
	return messages, bytes
}

// compact implements commandSession with the session's compactor, the
// model built for it (not rebuilt: see agentConfig.model) and its context
// window.
func (v commandView) compact(ctx context.Context, cf *agentConfig, focus string, started func()) (*gateway.Compaction, error) {
	model, _ := v.pick.model()
	if model == nil {
		return nil, errNoModel
	}
	history, window := v.sess.fitInput(cf)
	return v.compactor.Fit(ctx, gateway.FitRequest{Model: model, Request: gateway.ModelRequest{Messages: history}, Window: window, Force: true, Focus: focus,
		Started: started})
}

// fitInput is what compaction fits: the session's history and the
// context window of its current model.
func (s *liveSession) fitInput(cf *agentConfig) (history gateway.History, window int) {
	s.update(func(st *sessionState) {
		_, window, _ = s.current(cf, st.cfg)
		history = st.history
	})
	return history, window
}

// resources implements commandSession.
func (v commandView) resources() bridge.ResourceCaller { return v.sess.caller() }

// prompts implements commandSession.
func (v commandView) prompts() []mcpclient.ServerResource[mcp.Prompt] {
	return v.sess.caller().Prompts()
}
