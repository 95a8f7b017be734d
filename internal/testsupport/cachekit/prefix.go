// Package cachekit measures how much of each model request a provider's
// prompt cache could serve. A prefix cache (OpenAI's automatic caching,
// Anthropic's cache_control breakpoints) serves the part of a request
// that begins byte for byte like an earlier one: in a session, what
// consecutive requests share from their start. What counts is each
// request's prompt in the order the provider builds it — its tools, then
// its messages — serialised exactly as the provider sends them; a fake
// endpoint that records requests supplies that serialisation (for
// OpenAI-compatible requests, fakellm.Request.CachePrefix: the JSON
// "tools" array, then the "messages" array).
//
// Run plays a Scenario (a session's prompts and the model's scripted
// answers) through gateway.Runner against an Endpoint and returns the
// Report: every request's size and the prefix it shares with the one
// before. The scenarios of issue 21 are OneServer, SearchThreePrompts and
// SearchTwentySteps; the Endpoint for the OpenAI-compatible provider is
// OpenAI, for the Anthropic one Anthropic (whose requests also say where
// their cache breakpoints are: Report.CacheServed). cachekit is for tests
// and benchmarks only.
package cachekit

import (
	"fmt"
	"slices"
	"strings"
)

// Shared returns the length of the longest common prefix of a and b.
func Shared(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// Report is the measurement of one session's requests, in order.
type Report struct {
	// Bytes is the size of each request's prompt (tools, then messages).
	Bytes []int
	// Shared[i] is how many of its first bytes request i shares with
	// request i-1 (Shared[0] is 0: the first request is a cold miss).
	Shared []int
	// Tools[i] is how many tools request i offered.
	Tools []int
	// Breakpoints[i] are the offsets where request i asks the cache to
	// store its prefix (Request.Breakpoints; nil for none).
	Breakpoints [][]int
}

// Measure returns the Report of the requests whose prompts are prompts
// and which offered tools[i] tools each (tools may be nil).
func Measure(prompts [][]byte, tools []int) Report {
	r := Report{Bytes: make([]int, len(prompts)), Shared: make([]int, len(prompts)), Tools: tools}
	for i, p := range prompts {
		r.Bytes[i] = len(p)
		if i > 0 {
			r.Shared[i] = Shared(prompts[i-1], p)
		}
	}
	return r
}

// Kept is the share of each request the next one starts with, over the
// session: the sum of Shared over the sum of the sizes of the requests
// each follows (1 with fewer than two requests). This is the measure of
// issue 21: 100 % when every request begins with the whole previous one.
func (r Report) Kept() float64 {
	kept, prev := 0, 0
	for i := 1; i < len(r.Bytes); i++ {
		kept += r.Shared[i]
		prev += r.Bytes[i-1]
	}
	if prev == 0 {
		return 1
	}
	return float64(kept) / float64(prev)
}

// MinKept is the smallest share of one request that the next one starts
// with (1 with fewer than two requests): where the prefix breaks.
func (r Report) MinKept() float64 {
	least := 1.0
	for i := 1; i < len(r.Bytes); i++ {
		if r.Bytes[i-1] > 0 {
			least = min(least, float64(r.Shared[i])/float64(r.Bytes[i-1]))
		}
	}
	return least
}

// Total is the sum of the requests' sizes: what the session sends.
func (r Report) Total() int {
	total := 0
	for _, b := range r.Bytes {
		total += b
	}
	return total
}

// Uncached is what a cache holding each previous request could not serve:
// the total minus every request's shared prefix (the first request counts
// whole).
func (r Report) Uncached() int {
	u := r.Total()
	for _, s := range r.Shared {
		u -= s
	}
	return u
}

// Served is the share of all the session's request bytes that a cache
// holding each previous request could serve: 1 - Uncached/Total. The
// first request is a miss, so it is below 1 even for a perfect session.
func (r Report) Served() float64 {
	if r.Total() == 0 {
		return 0
	}
	return 1 - float64(r.Uncached())/float64(r.Total())
}

// Cached is how much of request i a cache with breakpoints could serve:
// the longest prefix that ends at a breakpoint of both request i and
// request i-1 (where the previous request stored it) and that the two
// share. 0 for the first request.
func (r Report) Cached(i int) int {
	if i == 0 || i >= len(r.Breakpoints) {
		return 0
	}
	best := 0
	for _, b := range r.Breakpoints[i] {
		if b <= r.Shared[i] && b > best && slices.Contains(r.Breakpoints[i-1], b) {
			best = b
		}
	}
	return best
}

// CacheServed is the share of the session's input a cache with
// breakpoints would serve: the sum of Cached over Total.
func (r Report) CacheServed() float64 {
	if r.Total() == 0 {
		return 0
	}
	served := 0
	for i := range r.Bytes {
		served += r.Cached(i)
	}
	return float64(served) / float64(r.Total())
}

// Tokens estimates the tokens of n bytes of JSON prompt: 4 bytes a token.
func Tokens(n int) int { return (n + 3) / 4 }

// Row is the report as one row of a Table (the table of docs/benchmarks.md):
// requests, tools offered by each request, kept, lowest
// kept, served, total and uncached size (kB and estimated tokens).
func (r Report) Row() string {
	return fmt.Sprintf("| %d | %s | %.2f %% | %.2f %% | %.1f %% | %.0f kB (%d k tok) | %.0f kB (%d k tok) |",
		len(r.Bytes), r.toolCounts(), 100*r.Kept(), 100*r.MinKept(), 100*r.Served(),
		float64(r.Total())/1000, Tokens(r.Total())/1000, float64(r.Uncached())/1000, Tokens(r.Uncached())/1000)
}

// Table is the Markdown table of reports, one row each, named by names.
func Table(names []string, reports []Report) string {
	var b strings.Builder
	b.WriteString("| session | requests | tools offered | kept | lowest kept | served | sent | not cacheable |\n|---|---|---|---|---|---|---|---|\n")
	for i, r := range reports {
		fmt.Fprintf(&b, "| %s %s\n", names[i], r.Row())
	}
	return b.String()
}

// toolCounts is the number of tools of each request, runs of equal
// counts written once with their length: "4 5×2 4 5×2".
func (r Report) toolCounts() string { return runs(r.Tools) }

// runs writes ns with runs of equal numbers once with their length.
func runs(ns []int) string {
	var b strings.Builder
	for i := 0; i < len(ns); {
		j := i
		for j < len(ns) && ns[j] == ns[i] {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprint(&b, ns[i])
		if j-i > 1 {
			fmt.Fprintf(&b, "×%d", j-i)
		}
		i = j
	}
	return b.String()
}

// CacheTable is the Markdown table of what a cache with breakpoints
// (Anthropic's) serves of reports, one row each, named by names: the
// breakpoints of each request, and the share of the input served
// (CacheServed).
func CacheTable(names []string, reports []Report) string {
	var b strings.Builder
	b.WriteString("| session | breakpoints per request | input a cache serves |\n|---|---|---|\n")
	for i, r := range reports {
		counts := make([]int, len(r.Breakpoints))
		for j, bp := range r.Breakpoints {
			counts[j] = len(bp)
		}
		fmt.Fprintf(&b, "| %s | %s | %.1f %% |\n", names[i], runs(counts), 100*r.CacheServed())
	}
	return b.String()
}
