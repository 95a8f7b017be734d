package acp

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/acpgate/acpgate/bridge"
	"github.com/acpgate/acpgate/mcpclient"
)

// This file gives a session its servers' resources: /resources, resources
// the user mentions (@-mentions: resource_link or embedded resource blocks
// of a prompt), their subscriptions and the notes that tell the model one
// changed. The model's own resource tools are the bridge's (see
// bridge.ResourceTools): sessionCaller implements bridge.ResourceCaller.

// manager returns the Manager that runs server: the session's own, else
// the agent's shared one (the session's win on a name clash), else the
// session's (whose errors then name the unknown server).
func (c sessionCaller) manager(server string) *mcpclient.Manager {
	if _, mine := c.own.Status(server); !mine && c.shared != nil {
		if _, shared := c.shared.Status(server); shared {
			return c.shared
		}
	}
	return c.own
}

// both returns the items of the session's servers, then those of shared
// servers whose name no server of the session has.
func both[T any](c sessionCaller, pick func(*mcpclient.Manager) []mcpclient.ServerResource[T]) []mcpclient.ServerResource[T] {
	return merged(c, pick, func(r mcpclient.ServerResource[T]) string { return r.Server })
}

// merged returns pick's items of the session's servers, then those of the
// shared servers (server names an item's server) whose name no server of
// the session has: the one rule of own and shared servers.
func merged[T any](c sessionCaller, pick func(*mcpclient.Manager) []T, server func(T) string) []T {
	out := pick(c.own)
	if c.shared == nil {
		return out
	}
	for _, it := range pick(c.shared) {
		if _, mine := c.own.Status(server(it)); !mine {
			out = append(out, it)
		}
	}
	return out
}

// Resources implements bridge.ResourceCaller.
func (c sessionCaller) Resources() []mcpclient.ServerResource[mcp.Resource] {
	return both(c, (*mcpclient.Manager).Resources)
}

// ResourceTemplates implements bridge.ResourceCaller.
func (c sessionCaller) ResourceTemplates() []mcpclient.ServerResource[mcp.ResourceTemplate] {
	return both(c, (*mcpclient.Manager).ResourceTemplates)
}

// Prompts returns the prompts of the session's servers (shared ones
// included).
func (c sessionCaller) Prompts() []mcpclient.ServerResource[mcp.Prompt] {
	return both(c, (*mcpclient.Manager).Prompts)
}

// ResourceServer implements bridge.ResourceCaller: the session's own
// servers first.
func (c sessionCaller) ResourceServer(uri string) (string, bool) {
	if s, ok := c.own.ResourceServer(uri); ok {
		return s, true
	}
	if c.shared != nil {
		if s, ok := c.shared.ResourceServer(uri); ok && c.manager(s) == c.shared {
			return s, true
		}
	}
	return "", false
}

// ReadResource implements bridge.ResourceCaller.
func (c sessionCaller) ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error) {
	return c.manager(server).ReadResource(ctx, server, uri)
}

// caller is the session's servers, own and shared.
func (s *liveSession) caller() sessionCaller {
	return sessionCaller{own: s.mgr, shared: s.shared}
}

// resourceKey names one resource of one server.
type resourceKey struct{ server, uri string }

// resourceState is what a session knows of the resources it mentioned,
// and of the commands it advertised. The zero value is ready to use; safe
// for concurrent use.
type resourceState struct {
	mu         sync.Mutex
	subscribed map[resourceKey]*mcpclient.Manager // subscriptions made, and the Manager of each
	changed    map[resourceKey]bool               // updated since the model was last told
	commands   string                             // the prompt commands last advertised
	// advertising serialises advertiseCommands, so that a list computed
	// earlier is never sent after one computed later.
	advertising sync.Mutex
}

// subscribe records a subscription on m; it reports false if it was made.
func (r *resourceState) subscribe(k resourceKey, m *mcpclient.Manager) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.subscribed[k] != nil {
		return false
	}
	if r.subscribed == nil {
		r.subscribed = map[resourceKey]*mcpclient.Manager{}
	}
	r.subscribed[k] = m
	return true
}

// forget drops a subscription that could not be made.
func (r *resourceState) forget(k resourceKey) {
	r.mu.Lock()
	delete(r.subscribed, k)
	r.mu.Unlock()
}

// updated marks k changed, if the session subscribed to it.
func (r *resourceState) updated(k resourceKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.subscribed[k] == nil {
		return
	}
	if r.changed == nil {
		r.changed = map[resourceKey]bool{}
	}
	r.changed[k] = true
}

// advertised records key as the commands last advertised, and reports
// whether they were already.
func (r *resourceState) advertised(key string) (same bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	same = r.commands == key
	r.commands = key
	return same
}

// takeChanged returns the resources changed since the last call, in
// order, and forgets them.
func (r *resourceState) takeChanged() []resourceKey {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := sortedKeys(r.changed)
	r.changed = nil
	return out
}

// subscriptions returns the subscriptions made, with the Manager of
// each, and forgets them.
func (r *resourceState) subscriptions() map[resourceKey]*mcpclient.Manager {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.subscribed
	r.subscribed = nil
	return out
}

// sortedKeys returns the keys of m by server, then URI.
func sortedKeys[V any](m map[resourceKey]V) []resourceKey {
	return slices.SortedFunc(maps.Keys(m), func(a, b resourceKey) int {
		return cmp.Or(strings.Compare(a.server, b.server), strings.Compare(a.uri, b.uri))
	})
}

// resourceEvent follows a session's servers: an updated resource it
// subscribed to is marked for the model's next turn; a change of the
// servers' prompts (or of a server's state) re-advertises the commands.
// It runs on the Manager's event goroutine.
func (a *Agent) resourceEvent(s *liveSession, e mcpclient.Event) {
	switch e.Kind {
	case mcpclient.EventResourceUpdated:
		s.resourceUpdated(resourceKey{e.Server, e.URI})
	case mcpclient.EventResourcesChanged, mcpclient.EventStatus:
		a.cmds.advertiseCommands(s, false)
	}
}

// resourcesReport is /resources [server]: the resources and templates of
// the session's servers (of server alone when given).
func (co *commands) resourcesReport(s commandSession, server string) string {
	if server != "" {
		if _, _, ok := s.serverStatus(server); !ok {
			return fmt.Sprintf("This session has no MCP server %q. /mcp lists its servers.", server)
		}
	}
	list := bridge.ResourceList(s.resources(), server)
	switch {
	case list != "":
		return "Resources (mention one with @ to give it to the model):\n" + list
	case server != "":
		return fmt.Sprintf("MCP server %s offers no resources.", server)
	}
	return "The MCP servers of this session offer no resources."
}

// subscribeOn subscribes (on) to k on m, or unsubscribes: directly on the
// session's own Manager, counted across sessions on the shared one.
func (s *liveSession) subscribeOn(ctx context.Context, m *mcpclient.Manager, k resourceKey, on bool) error {
	switch {
	case m != s.shared:
		if on {
			return m.Subscribe(ctx, k.server, k.uri)
		}
		return m.Unsubscribe(ctx, k.server, k.uri)
	case on:
		return s.subs.subscribe(ctx, m, k)
	default:
		return s.subs.unsubscribe(ctx, m, k)
	}
}

// unsubscribeBound bounds the unsubscriptions at a session's end, so that
// a server that does not answer leaves the rest of the close budget to
// stopping the servers gracefully.
const unsubscribeBound = 500 * time.Millisecond

// unsubscribeAll ends the session's subscriptions, concurrently, bounded
// by ctx and unsubscribeBound (at session end, before its servers stop).
func (s *liveSession) unsubscribeAll(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, unsubscribeBound)
	defer cancel()
	var wg sync.WaitGroup
	for k, m := range s.res.subscriptions() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.subscribeOn(ctx, m, k, false); err != nil {
				s.logger.Debug("resources/unsubscribe failed", "session", s.id, "server", k.server, "uri", k.uri, "err", err)
			}
		}()
	}
	wg.Wait()
}
