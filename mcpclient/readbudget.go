package mcpclient

import (
	"sync"
	"time"
)

// The read budget of one server (readBudget): what acpgate reads from it
// at full speed, after which its reading slows.
const (
	budgetLineRate  = 1000     // messages (lines) a second
	budgetLineBurst = 5000     // messages read at once before the rate applies
	budgetByteRate  = 8 << 20  // bytes a second
	budgetByteBurst = 32 << 20 // bytes read at once (two messages of the default maximum)
)

// readBudget bounds what a server's output costs acpgate to read, whatever
// it is: JSON-RPC messages (notifications, responses to ids nobody asked,
// list_changed), lines that only look like JSON, an endless line. It is a
// token bucket of lines and of bytes; reading spends tokens (spend, no
// clock read), and before the next read of the server's pipe or body,
// settle refills from the clock and, while in debt, sleeps until the debt
// is paid. A server over the budget is read more slowly: its pipe (or TCP
// window) fills and it blocks, instead of costing acpgate CPU. Nothing is
// dropped for the budget. Safe for concurrent use (an HTTP server's
// bodies share one).
type readBudget struct {
	now   func() time.Time
	sleep func(time.Duration)

	mu           sync.Mutex
	lines, bytes float64 // tokens left; negative: owed
	last         time.Time
}

// newReadBudget returns a full budget reading the clock now and waiting
// with sleep.
func newReadBudget(now func() time.Time, sleep func(time.Duration)) *readBudget {
	return &readBudget{now: now, sleep: sleep, lines: budgetLineBurst, bytes: budgetByteBurst, last: now()}
}

// settle charges lines and bytes read since the last call, then waits
// while the budget is owed. A nil budget does nothing.
func (b *readBudget) settle(lines, bytes int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	now := b.now()
	elapsed := now.Sub(b.last).Seconds()
	b.last = now
	b.lines = min(b.lines+elapsed*budgetLineRate, budgetLineBurst) - float64(lines)
	b.bytes = min(b.bytes+elapsed*budgetByteRate, budgetByteBurst) - float64(bytes)
	owed := max(-b.lines/budgetLineRate, -b.bytes/budgetByteRate, 0)
	b.mu.Unlock()
	if owed > 0 {
		b.sleep(time.Duration(owed * float64(time.Second)))
	}
}
