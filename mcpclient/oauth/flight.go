package oauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// flight is one token request made on the Client's behalf: a refresh, or
// a new token by a machine grant. One runs at a time; the requests that
// need its token wait for it, each until its own context ends. It runs on
// a context of its own, bounded by Timeouts.Token and ended by Close, so
// that no waiter's end cuts it short: a token the authorization server
// does send (and the rotated refresh token with it) is kept.
type flight struct {
	stepUp bool          // a step-up (machine grant for more scope)
	done   chan struct{} // closed when tok and err are set
	tok    string
	err    error

	mu sync.Mutex
	at string // the URL the flight's request under way goes to
}

// flightKey is the context key of the flight a request is made for.
type flightKey struct{}

// noteURL records u as the URL the flight of ctx (if any) waits on now.
func noteURL(ctx context.Context, u string) {
	if f, _ := ctx.Value(flightKey{}).(*flight); f != nil {
		f.mu.Lock()
		f.at = u
		f.mu.Unlock()
	}
}

// endpoint is the URL the flight waits on now ("" before its first
// request).
func (f *flight) endpoint() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.at
}

// fly returns the token of the flight under way, or of a new one that runs
// do, waiting at most until ctx ends; it then returns an *UnansweredError
// naming the endpoint the flight waits on, and the flight goes on. A
// step-up does not take a refresh's token: it waits for the refresh to
// end, then flies its own.
func (c *Client) fly(ctx context.Context, stepUp bool, do func(context.Context) (string, error)) (string, error) {
	start := time.Now()
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return "", fmt.Errorf("%s: %w", c.name, ErrClosed)
		}
		f := c.flight
		if f == nil {
			f = c.launch(stepUp, do)
		}
		c.mu.Unlock()
		select {
		case <-f.done:
			if stepUp && !f.stepUp {
				continue
			}
			return f.tok, f.err
		case <-ctx.Done():
			return "", &UnansweredError{Server: c.name, Endpoint: f.endpoint(), Waited: time.Since(start), Err: context.Cause(ctx)}
		}
	}
}

// launch starts a flight that runs do. Called with c.mu held, while no
// flight runs and the Client is open.
func (c *Client) launch(stepUp bool, do func(context.Context) (string, error)) *flight {
	f := &flight{stepUp: stepUp, done: make(chan struct{})}
	c.flight = f
	c.flights.Add(1)
	go func() {
		defer c.flights.Done()
		ctx, cancel := context.WithTimeoutCause(c.life, c.opts.Timeouts.Token, errFlightTimeout)
		defer cancel()
		tok, err := do(context.WithValue(ctx, flightKey{}, f))
		c.mu.Lock()
		f.tok, f.err = tok, err
		c.flight = nil
		c.mu.Unlock()
		close(f.done)
	}()
	return f
}

// errFlightTimeout is the cause of a flight's context at Timeouts.Token.
var errFlightTimeout = errors.New("token flight timed out")

// Close ends the token flight under way, if any, and waits for it: the
// requests waiting for it fail, and from now on a request that needs a
// new token fails with an error wrapping ErrClosed (one with a good token
// still goes through). It closes the idle connections of the Client's own
// HTTP client. Sign-ins are not ended (their contexts do that). Close is
// idempotent and always returns nil.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.stop()
	c.flights.Wait()
	if c.ownHTTP {
		c.opts.HTTP.CloseIdleConnections()
	}
	return nil
}

// timedOut reports whether err, from an HTTP request, is a timeout (of
// the HTTP client or the request's context), as opposed to a refusal.
func timedOut(ctx context.Context, err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(context.Cause(ctx), errFlightTimeout) ||
		(errors.As(err, &ne) && ne.Timeout())
}
