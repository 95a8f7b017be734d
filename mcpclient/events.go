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
}

func newEventQueue(fn func(Event)) *eventQueue {
	q := &eventQueue{fn: fn, wake: make(chan struct{}, 1), done: make(chan struct{})}
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
