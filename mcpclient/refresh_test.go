package mcpclient_test

import (
	"strings"
	"testing"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/mcpclient"
)

// A connection has one ttlMs expiry at a time: list_changed re-listings do
// not each start another refresh loop. Server "ref" (same ttl, never
// poked) is the clock: while it is listed again periods times, "s", which
// was re-listed kicks times on list_changed first, is listed about as
// often, not kicks+1 times as often. Re-listings that find the same tools
// announce nothing.
func TestToolsTTLOneExpiry(t *testing.T) {
	t.Parallel()
	const kicks, periods = 4, 4
	opts, _ := fastOpts(t)
	events := newEventLog()
	opts.OnEvent = events.add
	recRef, linesRef := recordFile(t)
	rec, lines := recordFile(t)
	args := []string{"-protocol", "2026-07-28", "-tools-ttl", "300ms", "-record"}
	m := start(t, opts, stdio("ref", append(args, recRef)...), stdio("s", append(args, rec)...))
	isToolsChanged := func(e mcpclient.Event) bool { return e.Kind == mcpclient.EventToolsChanged && e.Server == "s" }
	events.wait(t, "the first tool list of s", isToolsChanged)

	listings := func() int { return testbin.Count(lines(), "tools/list") }
	for range kicks {
		n := listings()
		call(t, m, "s", "list_changed", nil)
		testbin.WaitFor(t, "the re-listing after list_changed", func() bool { return listings() > n })
	}

	ref0, s0 := testbin.Count(linesRef(), "tools/list"), listings()
	testbin.WaitFor(t, "the reference server's re-listings", func() bool {
		return testbin.Count(linesRef(), "tools/list") >= ref0+periods
	})
	// One expiry loop: periods listings, one more for phase, one for slack.
	if got := listings() - s0; got > periods+2 {
		t.Errorf("s was listed %d times while ref was listed %d times: expiry timers pile up", got, periods)
	}
	n := 0
	for _, e := range events.snapshot() {
		if isToolsChanged(e) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d tools-changed events for s, want 1 (re-listings found the same tools):\n%s", n, strings.Join(lines(), "\n"))
	}
}
