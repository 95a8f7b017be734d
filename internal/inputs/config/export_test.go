package config

import (
	"context"
	"time"
)

// WatchPolled is Watch with a hook called after the baseline and after
// every poll.
func WatchPolled(ctx context.Context, path string, interval time.Duration, onChange func(*Config, []Warning), onError func(error), polled func()) {
	watch(ctx, path, interval, onChange, onError, polled)
}
