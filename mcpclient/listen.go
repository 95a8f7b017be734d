package mcpclient

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// On a 2026-07-28 connection notifications arrive on one long-lived
// subscriptions/listen request, whose filter names what the client wants:
// the list_changed notifications the server's capabilities offer, and the
// resources subscribed to (the revision has no resources/subscribe). A
// listener keeps that request open for the life of its connection: it is
// reopened with the new filter when the subscriptions change (Subscribe
// waits until the server acknowledged the new one), and after it ends on
// its own (a proxy's idle timeout, a redeployed server) with a backoff.

// listenBackoff bounds the wait before a listen that ended is reopened.
const (
	listenBackoffMin = 250 * time.Millisecond
	listenBackoffMax = 30 * time.Second
)

// errListenEnded: the server ended a subscriptions/listen stream.
var errListenEnded = errors.New("the server ended the stream")

// listener runs one connection's subscriptions/listen. Safe for
// concurrent use; stop is idempotent.
type listener struct {
	kickCh chan struct{} // the filter changed
	cancel context.CancelFunc
	done   chan struct{} // closed when the loop has returned

	mu     sync.Mutex
	wanted uint64        // filter changes asked for (kick)
	opened uint64        // the change the open stream's filter includes
	acked  uint64        // the change the server acknowledged
	failed uint64        // the change whose stream ended without an acknowledgement
	err    error         // why that stream ended
	ackCh  chan struct{} // closed (and replaced) at each acknowledgement or failure
}

func newListener() *listener {
	return &listener{kickCh: make(chan struct{}, 1), ackCh: make(chan struct{}), done: make(chan struct{})}
}

// kick asks for the stream to be reopened with the current filter and
// returns the change number to wait for (see waitAck).
func (l *listener) kick() uint64 {
	l.mu.Lock()
	l.wanted++
	n := l.wanted
	l.mu.Unlock()
	select {
	case l.kickCh <- struct{}{}:
	default:
	}
	return n
}

// ack records the server's notifications/subscriptions/acknowledged for
// the stream open now. It runs on the transport's reader goroutine.
func (l *listener) ack() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.acked = l.opened
	close(l.ackCh)
	l.ackCh = make(chan struct{})
}

// fail records that the stream open now ended with err before its filter
// was acknowledged: a Subscribe waiting for it fails at once instead of
// waiting for its timeout. It reports whether the stream had been
// acknowledged (it worked, and then ended).
func (l *listener) fail(err error) (worked bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.acked >= l.opened {
		return true
	}
	l.failed, l.err = l.opened, err
	close(l.ackCh)
	l.ackCh = make(chan struct{})
	return false
}

// waitAck waits until a stream whose filter includes change n was
// acknowledged, ctx ends, or the listener stops.
func (l *listener) waitAck(ctx context.Context, n uint64) error {
	for {
		l.mu.Lock()
		acked, failed, err, ch := l.acked, l.failed, l.err, l.ackCh
		l.mu.Unlock()
		if acked >= n {
			return nil
		}
		if failed >= n {
			return fmt.Errorf("subscriptions/listen: %w", err)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-l.done:
			return ErrConnLost
		}
	}
}

// stop ends the loop and waits for it (and so for the listen request);
// a listener whose loop never started returns at once.
func (l *listener) stop() {
	l.mu.Lock()
	cancel := l.cancel
	l.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-l.done
}

// listen starts c's listener loop if c speaks 2026-07-28 (see the comment
// at the top of this file).
func (sb *subscriber) listen(life context.Context, c *conn) {
	if !c.modern() {
		return
	}
	ctx, cancel := context.WithCancel(life)
	l := c.listen
	l.mu.Lock()
	l.cancel = cancel
	l.mu.Unlock()
	go func() {
		defer close(l.done)
		sb.listenLoop(ctx, c, l)
	}()
}

// listenLoop keeps c's listen request open until ctx ends.
func (sb *subscriber) listenLoop(ctx context.Context, c *conn, l *listener) {
	backoff := listenBackoffMin
	for ctx.Err() == nil {
		l.mu.Lock()
		l.opened = l.wanted
		l.mu.Unlock()
		f := sb.listenFilter(c)
		if f.IsEmpty() {
			// Nothing to ask for: acknowledged as it is.
			l.ack()
			select {
			case <-l.kickCh:
				continue
			case <-ctx.Done():
				return
			}
		}
		stream, end := context.WithCancel(ctx)
		ended := make(chan error, 1)
		go func() { ended <- c.client.Listen(stream, f) }()
		select {
		case <-l.kickCh:
			end()
			<-ended
			backoff = listenBackoffMin
			continue
		case <-ctx.Done():
			end()
			<-ended
			return
		case err := <-ended:
			end()
			if l.fail(cmp.Or(err, errListenEnded)) {
				backoff = listenBackoffMin // it worked for a while
			}
			sb.env.logger.Debug("subscriptions/listen ended; listening again", "err", err, "after", backoff)
		}
		wait := time.NewTimer(backoff)
		select {
		case <-wait.C:
		case <-l.kickCh:
			wait.Stop()
		case <-ctx.Done():
			wait.Stop()
			return
		}
		backoff = min(2*backoff, listenBackoffMax)
	}
}

// listenFilter is what c's listen asks for: the list_changed
// notifications its capabilities offer, and the resources subscribed to
// where it offers subscriptions.
func (sb *subscriber) listenFilter(c *conn) mcp.SubscriptionFilter {
	caps := c.init.Capabilities
	var f mcp.SubscriptionFilter
	f.ToolsListChanged = caps.Tools != nil && caps.Tools.ListChanged
	f.ResourcesListChanged = caps.Resources != nil && caps.Resources.ListChanged
	f.PromptsListChanged = caps.Prompts != nil && caps.Prompts.ListChanged
	if caps.Resources != nil && caps.Resources.Subscribe {
		f.ResourceSubscriptions = sb.subs.list()
	}
	return f
}
