package conformance

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
)

// Mismatch is a difference between the results and the expected failures.
type Mismatch struct {
	Scenario string
	Problem  string // what is wrong and what to do
}

// Mismatches compares results with expected (scenario -> reason): a
// scenario that fails without being listed, a listed one that passes (the
// table is stale), and a listed one the suite does not have.
func Mismatches(results []Result, expected map[string]string) []Mismatch {
	var out []Mismatch
	seen := map[string]bool{}
	for _, r := range results {
		seen[r.Scenario] = true
		reason, listed := expected[r.Scenario]
		switch {
		case !r.Passed() && !listed:
			out = append(out, Mismatch{r.Scenario, "fails and is not in ExpectedFailures" + failedChecks(r)})
		case r.Passed() && listed:
			out = append(out, Mismatch{r.Scenario, fmt.Sprintf("passes but is listed in ExpectedFailures (%s): remove it there and from README.md", reason)})
		}
	}
	var missing []string
	for name := range expected {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	for _, name := range missing {
		out = append(out, Mismatch{name, "is listed in ExpectedFailures but the suite has no such scenario"})
	}
	return out
}

// failedChecks lists the failing checks of r, for a message.
func failedChecks(r Result) string {
	if r.Missing {
		return ": the suite wrote no checks (see " + r.Dir + ")"
	}
	if len(r.Checks) == 0 {
		return ": the suite's checks.json has no checks (see " + r.Dir + ")"
	}
	s := ""
	for _, c := range r.Checks {
		if c.Status == StatusFailure || c.Status == StatusWarning {
			s += fmt.Sprintf("\n    %s %s: %s %s", c.Status, c.ID, c.Description, c.ErrorMessage)
		}
	}
	return s + "\n    (the harness's and acpgate's log: " + filepath.Join(r.Dir, "stderr.txt") + ")"
}

// Report writes one line per scenario (pass or FAIL, checks passed, and
// the reason when it is an expected failure), then the totals
// "N/26 scenarios, M/60 checks".
func Report(w io.Writer, results []Result, expected map[string]string) error {
	var scenarios, checks, total int
	for _, r := range results {
		passed, n := r.Score()
		checks += passed
		total += n
		verdict := "FAIL"
		if r.Passed() {
			verdict = "pass"
			scenarios++
		}
		note := ""
		if reason, ok := expected[r.Scenario]; ok {
			note = "  (expected: " + reason + ")"
		}
		if r.Missing {
			note += "  (no checks written)"
		}
		if _, err := fmt.Fprintf(w, "%s  %-45s %2d/%-2d checks%s\n", verdict, r.Scenario, passed, n, note); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "%d/%d scenarios, %d/%d checks\n", scenarios, len(results), checks, total)
	return err
}
