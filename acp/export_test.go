package acp

import "time"

// ProgressCard exposes a card's progress throttle to the tests.
type ProgressCard struct {
	cards progressCards
	c     *progressCard
}

// NewProgressCard is a throttle whose interval is every.
func NewProgressCard(every time.Duration) *ProgressCard {
	p := &ProgressCard{}
	p.c = p.cards.card("c")
	p.c.every = every
	return p
}

// Offer offers an update with text, sent through send.
func (p *ProgressCard) Offer(text string, send func()) { p.c.offer(text, send) }

// Flush sends what is pending, as the interval's end does.
func (p *ProgressCard) Flush() { p.c.flush() }

// Finish ends the card.
func (p *ProgressCard) Finish() { p.cards.finish("c") }

// OfferLate offers an update the way a progress report that arrives after
// the card finished does: looking the card up again by its id.
func (p *ProgressCard) OfferLate(text string, send func()) { p.cards.card("c").offer(text, send) }
