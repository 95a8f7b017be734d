package otlp

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// queue is the span processor: ended spans wait in a bounded queue and a
// goroutine exports them in batches. A span that finds the queue full is
// dropped and counted: ending a span never waits for the exporter (a slow
// or dead collector costs a turn nothing). Safe for concurrent use;
// Shutdown is idempotent.
type queue struct {
	exp     sdktrace.SpanExporter
	spans   chan sdktrace.ReadOnlySpan
	flush   chan chan struct{}
	done    chan struct{}
	stop    sync.Once
	dropped atomic.Int64
	batch   int
	every   time.Duration
	timeout time.Duration
}

// Queue bounds.
const (
	queueSize     = 2048
	batchSize     = 512
	batchEvery    = time.Second
	exportTimeout = 10 * time.Second
)

func newQueue(exp sdktrace.SpanExporter) *queue {
	q := &queue{exp: exp, spans: make(chan sdktrace.ReadOnlySpan, queueSize), flush: make(chan chan struct{}),
		done: make(chan struct{}), batch: batchSize, every: batchEvery, timeout: exportTimeout}
	go q.run()
	return q
}

// OnStart implements sdktrace.SpanProcessor.
func (q *queue) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd implements sdktrace.SpanProcessor: s is queued, or dropped when
// the queue is full or shut down.
func (q *queue) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	select {
	case <-q.done:
		q.dropped.Add(1)
		return
	default:
	}
	select {
	case q.spans <- s:
	default:
		q.dropped.Add(1)
	}
}

// run exports the queued spans, a batch when it is full, when a second has
// passed since the last export, or on a flush.
func (q *queue) run() {
	t := time.NewTicker(q.every)
	defer t.Stop()
	batch := make([]sdktrace.ReadOnlySpan, 0, q.batch)
	export := func() {
		if len(batch) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), q.timeout)
		_ = q.exp.ExportSpans(ctx, batch) // the exporter reports its own failures (see exporter.go)
		cancel()
		clear(batch)
		batch = batch[:0]
	}
	drain := func() {
		for {
			select {
			case s := <-q.spans:
				if batch = append(batch, s); len(batch) == q.batch {
					export()
				}
			default:
				export()
				return
			}
		}
	}
	for {
		select {
		case s := <-q.spans:
			if batch = append(batch, s); len(batch) == q.batch {
				export()
			}
		case <-t.C:
			export()
		case ack := <-q.flush:
			drain()
			close(ack)
		case <-q.done:
			drain()
			return
		}
	}
}

// ForceFlush implements sdktrace.SpanProcessor: it returns once what was
// queued before it is exported, or ctx ends.
func (q *queue) ForceFlush(ctx context.Context) error {
	ack := make(chan struct{})
	select {
	case q.flush <- ack:
	case <-q.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-ack:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown implements sdktrace.SpanProcessor: the queue is exported (within
// ctx) and the exporter shut down.
func (q *queue) Shutdown(ctx context.Context) error {
	err := q.ForceFlush(ctx)
	q.stop.Do(func() { close(q.done) })
	if serr := q.exp.Shutdown(ctx); err == nil {
		err = serr
	}
	return err
}
