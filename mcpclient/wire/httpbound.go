package wire

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync/atomic"
)

// BoundedBodies is the http.RoundTripper of an http or sse server's client.
// mcp-go reads response bodies without a bound (a JSON body whole, an event
// stream line by line), so it bounds them: a JSON body to Max bytes, an
// event of an event stream to Max bytes. Past the bound the body fails with
// an error wrapping ErrResponseTooLarge, and the request's size trip (see
// WithSizeTrip), if any, is set, because mcp-go does not pass on the error
// of an event stream that breaks off. Safe for concurrent use.
type BoundedBodies struct {
	Base   http.RoundTripper // the transport the requests go through
	Max    int               // the bound of a JSON body or of one event
	Budget *ReadBudget       // the server's read budget, shared by its bodies; nil: none
}

// RoundTrip implements http.RoundTripper.
func (b BoundedBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := b.Base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	trip, _ := req.Context().Value(sizeTripKey{}).(*atomic.Bool)
	bb := &boundedBody{rc: resp.Body, max: b.Max, trip: trip, budget: b.Budget}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		bb.events = true
	}
	resp.Body = bb
	return resp, nil
}

// sizeTripKey is the context key of a request's size trip.
type sizeTripKey struct{}

// WithSizeTrip returns ctx carrying a flag that an HTTP response body read
// for a request made with it sets when it goes over the bound (see
// SizeTripped).
func WithSizeTrip(ctx context.Context) context.Context {
	return context.WithValue(ctx, sizeTripKey{}, &atomic.Bool{})
}

// SizeTripped reports whether a response body read for a request made with
// ctx (carrying a size trip of WithSizeTrip) went over the bound.
func SizeTripped(ctx context.Context) bool {
	trip, _ := ctx.Value(sizeTripKey{}).(*atomic.Bool)
	return trip != nil && trip.Load()
}

// boundedBody is a response body with a bound: on the whole body, or with
// events set on each event of an event stream (the bytes since the last
// blank line).
type boundedBody struct {
	rc     io.ReadCloser
	max    int
	events bool
	trip   *atomic.Bool
	budget *ReadBudget
	// spentLines and spentBytes are read and not yet charged to budget.
	spentLines, spentBytes int

	n       int  // bytes of the body, or of the current event
	lineLen int  // events: bytes of the current line, its newline excluded
	lastCR  bool // events: the current line ends in '\r' so far
	over    bool // the bound was passed
}

// Read implements io.Reader.
func (b *boundedBody) Read(p []byte) (int, error) {
	if b.over {
		return 0, b.tooLarge()
	}
	b.budget.Settle(b.spentLines, b.spentBytes)
	b.spentLines, b.spentBytes = 0, 0
	if !b.events && len(p) > b.max-b.n+1 {
		p = p[:b.max-b.n+1] // one byte past the bound tells whether there is more
	}
	n, err := b.rc.Read(p)
	b.spentBytes += n
	b.spentLines += bytes.Count(p[:n], []byte{'\n'})
	if b.events {
		b.countEvents(p[:n])
	} else {
		b.n += n
	}
	if b.n > b.max {
		b.over = true
		if b.trip != nil {
			b.trip.Store(true)
		}
		return 0, b.tooLarge()
	}
	return n, err
}

// countEvents follows p for event boundaries (blank lines).
func (b *boundedBody) countEvents(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		seg := p
		if i >= 0 {
			seg = p[:i]
		}
		if len(seg) > 0 {
			b.lineLen += len(seg)
			b.lastCR = seg[len(seg)-1] == '\r'
		}
		b.n += len(seg)
		if i < 0 {
			return
		}
		if b.lineLen == 0 || (b.lineLen == 1 && b.lastCR) {
			b.n = 0 // a blank line ends the event
		} else {
			b.n++
		}
		b.lineLen, b.lastCR = 0, false
		p = p[i+1:]
	}
}

func (b *boundedBody) tooLarge() error {
	what := "response body"
	if b.events {
		what = "event"
	}
	return fmt.Errorf("%w: %s over %d bytes", ErrResponseTooLarge, what, b.max)
}

// Close implements io.Closer.
func (b *boundedBody) Close() error { return b.rc.Close() }
