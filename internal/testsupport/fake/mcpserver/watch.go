package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// Notifications sent through mcp-go are delivered asynchronously: stdio and
// sse hand them to a goroutine, and streamable HTTP can even drop one that
// is sent just before the handler returns (its forwarder takes it off the
// channel, then finds the request done). So a tool that sends a
// notification registers the exact bytes it expects on the wire, sends it,
// and waits until a response writer of its session has written them. This
// makes every notification of a tool call precede the call's result.

// deliveryTimeout bounds that wait.
const deliveryTimeout = 2 * time.Second

// listChangedJSON is part of every tools/list_changed (on 2026-07-28 it
// carries the subscription in params).
var listChangedJSON = []byte(`"method":"notifications/tools/list_changed"`)

// writeWatch watches what is written for one session.
type writeWatch struct {
	mu      sync.Mutex
	waiters map[*waiter]struct{}
}

type waiter struct {
	pat  []byte
	done chan struct{}
}

func (w *writeWatch) expect(pat []byte) *waiter {
	wt := &waiter{pat: pat, done: make(chan struct{})}
	w.mu.Lock()
	if w.waiters == nil {
		w.waiters = make(map[*waiter]struct{})
	}
	w.waiters[wt] = struct{}{}
	w.mu.Unlock()
	return wt
}

func (w *writeWatch) forget(wt *waiter) {
	w.mu.Lock()
	delete(w.waiters, wt)
	w.mu.Unlock()
}

// saw is called with every chunk written for the session.
func (w *writeWatch) saw(p []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for wt := range w.waiters {
		if bytes.Contains(p, wt.pat) {
			close(wt.done)
			delete(w.waiters, wt)
		}
	}
}

// watch returns the writeWatch of a session ("stdio" in stdio mode, the
// Mcp-Session-Id in http mode, the sessionId in sse mode).
func (a *app) watch(sessionID string) *writeWatch {
	v, _ := a.watches.LoadOrStore(sessionID, &writeWatch{})
	return v.(*writeWatch)
}

// sendAndWait runs send, which must make mcp-go write pat for the session
// of ctx, and waits until it has been written.
func (a *app) sendAndWait(ctx context.Context, pat []byte, send func() error) error {
	sess := server.ClientSessionFromContext(ctx)
	if sess == nil {
		return errors.New("no session")
	}
	w := a.watch(sess.SessionID())
	wt := w.expect(pat)
	defer w.forget(wt)
	if err := send(); err != nil {
		return err
	}
	t := time.NewTimer(deliveryTimeout)
	defer t.Stop()
	select {
	case <-wt.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return errors.New("notification not written within " + deliveryTimeout.String())
	}
}

// trackingWriter reports everything written on an HTTP response to the
// session's writeWatch. It keeps http.Flusher (mcp-go needs it to stream)
// and Unwrap (for http.ResponseController).
type trackingWriter struct {
	http.ResponseWriter
	w *writeWatch
}

func (t *trackingWriter) Write(p []byte) (int, error) {
	n, err := t.ResponseWriter.Write(p)
	t.w.saw(p[:n])
	return n, err
}

func (t *trackingWriter) Flush() {
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// trackStreamable wraps the streamable HTTP handler: responses are watched
// under the request's Mcp-Session-Id.
func (a *app) trackStreamable(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&trackingWriter{w, a.watch(r.Header.Get(server.HeaderKeySessionID))}, r)
	})
}

type sseIDKey struct{}

// trackSSE wraps the SSE handler. For GET /sse it picks the session ID
// itself (handed to mcp-go by sseSessionID) so that the event stream can be
// watched under it.
func (a *app) trackSSE(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/sse" {
			h.ServeHTTP(w, r)
			return
		}
		var b [16]byte
		_, _ = rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		r = r.WithContext(context.WithValue(r.Context(), sseIDKey{}, id))
		h.ServeHTTP(&trackingWriter{w, a.watch(id)}, r)
	})
}

func sseSessionID(ctx context.Context, _ *http.Request) (string, error) {
	if id, ok := ctx.Value(sseIDKey{}).(string); ok {
		return id, nil
	}
	return "", errors.New("no session id")
}
