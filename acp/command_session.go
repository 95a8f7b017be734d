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

// This file is what a live session does for the slash commands: commandView,
// its side of commandSession (commands.go). Each method takes the locks it needs:
// s.mu for the configuration and the history, and the parts' own (ed,
// pick, the Managers, the tool view) after it, never before.

var _ commandSession = commandView{}

// commandView is a live session as the slash commands see it: the
// commandSession methods, on their own type so that liveSession's own
// stay few. Its methods take the session's locks as they need them.
type commandView struct{ *liveSession }

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
	if found == nil {
		pe.waitServers(ctx, v.liveSession)
		return
	}
	pe.waitFor(ctx, v.liveSession, found)
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
	wctx, cancel := context.WithTimeout(ctx, v.startupBudget(cf))
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
	v.mu.Lock()
	specs := cf.merge(edits.configured(v.cfg.servers), client)
	v.cfg.applyLimits(&mcpclient.Options{}, specs)
	v.mu.Unlock()
	if err := v.store.UpdateMeta(func(m *session.Meta) {
		delete(m.Extra, extraServerEdits)
		if len(edits.Added) > 0 || len(edits.Removed) > 0 {
			m.Extra[extraServerEdits] = edits
		}
	}); err != nil {
		cf.logger.Warn("saving the MCP server changes", "session", v.id, "err", err)
	}
	wctx, cancel := context.WithTimeout(ctx, v.startupBudget(cf))
	defer cancel()
	if _, err := v.mgr.Reconfigure(wctx, specs); err != nil && wctx.Err() == nil {
		return err
	}
	return nil
}

// tellModel implements commandSession.
func (v commandView) tellModel(note string) { v.ed.tell(note) }

// startupBudget is how long what needs the session's servers waits for
// them to connect (agentConfig.budgetFor of its configuration).
func (v commandView) startupBudget(cf *agentConfig) time.Duration {
	v.mu.Lock()
	defer v.mu.Unlock()
	return cf.budgetFor(v.cfg)
}

// tools implements commandSession.
func (v commandView) tools(filter string) []gateway.Tool {
	return slices.DeleteFunc(v.sync.Current().Filter(filter), func(t gateway.Tool) bool { return !v.allowed(t) })
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
// servers reconfigured without s.mu; the session takes the new
// configuration (and forgets its system prompt) once they are.
func (v commandView) reload(ctx context.Context, cf *agentConfig) ([]string, error) {
	v.mu.Lock()
	profile := v.cfg.profile
	v.mu.Unlock()
	sc, err := cf.sessionConfigFor(profile)
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
	v.mu.Lock()
	v.cfg = sc
	v.resetPrompt()
	v.mu.Unlock()
	v.pick.setProvider(model, gen)
	v.sync.SetOptions(sc.bridgeOptions(cf.bridgeBase(v.id)))
	return restarted, nil
}

// systemPrompt implements commandSession (agentConfig.systemPrompt,
// agentConfig.instructionFiles).
func (v commandView) systemPrompt(ctx context.Context, cf *agentConfig) (sysprompt.Prompt, []sysprompt.Skipped) {
	p := cf.systemPrompt(ctx, v.liveSession)
	_, skipped := cf.instructionFiles(ctx, v.liveSession)
	return p, skipped
}

// historySize implements commandSession.
func (v commandView) historySize() (messages, bytes int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.history) == 0 {
		return 0, 0
	}
	history, _ := json.Marshal(v.history)
	return len(v.history), len(history)
}

// compact implements commandSession with the session's compactor, the
// model built for it (not rebuilt: see agentConfig.model) and its context
// window.
func (v commandView) compact(ctx context.Context, cf *agentConfig, focus string, started func()) (*gateway.Compaction, error) {
	model, _ := v.pick.model()
	if model == nil {
		return nil, errNoModel
	}
	v.mu.Lock()
	history := v.history
	_, window, _ := v.current(cf)
	v.mu.Unlock()
	return v.compactor.Fit(ctx, gateway.FitRequest{Model: model, Request: gateway.ModelRequest{Messages: history}, Window: window, Force: true, Focus: focus,
		Started: started})
}

// resources implements commandSession.
func (v commandView) resources() bridge.ResourceCaller { return v.caller() }

// prompts implements commandSession.
func (v commandView) prompts() []mcpclient.ServerResource[mcp.Prompt] { return v.caller().Prompts() }
