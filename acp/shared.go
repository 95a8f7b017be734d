package acp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/acpgate/acpgate/mcpclient"
)

// This file is the servers configured shared: true: one instance for all
// sessions, started in the background and kept in step with the
// configuration; their events reach every session.

// closeBound is how long closing a session (or shutting down) lets its
// servers go politely before the remaining ones are killed at once.
const closeBound = 3 * time.Second

// startShared starts the servers configured shared: true, one instance for
// every session, in parallel and in the background (the client's first
// request does not wait for them; a session waits for them within its own
// startup budget, see peer.waitServers), and keeps them in step with the
// configuration until ctx ends: on each Options.ConfigChanged, the shared
// servers whose spec changed are restarted, new ones started and removed
// ones stopped. Without a configuration there is no shared manager.
func (a *Agent) startShared(ctx context.Context) error {
	sc, specs, err := a.sharedSpecs()
	if err != nil || a.setup.config() == nil {
		return err
	}
	mo := a.opts.MCP
	sc.applyLimits(&mo, specs)
	mo.Logger = a.logger.With("session", "shared")
	mo.Prepare = a.setup.prepare
	mo.Redact = a.setup.redact()
	mo.OnEvent = a.sharedEvent
	// Shared servers' requests go to the session whose call they belong
	// to; they have no roots (no one session's directories).
	mo.Elicitor = serverRequests{u: a.asks}
	if a.setup.mayHaveModel() {
		mo.Sampler = serverRequests{u: a.asks}
	}
	m, err := mcpclient.New(specs, &mo)
	if err != nil {
		return fmt.Errorf("shared MCP servers: %w", err)
	}
	a.shared, a.sharedDone = m, make(chan struct{})
	m.Launch()
	go a.followShared(ctx)
	return nil
}

// sharedSpecs returns the configuration of the agent's profile and its
// shared servers (with the configured default timeouts).
func (a *Agent) sharedSpecs() (sessionConfig, []mcpclient.ServerSpec, error) {
	sc, err := a.setup.sessionConfigFor(a.opts.Profile)
	if err != nil {
		return sc, nil, err
	}
	specs := sc.shared
	sc.applyLimits(&mcpclient.Options{}, specs)
	return sc, specs, nil
}

// followShared applies each configuration change to the shared servers
// until ctx ends; then it closes sharedDone.
func (a *Agent) followShared(ctx context.Context) {
	defer close(a.sharedDone)
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.opts.ConfigChanged: // nil: blocks until ctx ends
		}
		_, specs, err := a.sharedSpecs()
		if err != nil {
			a.logger.Error("shared MCP servers not reconfigured", "err", err)
			continue
		}
		bctx, cancel := context.WithTimeout(ctx, a.opts.StartupBudget)
		restarted, err := a.shared.Reconfigure(bctx, specs)
		cancel()
		switch {
		case err != nil && ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded):
			a.logger.Error("shared MCP servers not reconfigured", "err", err)
		case len(restarted) > 0:
			a.logger.Info("shared MCP servers restarted after a configuration change", "servers", restarted)
		}
	}
}

// sharedEvent passes an event of a shared server to every session's tool
// view (each session offers the shared servers' tools), to those waiting
// for its servers, to its "still connecting" cards, to its commands (each
// session offers the shared servers' prompts), and an updated
// resource to the sessions that follow it (and have no server of that
// name of their own).
func (a *Agent) sharedEvent(e mcpclient.Event) {
	for _, s := range a.liveSessions() {
		s.sync.OnEvent(e)
		s.news.changed()
		switch e.Kind {
		case mcpclient.EventStatus:
			// The "still connecting" card of a shared server a prompt
			// waited for (peer.waitServers) closes when it settles,
			// unless the session has a server of its own of that name.
			if _, own := s.mgr.Status(e.Server); !own && e.Status.State != mcpclient.StateConnecting {
				a.peer.settledCard(s, e.Status)
			}
			a.cmds.advertiseCommands(s, false)
		case mcpclient.EventResourcesChanged:
			a.cmds.advertiseCommands(s, false)
		case mcpclient.EventResourceUpdated:
			if s.caller().manager(e.Server) == a.shared {
				s.res.updated(resourceKey{e.Server, e.URI})
			}
		}
	}
	if observe := a.opts.MCP.OnEvent; observe != nil {
		observe(e)
	}
}
