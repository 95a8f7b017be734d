package cachekit_test

import (
	"slices"
	"testing"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/internal/testsupport/cachekit"
)

// TestShared: the shared prefix and the shares computed from it.
func TestShared(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "abd", 2}, {"abc", "abcdef", 3}, {"abcdef", "abc", 3}, {"x", "y", 0}} {
		if got := cachekit.Shared([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("Shared(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	r := cachekit.Measure([][]byte{[]byte("aaaa"), []byte("aaaabbbb"), []byte("aaaXbbbbcc")}, []int{4, 5, 5})
	if r.Kept() != float64(4+3)/float64(4+8) || r.MinKept() != 3.0/8 || r.Total() != 22 || r.Uncached() != 22-7 {
		t.Fatalf("kept %v, lowest %v, total %d, uncached %d", r.Kept(), r.MinKept(), r.Total(), r.Uncached())
	}
}

// TestOpenAIPrefixShare plays the scenarios of issue 21 through the
// OpenAI-compatible provider against fakellm: every request carries the
// session as prompt_cache_key, and begins with (nearly) the whole
// previous one — the goals of issue 21, 99 % with one server's tools and
// 85 % with 1000 tools behind tool search. With -v it logs the table of
// docs/benchmarks.md, with a fourth row: every tool offered from the
// start.
func TestOpenAIPrefixShare(t *testing.T) {
	var names []string
	var reports []cachekit.Report
	for _, sc := range []struct {
		scenario func(testing.TB) cachekit.Scenario
		goal     float64
	}{{cachekit.OneServer, 0.99}, {cachekit.SearchThreePrompts, 0.85}, {cachekit.SearchTwentySteps, 0.85}} {
		s := sc.scenario(t)
		r, reqs := cachekit.Run(t, cachekit.OpenAI(t), s)
		if r.Kept() < sc.goal {
			t.Errorf("%s: requests keep %.1f %% of the previous one, want ≥ %.0f %%", s.Name, 100*r.Kept(), 100*sc.goal)
		}
		for i, q := range reqs {
			if q.CacheKey != cachekit.SessionKey || !slices.Equal(q.Tools, reqs[0].Tools) {
				t.Errorf("%s: request %d: prompt_cache_key %q, tools %v; want %q and the tools of the first, %v", s.Name, i+1, q.CacheKey, q.Tools, cachekit.SessionKey, reqs[0].Tools)
			}
		}
		names, reports = append(names, s.Name), append(reports, r)
	}
	if testing.Verbose() {
		s := cachekit.SearchTwentySteps(t)
		s.Name, s.SearchThreshold = "1000 tools, 20 steps, every tool offered", gateway.NoToolSearch
		r, _ := cachekit.Run(t, cachekit.OpenAI(t), s)
		names, reports = append(names, s.Name), append(reports, r)
	}
	t.Log("\n" + cachekit.Table(names, reports))
}

// TestAnthropicPrefixShare plays the scenarios of issue 21 through the
// Anthropic provider against fakeanthropic. With 1000 tools the request
// offers every tool deferred (defer_loading) and the API's tool search
// tool, which the model uses server-side; the tools are the same on
// every request, and each request begins with (nearly) the whole
// previous one — the goals of issue 21, 99 % with one server's tools and
// 95 % with deferred tools. Every request carries at most four
// breakpoints, the first after the tools. With -v it logs the tables of
// docs/benchmarks.md.
func TestAnthropicPrefixShare(t *testing.T) {
	var names []string
	var reports []cachekit.Report
	for _, sc := range []struct {
		scenario func(testing.TB) cachekit.Scenario
		goal     float64
		deferred bool
	}{{cachekit.OneServer, 0.99, false}, {cachekit.SearchThreePrompts, 0.95, true}, {cachekit.SearchTwentySteps, 0.95, true}} {
		s := sc.scenario(t)
		r, reqs := cachekit.Run(t, cachekit.Anthropic(t), s)
		if r.Kept() < sc.goal {
			t.Errorf("%s: requests keep %.1f %% of the previous one, want ≥ %.0f %%", s.Name, 100*r.Kept(), 100*sc.goal)
		}
		for i, q := range reqs {
			if !slices.Equal(q.Tools, reqs[0].Tools) {
				t.Errorf("%s: request %d: tools %v, want the tools of the first, %v", s.Name, i+1, q.Tools, reqs[0].Tools)
			}
			if len(q.Deferred) != map[bool]int{true: len(s.Extra)}[sc.deferred] || q.ServerSearch != sc.deferred {
				t.Errorf("%s: request %d: %d tools deferred, tool search %v", s.Name, i+1, len(q.Deferred), q.ServerSearch)
			}
			if n := len(q.Breakpoints); n == 0 || n > 4 {
				t.Errorf("%s: request %d: %d breakpoints", s.Name, i+1, n)
			}
		}
		names, reports = append(names, s.Name), append(reports, r)
	}
	t.Log("\n" + cachekit.Table(names, reports) + "\n" + cachekit.CacheTable(names, reports))
}
