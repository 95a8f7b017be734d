package cachekit_test

import (
	"testing"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/testdata/cachekit"
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
// OpenAI-compatible provider against fakellm and reports, with -v, the
// table of docs/benchmarks.md.
func TestOpenAIPrefixShare(t *testing.T) {
	var names []string
	var reports []cachekit.Report
	for _, sc := range []func(testing.TB) cachekit.Scenario{cachekit.OneServer, cachekit.SearchThreePrompts, cachekit.SearchTwentySteps} {
		s := sc(t)
		r, _ := cachekit.Run(t, cachekit.OpenAI(t), s)
		names, reports = append(names, s.Name), append(reports, r)
	}
	// The alternative of offering every tool from the start.
	s := cachekit.SearchTwentySteps(t)
	s.Name, s.SearchThreshold = "1000 tools, 20 steps, every tool offered", gateway.NoToolSearch
	r, _ := cachekit.Run(t, cachekit.OpenAI(t), s)
	names, reports = append(names, s.Name), append(reports, r)
	t.Log("\n" + cachekit.Table(names, reports))
}
