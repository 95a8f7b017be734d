package wire

import (
	"sync"
	"time"
)

// The read budget of one server (ReadBudget): what acpgate reads from it
// at full speed, after which its reading slows.
const (
	BudgetLineRate  = 1000     // messages (lines) a second
	BudgetLineBurst = 5000     // messages read at once before the rate applies
	BudgetByteRate  = 8 << 20  // bytes a second
	BudgetByteBurst = 32 << 20 // bytes read at once (two messages of the default maximum)
)

// ReadBudget bounds what a server's output costs acpgate to read, whatever
// it is: JSON-RPC messages (notifications, responses to ids nobody asked,
// list_changed), lines that only look like JSON, an endless line. It is a
// token bucket of lines and of bytes; reading spends tokens (no clock read), and before the next read of the server's pipe or
// body, Settle refills from the clock and, while in debt, sleeps until the debt
// is paid. A server over the budget is read more slowly: its pipe (or TCP
// window) fills and it blocks, instead of costing acpgate CPU. Nothing is
// dropped for the budget. Safe for concurrent use (an HTTP server's
// bodies share one).
type ReadBudget struct {
	now   func() time.Time
	sleep func(time.Duration)

	mu           sync.Mutex
	lines, bytes float64 // tokens left; negative: owed
	last         time.Time
}

// NewReadBudget returns a full budget reading the clock now and waiting
// with sleep.
func NewReadBudget(now func() time.Time, sleep func(time.Duration)) *ReadBudget {
	return &ReadBudget{now: now, sleep: sleep, lines: BudgetLineBurst, bytes: BudgetByteBurst, last: now()}
}

// Settle charges lines and bytes read since the last call, then waits
// while the budget is owed. A nil budget does nothing.
func (b *ReadBudget) Settle(lines, bytes int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	now := b.now()
	elapsed := now.Sub(b.last).Seconds()
	b.last = now
	b.lines = min(b.lines+elapsed*BudgetLineRate, BudgetLineBurst) - float64(lines)
	b.bytes = min(b.bytes+elapsed*BudgetByteRate, BudgetByteBurst) - float64(bytes)
	owed := max(-b.lines/BudgetLineRate, -b.bytes/BudgetByteRate, 0)
	b.mu.Unlock()
	if owed > 0 {
		b.sleep(time.Duration(owed * float64(time.Second)))
	}
}
