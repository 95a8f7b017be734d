package main_test

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// BenchmarkCompaction is issue 20's measure: a 300-turn session, each
// turn a 30 KB tool result and a short answer, against a 32k-token window
// (configured, and enforced by fakellm, which refuses a longer request).
// Every turn must complete and no request reach the window; it reports
// what compaction cost: the summary requests next to the turns' own, and
// the time of the turns that compacted next to the others'. One run is
// one session (-benchtime 1x); docs/benchmarks.md has the numbers.
func BenchmarkCompaction(b *testing.B) {
	const turns, window = 300, 32768
	for range b.N {
		r := startLong(b, longSpec{window: window, configured: true, resultBytes: 30000, answerBytes: 200})
		r.llm.ForgetRequests()
		var plain, elided, summarised []time.Duration
		var total time.Duration
		for i := range turns {
			cards, sums := len(r.cards()), r.summaries.Load()
			start := time.Now()
			r.prompt(b, fmt.Sprintf("read part %d of the file", i))
			d := time.Since(start)
			total += d
			switch {
			case r.summaries.Load() > sums:
				summarised = append(summarised, d)
			case len(r.cards()) > cards:
				elided = append(elided, d)
			default:
				plain = append(plain, d)
			}
		}
		st := r.llm.Stats()
		if st.Refused != 0 || st.MaxTokens > window || r.short.Load() != 0 {
			b.Fatalf("stats %+v: a request reached the window; %d short results", st, r.short.Load())
		}
		b.ReportMetric(float64(r.turns.Load()), "model-calls")
		b.ReportMetric(float64(r.summaries.Load()), "summary-calls")
		b.ReportMetric(float64(r.summaryTokens.Load()), "summary-tokens")
		b.ReportMetric(float64(len(elided)), "elision-turns")
		b.ReportMetric(float64(len(summarised)), "summary-turns")
		b.ReportMetric(float64(st.MaxTokens), "max-request-tokens")
		b.ReportMetric(float64(st.Tokens)/float64(turns), "tokens-sent/turn")
		b.ReportMetric(float64(total.Milliseconds())/turns, "ms/turn")
		b.ReportMetric(median(plain), "ms/plain-turn")
		b.ReportMetric(median(elided), "ms/elision-turn")
		b.ReportMetric(median(summarised), "ms/summary-turn")
	}
}

// median is the median of ds in milliseconds (0 for none).
func median(ds []time.Duration) float64 {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return float64(ds[len(ds)/2].Microseconds()) / 1000
}
