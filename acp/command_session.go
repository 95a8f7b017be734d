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
	"github.com/acpgate/acpgate/gateway/sysprompt"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/acpgate/acpgate/session"
)

// This file is what a live session does for the slash commands: its side
// of commandSession (commands.go). Each method takes the locks it needs:
// s.mu for the configuration and the history, and the parts' own (ed,
// pick, the Managers, the tool view) after it, never before.

var _ commandSession = (*liveSession)(nil)

// ownStatuses implements commandSession.
func (s *liveSession) ownStatuses() []mcpclient.Status { return s.mgr.Statuses() }

// serverStatus implements commandSession: the session's own servers win
// over shared ones of the same name.
func (s *liveSession) serverStatus(name string) (st mcpclient.Status, shared, ok bool) {
	if st, ok := s.mgr.Status(name); ok {
		return st, false, true
	}
	if s.shared != nil {
		if st, ok := s.shared.Status(name); ok {
			return st, true, true
		}
	}
	return mcpclient.Status{}, false, false
}

// waitServers implements commandSession (peer.waitServers, peer.waitFor).
func (s *liveSession) waitServers(ctx context.Context, pe *peer, found func() bool) {
	if found == nil {
		pe.waitServers(ctx, s)
		return
	}
	pe.waitFor(ctx, s, found)
}

// login implements commandSession.
func (s *liveSession) login(ctx context.Context, server string) error {
	return s.mgr.Login(ctx, server)
}

// logout implements commandSession.
func (s *liveSession) logout(ctx context.Context, server string) error {
	return s.mgr.Logout(ctx, server)
}

// restartServer implements commandSession.
func (s *liveSession) restartServer(ctx context.Context, cf *agentConfig, name string) error {
	wctx, cancel := context.WithTimeout(ctx, s.startupBudget(cf))
	defer cancel()
	err := s.mgr.Restart(wctx, name)
	if err != nil && !errors.Is(err, mcpclient.ErrUnknownServer) && wctx.Err() != nil {
		return nil // cut short: the server goes on connecting
	}
	return err
}

// edits implements commandSession.
func (s *liveSession) edits() serverEdits {
	edits, _ := s.ed.current()
	return edits
}

// applyEdits implements commandSession. A failure to store the edits is
// logged: the servers are changed all the same.
func (s *liveSession) applyEdits(ctx context.Context, cf *agentConfig, edits serverEdits) error {
	client, err := s.ed.apply(edits)
	if err != nil {
		return err
	}
	s.mu.Lock()
	specs := cf.merge(edits.configured(s.cfg.servers), client)
	s.cfg.applyLimits(&mcpclient.Options{}, specs)
	s.mu.Unlock()
	if err := s.store.UpdateMeta(func(m *session.Meta) {
		delete(m.Extra, extraServerEdits)
		if len(edits.Added) > 0 || len(edits.Removed) > 0 {
			m.Extra[extraServerEdits] = edits
		}
	}); err != nil {
		cf.logger.Warn("saving the MCP server changes", "session", s.id, "err", err)
	}
	wctx, cancel := context.WithTimeout(ctx, s.startupBudget(cf))
	defer cancel()
	if _, err := s.mgr.Reconfigure(wctx, specs); err != nil && wctx.Err() == nil {
		return err
	}
	return nil
}

// tellModel implements commandSession.
func (s *liveSession) tellModel(note string) { s.ed.tell(note) }

// startupBudget is how long what needs the session's servers waits for
// them to connect (agentConfig.budgetFor of its configuration).
func (s *liveSession) startupBudget(cf *agentConfig) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cf.budgetFor(s.cfg)
}

// tools implements commandSession.
func (s *liveSession) tools(filter string) []gateway.Tool {
	return slices.DeleteFunc(s.sync.Current().Filter(filter), func(t gateway.Tool) bool { return !s.allowed(t) })
}

// offersTool implements commandSession.
func (s *liveSession) offersTool(name string) bool {
	_, ok := s.sync.Current().Lookup(name)
	return ok
}

// toolServer implements commandSession (bridge.Sync.Known).
func (s *liveSession) toolServer(name string) (string, bool) {
	t, ok := s.sync.Known(name)
	return t.Server, ok
}

// toolAccess implements commandSession.
func (s *liveSession) toolAccess() gateway.ToolAccess { return s.access }

// reload implements commandSession: the configuration is read and the
// servers reconfigured without s.mu; the session takes the new
// configuration (and forgets its system prompt) once they are.
func (s *liveSession) reload(ctx context.Context, cf *agentConfig) ([]string, error) {
	s.mu.Lock()
	profile := s.cfg.profile
	s.mu.Unlock()
	sc, err := cf.sessionConfigFor(profile)
	if err != nil {
		return nil, err
	}
	edits, client := s.ed.current()
	specs := cf.merge(edits.configured(sc.servers), client)
	sc.applyLimits(&mcpclient.Options{}, specs) // timeouts; other limits stay
	restarted, err := s.mgr.Reconfigure(ctx, specs)
	if err != nil {
		return nil, err
	}
	model, gen := cf.provider(ctx, sc, s.pick.choice())
	s.mu.Lock()
	s.cfg = sc
	s.resetPrompt()
	s.mu.Unlock()
	s.pick.setProvider(model, gen)
	s.sync.SetOptions(sc.bridgeOptions(cf.bridgeBase(s.id)))
	return restarted, nil
}

// systemPrompt implements commandSession (agentConfig.systemPrompt,
// agentConfig.instructionFiles).
func (s *liveSession) systemPrompt(ctx context.Context, cf *agentConfig) (sysprompt.Prompt, []sysprompt.Skipped) {
	p := cf.systemPrompt(ctx, s)
	_, skipped := cf.instructionFiles(ctx, s)
	return p, skipped
}

// historySize implements commandSession.
func (s *liveSession) historySize() (messages, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.history) == 0 {
		return 0, 0
	}
	history, _ := json.Marshal(s.history)
	return len(s.history), len(history)
}

// compact implements commandSession with the session's compactor, the
// model built for it (not rebuilt: see agentConfig.model) and its context
// window.
func (s *liveSession) compact(ctx context.Context, cf *agentConfig, focus string, started func()) (*gateway.Compaction, error) {
	model, _ := s.pick.model()
	if model == nil {
		return nil, errNoModel
	}
	s.mu.Lock()
	history := s.history
	_, window, _ := s.current(cf)
	s.mu.Unlock()
	return s.compactor.Fit(ctx, gateway.FitRequest{Model: model, Request: gateway.ModelRequest{Messages: history}, Window: window, Force: true, Focus: focus,
		Started: started})
}

// resources implements commandSession.
func (s *liveSession) resources() bridge.ResourceCaller { return s.caller() }

// prompts implements commandSession.
func (s *liveSession) prompts() []mcpclient.ServerResource[mcp.Prompt] { return s.caller().Prompts() }
