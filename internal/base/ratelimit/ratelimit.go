// Package ratelimit is acpgate's one rate limit: at most n events in any
// window of time (a sliding window over the last n events).
package ratelimit

import (
	"sync"
	"time"
)

// Window allows at most n events in any window. Safe for concurrent use.
type Window struct {
	mu     sync.Mutex
	window time.Duration
	times  []time.Time // ring of the last n allowed events
	next   int
}

// New returns a Window allowing n events (n > 0) per window.
func New(n int, window time.Duration) *Window {
	return &Window{window: window, times: make([]time.Time, n)}
}

// Allow records an event at now and reports whether it is within the
// limit; a refused event is not recorded.
func (r *Window) Allow(now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	oldest := r.times[r.next]
	if !oldest.IsZero() && now.Sub(oldest) < r.window {
		return false
	}
	r.times[r.next] = now
	r.next = (r.next + 1) % len(r.times)
	return true
}
