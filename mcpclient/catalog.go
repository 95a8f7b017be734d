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

// lister is the catalog: it lists tools, resources and prompts, again on
// list_changed (kick) or when a 2026-07-28 list's TTL ends, and checks a
// tool name against it. File: catalog.go.
type lister struct {
	s          *server
	refreshCh  chan struct{} // capacity 1: something asked for a refresh
	refreshReq atomic.Uint32 // the refreshKinds asked for
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
				ls.s.logger.Warn(name+" failed", "err", err)
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
	ls.s.m.mu.Lock() // see changedLocked
	defer ls.s.m.mu.Unlock()
	ls.s.mu.Lock()
	if what&refreshTools != 0 && sameTools(ls.s.cat.tools, cat.tools) {
		what &^= refreshTools
	}
	if what&refreshTools != 0 {
		ls.s.cat.tools = cat.tools
	}
	if what&refreshResources != 0 {
		ls.s.cat.resources, ls.s.cat.templates, ls.s.cat.prompts = cat.resources, cat.templates, cat.prompts
	}
	ls.s.mu.Unlock()
	if what&refreshTools != 0 {
		ls.s.logger.Info("tool list changed", "tools", len(cat.tools))
		ls.s.m.fleet.changedLocked(ls.s, EventToolsChanged, true)
	}
	if what&refreshResources != 0 {
		ls.s.m.fleet.changedLocked(ls.s, EventResourcesChanged, false)
	}
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

// checkTool reports whether tool is one the server offers within the limit.
func (ls *lister) checkTool(tool string) error {
	ls.s.m.mu.Lock() // kept is allocated under it (see changedLocked)
	defer ls.s.m.mu.Unlock()
	ls.s.mu.Lock()
	defer ls.s.mu.Unlock()
	for i, t := range ls.s.cat.tools {
		if t.Name == tool {
			if i >= ls.s.kept {
				return fmt.Errorf("%w: %q of server %q is not offered: over the limit of %d tools", ErrUnknownTool, tool, ls.s.spec.Name, ls.s.m.opts.MaxTools)
			}
			return nil
		}
	}
	return fmt.Errorf("%w: server %q has no tool %q", ErrUnknownTool, ls.s.spec.Name, tool)
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
