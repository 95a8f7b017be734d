package conformance

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Expected is the table of expected failures (ExpectedFailures): by set
// (Sets), entries keyed
//
//	"scenario"          the scenario does not pass (whatever its checks say)
//	"scenario:check-id" that check fails or warns in that scenario
//	"*:check-id"        that check fails or warns in any scenario of the set
//
// to the reason. A scenario passes the comparison when it passes, or when
// it is listed whole, or when each of its failing checks is listed.
type Expected map[string]map[string]string

// Mismatch is a difference between the results and the expected failures.
type Mismatch struct {
	Set      string
	Scenario string
	Problem  string // what is wrong and what to do
}

// anyScenario is the scenario part of an entry that names a check in any
// scenario of its set.
const anyScenario = "*"

// Mismatches compares results with expected: a scenario that fails (or a
// check that fails or warns) without being listed, a listed one that
// passes (the table is stale), and a listed scenario or set the run does
// not have.
func Mismatches(results []Result, expected Expected) []Mismatch {
	var out []Mismatch
	add := func(set, scenario, format string, args ...any) {
		out = append(out, Mismatch{set, scenario, fmt.Sprintf(format, args...)})
	}
	seen := map[string]map[string]bool{}    // set -> scenario -> ran
	failing := map[string]map[string]bool{} // set -> check id -> fails somewhere
	usedAny := map[string]map[string]bool{} // set -> check id -> a "*:" entry excused a failure
	for _, r := range results {
		if seen[r.Set] == nil {
			seen[r.Set], failing[r.Set], usedAny[r.Set] = map[string]bool{}, map[string]bool{}, map[string]bool{}
		}
		seen[r.Set][r.Scenario] = true
		table := expected[r.Set]
		whole, listed := table[r.Scenario]
		fails := r.Failing()
		for _, id := range fails {
			failing[r.Set][id] = true
		}
		switch {
		case r.Passed() && listed:
			add(r.Set, r.Scenario, "passes but is listed in ExpectedFailures (%s): remove it there", whole)
		case !r.Passed() && !listed && len(fails) == 0:
			add(r.Set, r.Scenario, "does not pass and is not in ExpectedFailures%s", failedChecks(r))
		case !r.Passed() && !listed:
			var unlisted []string
			for _, id := range fails {
				if _, ok := table[r.Scenario+":"+id]; ok {
					continue
				}
				if _, ok := table[anyScenario+":"+id]; ok {
					usedAny[r.Set][id] = true
					continue
				}
				unlisted = append(unlisted, id)
			}
			if len(unlisted) > 0 {
				add(r.Set, r.Scenario, "fails checks not in ExpectedFailures (%s)%s", strings.Join(unlisted, ", "), failedChecks(r))
			}
		}
		// Entries for single checks of this scenario must still fail.
		for key, reason := range table {
			scenario, id, ok := strings.Cut(key, ":")
			if !ok || scenario != r.Scenario {
				continue
			}
			switch {
			case listed:
				add(r.Set, r.Scenario, "is listed in ExpectedFailures both whole and for check %s: keep one", id)
			case !slices.Contains(fails, id):
				add(r.Set, r.Scenario, "check %s no longer fails but is listed in ExpectedFailures (%s): remove it there", id, reason)
			}
		}
	}
	var sets []string
	for set := range expected {
		sets = append(sets, set)
	}
	sort.Strings(sets)
	for _, set := range sets {
		if seen[set] == nil {
			add(set, "", "is a set in ExpectedFailures that was not run (sets: %s)", strings.Join(Sets(), ", "))
			continue
		}
		var keys []string
		for key := range expected[set] {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		for _, key := range keys {
			scenario, id, _ := strings.Cut(key, ":")
			switch {
			case scenario == anyScenario && !failing[set][id]:
				add(set, key, "is listed in ExpectedFailures but no scenario of the set fails check %s: remove it there", id)
			case scenario == anyScenario && !usedAny[set][id]:
				add(set, key, "is listed in ExpectedFailures but excuses nothing (the scenarios that fail check %s are listed otherwise)", id)
			case scenario != anyScenario && !seen[set][scenario]:
				add(set, scenario, "is listed in ExpectedFailures but the set has no such scenario")
			}
		}
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
	if s == "" {
		s = "\n    (no check succeeded)"
	}
	return s + "\n    (the harness's and acpgate's log: " + filepath.Join(r.Dir, "stderr.txt") + ")"
}

// setTitle says what a set is, for Report.
func setTitle(set string) string {
	if set == SetOther {
		return "client scenarios in no requirement set, each at the revision the suite picks"
	}
	return "requirement set " + set + ", run at the " + set + " wire"
}

// Report writes a table per set (results in Sets order): one line per
// scenario (pass or FAIL, checks passed of those scored, whether the set
// scores it, and the expected failures that apply), then the set's totals
// "required N/M scenarios, not scored N/M, checks N/M".
func Report(w io.Writer, results []Result, expected Expected) error {
	var b strings.Builder
	for i := 0; i < len(results); {
		set := results[i].Set
		j := i
		for j < len(results) && results[j].Set == set {
			j++
		}
		fmt.Fprintf(&b, "== %s (%s)\n", set, setTitle(set))
		var req, reqPass, other, otherPass, checks, total int
		for _, r := range results[i:j] {
			passed, n := r.Score()
			checks += passed
			total += n
			verdict := "FAIL"
			if r.Passed() {
				verdict = "pass"
			}
			if r.Required {
				req++
				if r.Passed() {
					reqPass++
				}
			} else {
				other++
				if r.Passed() {
					otherPass++
				}
			}
			note := r.Note
			if r.Missing {
				note += "; no checks written"
			}
			if note != "" {
				note = "  [" + strings.TrimPrefix(note, "; ") + "]"
			}
			fmt.Fprintf(&b, "%s  %-42s %3d/%-3d checks%s\n", verdict, r.Scenario, passed, n, note)
			for _, e := range expectedFor(r, expected[set]) {
				fmt.Fprintf(&b, "        expected: %s\n", e)
			}
		}
		if set == SetOther {
			fmt.Fprintf(&b, "%d/%d scenarios, checks %d/%d\n\n", otherPass, other, checks, total)
		} else {
			fmt.Fprintf(&b, "required %d/%d scenarios, not scored %d/%d, checks %d/%d\n\n", reqPass, req, otherPass, other, checks, total)
		}
		i = j
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// expectedFor lists the entries of table that apply to r's failures.
func expectedFor(r Result, table map[string]string) []string {
	if r.Passed() {
		return nil
	}
	if reason, ok := table[r.Scenario]; ok {
		return []string{reason}
	}
	var out []string
	for _, id := range r.Failing() {
		for _, key := range []string{r.Scenario + ":" + id, anyScenario + ":" + id} {
			if reason, ok := table[key]; ok {
				out = append(out, id+": "+reason)
				break
			}
		}
	}
	return out
}
