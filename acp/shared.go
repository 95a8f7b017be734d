package acp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/acpgate/acpgate/mcpclient"
)

// This file is the servers configured shared: true: one instance for all
// sessions, started in the background and kept in step with the
// configuration; their events reach every session.

// closeBound is how long closing a session (or shutting down) lets its
// servers go politely before the remaining ones are killed at once.
const closeBound = 3 * time.Second

// sharedServers are the servers configured shared: true, and what
// keeps them in step with the configuration. mgr is nil without a
// configuration; mgr and done are set by start, before any session
// opens, and read only after.
type sharedServers struct {
	mgr  *mcpclient.Manager
	done chan struct{} // closed when follow has returned
	// What the role uses of the agent's.
	opts     *Options
	conf     *agentConfig
	logger   *slog.Logger
	peer     *peer
	asks     *userRequests
	cmds     *commands
	sessions func() []*liveSession // the open sessions
}

// start starts the servers configured shared: true, one instance for
// every session, in parallel and in the background (the client's first
// request does not wait for them; a session waits for them within its own
// startup budget, see peer.waitServers), and keeps them in step with the
// configuration until ctx ends: on each Options.ConfigChanged, the shared
// servers whose spec changed are restarted, new ones started and removed
// ones stopped. Without a configuration there is no shared manager.
func (sh *sharedServers) start(ctx context.Context) error {
	sc, specs, err := sh.specs()
	if err != nil || sh.conf.config() == nil {
		return err
	}
	mo := sh.opts.MCP
	sc.applyLimits(&mo, specs)
	mo.Logger = sh.logger.With("session", "shared")
	mo.Prepare = sh.conf.prepare
	mo.Redact = sh.conf.redact()
	mo.OnEvent = sh.event
	// Shared servers' requests go to the session whose call they belong
	// to; they have no roots (no one session's directories).
	mo.Elicitor = serverRequests{u: sh.asks}
	if sh.conf.mayHaveModel() {
		mo.Sampler = serverRequests{u: sh.asks}
	}
	m, err := mcpclient.New(specs, &mo)
	if err != nil {
		return fmt.Errorf("shared MCP servers: %w", err)
	}
	sh.mgr, sh.done = m, make(chan struct{})
	m.Launch()
	go sh.follow(ctx)
	return nil
}

// specs returns the configuration of the agent's profile and its
// shared servers (with the configured default timeouts).
func (sh *sharedServers) specs() (sessionConfig, []mcpclient.ServerSpec, error) {
	sc, err := sh.conf.sessionConfigFor(sh.opts.Profile)
	if err != nil {
		return sc, nil, err
	}
	specs := sc.shared
	sc.applyLimits(&mcpclient.Options{}, specs)
	return sc, specs, nil
}

// follow applies each configuration change to the shared servers
// until ctx ends; then it closes done.
func (sh *sharedServers) follow(ctx context.Context) {
	defer close(sh.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-sh.opts.ConfigChanged: // nil: blocks until ctx ends
		}
		_, specs, err := sh.specs()
		if err != nil {
			sh.logger.Error("shared MCP servers not reconfigured", "err", err)
			continue
		}
		bctx, cancel := context.WithTimeout(ctx, sh.opts.StartupBudget)
		restarted, err := sh.mgr.Reconfigure(bctx, specs)
		cancel()
		switch {
		case err != nil && ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded):
			sh.logger.Error("shared MCP servers not reconfigured", "err", err)
		case len(restarted) > 0:
			sh.logger.Info("shared MCP servers restarted after a configuration change", "servers", restarted)
		}
	}
}

// event passes an event of a shared server to every session's tool
// view (each session offers the shared servers' tools), to those waiting
// for its servers, to its "still connecting" cards and its notices, to
// its commands (each session offers the shared servers' prompts), and an
// updated resource to the sessions that follow it (and have no server of
// that name of their own).
func (sh *sharedServers) event(e mcpclient.Event) {
	for _, s := range sh.sessions() {
		own := s.sharedChanged(e)
		switch e.Kind {
		case mcpclient.EventStatus:
			// The "still connecting" card of a shared server a prompt
			// waited for (peer.waitServers) closes when it settles, and
			// its change of state may call for a notice, unless the
			// session has a server of its own of that name.
			if !own {
				if e.Status.State != mcpclient.StateConnecting {
					sh.peer.settledCard(s, e.Status)
				}
				sh.peer.notifyServers(s, statusOf(e.Status))
			}
			sh.cmds.advertiseCommands(s, false)
		case mcpclient.EventResourcesChanged:
			sh.cmds.advertiseCommands(s, false)
		case mcpclient.EventResourceUpdated:
			if s.caller().manager(e.Server) == sh.mgr {
				s.resourceUpdated(resourceKey{e.Server, e.URI})
			}
		}
	}
	if observe := sh.opts.MCP.OnEvent; observe != nil {
		observe(e)
	}
}
