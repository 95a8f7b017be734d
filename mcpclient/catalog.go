package mcpclient

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
)

const (
	refreshTools refreshKind = 1 << iota
	refreshResources
	refreshAll = refreshTools | refreshResources
)

// refreshKind is a bit set of what to list again.
type refreshKind uint32

// lister is the catalog: it lists tools, resources, prompts and skills
// (skills.go), again on
// list_changed (kick) or when a 2026-07-28 list's TTL ends, holds what was
// listed and how many of its tools the tool limit lets through, and checks
// a tool name against it. It owns cat and kept, under its own mu; the
// fleet's lock (fleetMu) is taken first wherever the tools change or are
// checked against kept, so that no reader sees tools without their
// allocation (see fleet.changedLocked). File: catalog.go.
type lister struct {
	env        roleEnv
	fleetMu    sync.Locker                             // the Manager's mu
	changed    func(kind EventKind, toolsChanged bool) // the fleet's changedLocked for this server; fleetMu held
	raw        rawRequester                            // the subscriber: skills/list, which mcp-go has no call for
	refreshCh  chan struct{}                           // capacity 1: something asked for a refresh
	refreshReq atomic.Uint32                           // the refreshKinds asked for

	mu   sync.Mutex
	cat  catalog
	kept int // how many of cat.tools the tool limit lets through
}

// newLister returns the lister of a server: changed is called, with fleetMu
// held, after each change of the catalog that is not a change of state.
func newLister(env roleEnv, fleetMu sync.Locker, changed func(EventKind, bool), raw rawRequester) *lister {
	return &lister{env: env, fleetMu: fleetMu, changed: changed, raw: raw, refreshCh: make(chan struct{}, 1)}
}

// notify takes the list_changed notifications.
func (ls *lister) notify(method string, _ map[string]any) bool {
	switch method {
	case mcp.MethodNotificationToolsListChanged:
		ls.kick(refreshTools)
	case mcp.MethodNotificationResourcesListChanged, mcp.MethodNotificationPromptsListChanged:
		ls.kick(refreshResources)
	default:
		return false
	}
	return true
}

// catalog is what a server offers.
type catalog struct {
	tools     []mcp.Tool
	resources []mcp.Resource
	templates []mcp.ResourceTemplate
	prompts   []mcp.Prompt
	skills    []SkillEntry // the skills extension's entries (skills.go)
}

// discover lists what the server's capabilities say it has, following
// pagination cursors; the lists are fetched concurrently. Tools are
// required to work; the rest is best effort.
func (ls *lister) discover(ctx context.Context, c *conn, what refreshKind) (catalog, error) {
	var (
		cat     catalog
		toolErr error
		wg      sync.WaitGroup
	)
	caps := c.client.GetServerCapabilities()
	fetch := func(name string, fn func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(); err != nil {
				ls.env.logger.Warn(name+" failed", "err", err)
			}
		}()
	}
	if what&refreshTools != 0 && caps.Tools != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.client.ListTools(ctx, mcp.ListToolsRequest{})
			if err != nil {
				toolErr = fmt.Errorf("tools/list: %w", err)
				return
			}
			c.schemas.apply(res.Tools)
			ls.expireTools(c)
			cat.tools = res.Tools
		}()
	}
	if what&refreshResources != 0 && caps.Resources != nil {
		fetch("resources/list", func() error {
			res, err := c.client.ListResources(ctx, mcp.ListResourcesRequest{})
			if err == nil {
				cat.resources = res.Resources
			}
			return err
		})
		fetch("resources/templates/list", func() error {
			res, err := c.client.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
			if err == nil {
				cat.templates = res.ResourceTemplates
			}
			return err
		})
	}
	if what&refreshResources != 0 && offersSkills(caps) {
		fetch("skills/list", func() error {
			skills, err := ls.listSkills(ctx, c)
			if err == nil {
				cat.skills = skills
			}
			return err
		})
	}
	if what&refreshResources != 0 && caps.Prompts != nil {
		fetch("prompts/list", func() error {
			res, err := c.client.ListPrompts(ctx, mcp.ListPromptsRequest{})
			if err == nil {
				cat.prompts = res.Prompts
			}
			return err
		})
	}
	wg.Wait()
	return cat, toolErr
}

// update replaces the parts of the catalog named by what and emits events.
// A tool list equal to the one held (see sameTools) is no change: neither
// logged nor announced.
func (ls *lister) update(what refreshKind, cat catalog) {
	ls.fleetMu.Lock() // see changedLocked
	defer ls.fleetMu.Unlock()
	ls.mu.Lock()
	if what&refreshTools != 0 && sameTools(ls.cat.tools, cat.tools) {
		what &^= refreshTools
	}
	if what&refreshTools != 0 {
		ls.cat.tools = cat.tools
	}
	if what&refreshResources != 0 {
		ls.cat.resources, ls.cat.templates, ls.cat.prompts, ls.cat.skills = cat.resources, cat.templates, cat.prompts, cat.skills
	}
	ls.mu.Unlock()
	if what&refreshTools != 0 {
		ls.env.logger.Info("tool list changed", "tools", len(cat.tools))
		ls.changed(EventToolsChanged, true)
	}
	if what&refreshResources != 0 {
		ls.changed(EventResourcesChanged, false)
	}
}

// reset is the catalog's part of a change of the server's state, with the
// fleet's lock held: it takes cat when one was listed, and empties the
// catalog when the server is not ready. It returns how many tools were
// held before and after.
func (ls *lister) reset(cat *catalog, ready bool) (before, after int) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	before = len(ls.cat.tools)
	if cat != nil {
		ls.cat = *cat
	} else if !ready {
		ls.cat = catalog{}
	}
	return before, len(ls.cat.tools)
}

// keep lets through the first left tools (at most), with the fleet's lock
// held, and returns how many tools there are and how many it kept.
func (ls *lister) keep(left int) (n, kept int) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	n = len(ls.cat.tools)
	ls.kept = min(n, left)
	return n, ls.kept
}

// read calls f with the catalog and the number of its tools kept, under
// the lister's lock; f must not keep cat's slices' backing for writing nor
// call into the lister.
func (ls *lister) read(f func(cat *catalog, kept int)) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	f(&ls.cat, ls.kept)
}

// anyTool reports whether a listed tool named name satisfies ok (called
// under the lister's lock).
func (ls *lister) anyTool(name string, ok func(mcp.Tool) bool) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for _, t := range ls.cat.tools {
		if t.Name == name && ok(t) {
			return true
		}
	}
	return false
}

// sameTools reports whether two tool lists are the same to everyone who
// uses them: the same tools in the same order (the order decides which are
// kept under the tool limit), each equal in every field the server sent
// (name, title, description, raw and decoded schemas, annotations, _meta,
// icons, execution).
func sameTools(a, b []mcp.Tool) bool {
	return slices.EqualFunc(a, b, func(x, y mcp.Tool) bool { return reflect.DeepEqual(x, y) })
}

// kick asks run to list what again, without blocking (it is called on the
// transport's reader goroutine).
func (ls *lister) kick(what refreshKind) {
	for {
		old := ls.refreshReq.Load()
		if ls.refreshReq.CompareAndSwap(old, old|uint32(what)) {
			break
		}
	}
	select {
	case ls.refreshCh <- struct{}{}:
	default:
	}
}

// refreshes is a channel that receives when something asked for a
// refresh (see kick): the server's serve loop then calls relist.
func (ls *lister) refreshes() <-chan struct{} { return ls.refreshCh }

// relist lists again, on c, what was asked for since it last ran, within
// the call timeout, and updates the catalog; a listing that fails is
// logged and the catalog kept.
func (ls *lister) relist(ctx context.Context, c *conn) {
	what := refreshKind(ls.refreshReq.Swap(0))
	rctx, cancel := context.WithTimeout(ctx, ls.env.spec.CallTimeout)
	cat, err := ls.discover(rctx, c, what)
	cancel()
	if err != nil {
		ls.env.logger.Warn("re-listing after list_changed failed", "err", err)
		return
	}
	ls.update(what, cat)
}

// checkTool reports whether tool is one the server offers within the limit.
func (ls *lister) checkTool(tool string) error {
	ls.fleetMu.Lock() // kept is allocated under it (see changedLocked)
	defer ls.fleetMu.Unlock()
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for i, t := range ls.cat.tools {
		if t.Name == tool {
			if i >= ls.kept {
				return fmt.Errorf("%w: %q of server %q is not offered: over the limit of %d tools", ErrUnknownTool, tool, ls.env.spec.Name, ls.env.opts.MaxTools)
			}
			return nil
		}
	}
	return fmt.Errorf("%w: server %q has no tool %q", ErrUnknownTool, ls.env.spec.Name, tool)
}

// expireTools has c's tools listed again when the ttlMs of the listing just
// made runs out (never, if it gave none), unless c is gone by then. It
// replaces the re-listing an earlier listing of c asked for.
func (ls *lister) expireTools(c *conn) {
	c.schemas.ttl.arm(func() {
		select {
		case <-c.link.done():
		default:
			ls.kick(refreshTools)
		}
	})
}
