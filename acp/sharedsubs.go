package acp

import (
	"context"
	"sync"

	"github.com/acpgate/acpgate/mcpclient"
)

// sharedSubs holds the resource subscriptions on the agent's shared
// servers. A shared server runs once for every session, so a resource two
// sessions mention is subscribed to once, and unsubscribed from when the
// last of them ends (or gives it up); each session's resourceState says
// whether it follows the resource, and the update reaches only those
// (see sharedEvent). The zero value is ready to use; safe for concurrent
// use.
type sharedSubs struct {
	mu sync.Mutex
	m  map[resourceKey]*sharedSub
}

// sharedSub is one resource's subscription: mu serialises its subscribe
// and unsubscribe requests, so a session that mentions the resource while
// another's request is under way sees that request's outcome.
type sharedSub struct {
	mu       sync.Mutex
	sessions int  // sessions following the resource
	on       bool // the server was subscribed (and not unsubscribed since)
}

// entry returns k's subscription, made on first use. Entries are never
// dropped (one per resource ever mentioned), so that a request in flight
// always counts on the entry everyone else sees.
func (c *sharedSubs) entry(k resourceKey) *sharedSub {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[resourceKey]*sharedSub{}
	}
	e := c.m[k]
	if e == nil {
		e = &sharedSub{}
		c.m[k] = e
	}
	return e
}

// subscribe counts one more session following k, subscribing the server m
// if none did yet. On error nothing is counted.
func (c *sharedSubs) subscribe(ctx context.Context, m *mcpclient.Manager, k resourceKey) error {
	e := c.entry(k)
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.on {
		if err := m.Subscribe(ctx, k.server, k.uri); err != nil {
			return err
		}
		e.on = true
	}
	e.sessions++
	return nil
}

// unsubscribe counts one session less following k, and unsubscribes the
// server m when it was the last.
func (c *sharedSubs) unsubscribe(ctx context.Context, m *mcpclient.Manager, k resourceKey) error {
	e := c.entry(k)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sessions > 0 {
		e.sessions--
	}
	if e.sessions > 0 || !e.on {
		return nil
	}
	e.on = false
	return m.Unsubscribe(ctx, k.server, k.uri)
}
