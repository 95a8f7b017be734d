package mcpclient

import "sync"

// eventQueue delivers events to a callback in order, from one goroutine, so
// that the callback never runs under a Manager lock and never blocks a
// server. Safe for concurrent use.
type eventQueue struct {
	fn     func(Event)
	mu     sync.Mutex
	items  []Event
	wake   chan struct{}
	done   chan struct{}
	closed bool
	// pushed and delivered count the events queued and the events fn has
	// returned from; delivery is closed (and replaced) at each delivery.
	pushed, delivered uint64
	delivery          chan struct{}
}

func newEventQueue(fn func(Event)) *eventQueue {
	q := &eventQueue{fn: fn, wake: make(chan struct{}, 1), done: make(chan struct{}), delivery: make(chan struct{})}
	if fn == nil {
		close(q.done)
		return q
	}
	go q.loop()
	return q
}

func (q *eventQueue) push(e Event) {
	if q.fn == nil {
		return
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.items = append(q.items, e)
	q.pushed++
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *eventQueue) loop() {
	defer close(q.done)
	for range q.wake {
		for {
			q.mu.Lock()
			items := q.items
			q.items = nil
			closed := q.closed
			q.mu.Unlock()
			for _, e := range items {
				q.fn(e)
				q.mu.Lock()
				q.delivered++
				close(q.delivery)
				q.delivery = make(chan struct{})
				q.mu.Unlock()
			}
			if len(items) == 0 {
				if closed {
					return
				}
				break
			}
		}
	}
}

// flush waits until fn has returned from every event queued before the
// call, or the queue has stopped. It must not be called from fn.
func (q *eventQueue) flush() {
	if q.fn == nil {
		return
	}
	q.mu.Lock()
	target := q.pushed
	q.mu.Unlock()
	for {
		q.mu.Lock()
		delivered, next := q.delivered, q.delivery
		q.mu.Unlock()
		if delivered >= target {
			return
		}
		select {
		case <-next:
		case <-q.done:
			return
		}
	}
}

// close delivers what is queued, then stops the queue and waits for it.
func (q *eventQueue) close() {
	if q.fn == nil {
		return
	}
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	<-q.done
}
