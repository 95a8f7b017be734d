package gateway

import (
	"context"
	"sync"
	"time"
)

// ModelInfo is a model an endpoint offers.
type ModelInfo struct {
	// ID is the model name requests use.
	ID string
	// Name is a human-readable name ("": the ID).
	Name string
	// Description says what the model is for ("" when unknown).
	Description string
	// ContextWindow is the model's context window in tokens, as the
	// endpoint reports it (0: it does not).
	ContextWindow int
}

// ModelLister is implemented by providers whose endpoint lists the models
// it serves (OpenAI-compatible GET /models). ListModels honours ctx; its
// errors wrap ErrProvider.
type ModelLister interface {
	ListModels(ctx context.Context) ([]ModelInfo, error)
}

// DefaultCatalogTimeout bounds one listing of a Catalog.
const DefaultCatalogTimeout = 2 * time.Second

// Catalog caches endpoints' model lists for the life of the process, by a
// key the caller chooses (an endpoint's base URL). A list is fetched once,
// in the background, each fetch bounded by the catalog's timeout; a fetch
// that fails or times out is forgotten and tried again at the next asking,
// in the background, without anyone waiting for it. Its methods are safe
// for concurrent use.
type Catalog struct {
	timeout time.Duration

	mu      sync.Mutex
	entries map[string]*catalogEntry
}

// catalogEntry is one key's list: done is closed when the fetch under way
// ends; models is the last list fetched (nil: none yet); tried is set once
// a fetch has ended, whatever its outcome.
type catalogEntry struct {
	fetching bool
	done     chan struct{}
	models   []ModelInfo
	tried    bool
}

// NewCatalog returns an empty catalog whose fetches take at most timeout
// (0: DefaultCatalogTimeout).
func NewCatalog(timeout time.Duration) *Catalog {
	if timeout <= 0 {
		timeout = DefaultCatalogTimeout
	}
	return &Catalog{timeout: timeout, entries: map[string]*catalogEntry{}}
}

// Prefetch starts fetching key's list with l in the background, unless it
// is known or under way. The fetch ends with ctx, or the catalog's
// timeout. The channel is closed once no fetch of key is under way.
func (c *Catalog) Prefetch(ctx context.Context, key string, l ModelLister) <-chan struct{} {
	e, _ := c.start(ctx, key, l)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.fetching {
		return e.done
	}
	done := make(chan struct{})
	close(done)
	return done
}

// Models returns key's list as far as it is known: it starts a fetch with
// l when none is known or under way, and waits, until ctx ends, only for
// the first fetch of key (once one fetch has failed, later askings get nil
// at once while another is tried in the background). nil means unknown.
func (c *Catalog) Models(ctx context.Context, key string, l ModelLister) []ModelInfo {
	e, done := c.start(context.WithoutCancel(ctx), key, l)
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return e.models
}

// start starts a fetch of key unless its list is known or a fetch is under
// way. done is what a caller may wait on: the first fetch's end; nil once
// a fetch has ended.
func (c *Catalog) start(ctx context.Context, key string, l ModelLister) (e *catalogEntry, done <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		e = &catalogEntry{}
		c.entries[key] = e
	}
	if e.models == nil && !e.fetching && l != nil {
		e.fetching, e.done = true, make(chan struct{})
		go c.fetch(ctx, e, l)
	}
	if e.tried || !e.fetching {
		return e, nil
	}
	return e, e.done
}

// fetch lists l's models into e.
func (c *Catalog) fetch(ctx context.Context, e *catalogEntry, l ModelLister) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	models, err := l.ListModels(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil && models != nil {
		e.models = models
	}
	e.fetching, e.tried = false, true
	close(e.done)
}
