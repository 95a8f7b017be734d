package wire

import (
	"context"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// LibraryCancels reports whether mcp-go v1.2.1's client sends
// notifications/cancelled itself when a request's context ends over t: it
// does unless t is a transport.HTTPConnection (client.cancelRequest).
// TestLibraryCancelNotice pins this; if an upgrade changes it, change this
// rule.
func LibraryCancels(t transport.Interface) bool {
	_, isHTTP := t.(transport.HTTPConnection)
	return !isHTTP
}

// Notices tracks the notices of one connection that mcp-go does not send
// itself (notifications/cancelled where LibraryCancels says it sends none,
// tasks/cancel): they are sent off the caller's path, bounded by the
// connection's life, and the connection's teardown waits for them (Wait),
// so none outlives the connection. Safe for concurrent use.
type Notices struct {
	life context.Context
	wg   sync.WaitGroup

	mu     sync.Mutex
	closed bool // Wait has begun: no more notices
}

// NewNotices returns the notices of a connection whose life is life.
func NewNotices(life context.Context) *Notices { return &Notices{life: life} }

// Send runs fn (which sends one notice) in a goroutine with a context
// that ends with the connection, or after five seconds.
func (n *Notices) Send(fn func(ctx context.Context)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return // the connection is being torn down
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		ctx, cancel := context.WithTimeout(n.life, 5*time.Second)
		defer cancel()
		fn(ctx)
	}()
}

// Wait returns once every notice has been sent or given up; later ones
// are not sent.
func (n *Notices) Wait() {
	n.mu.Lock()
	n.closed = true
	n.mu.Unlock()
	n.wg.Wait()
}

// Cancel sends notifications/cancelled over t for request id, whose ctx
// has ended: best effort, off the caller's path (the caller has its error).
func (n *Notices) Cancel(ctx context.Context, t transport.Interface, id mcp.RequestId) {
	note := mcp.JSONRPCNotification{
		JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{
			Method: string(mcp.MethodNotificationCancelled),
			Params: mcp.NotificationParams{AdditionalFields: map[string]any{
				"requestId": id,
				"reason":    context.Cause(ctx).Error(),
			}},
		},
	}
	n.Send(func(nctx context.Context) { _ = t.SendNotification(nctx, note) })
}
