package testbin

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// The fast tier (go test -short ./...) leaves out the tests that drive
// the acpgate binary end to end, those that run Node packages (the
// reference MCP server, the TypeScript ACP client, the conformance suite)
// and the conformance suite itself; make test runs everything. The
// decision is made here, in one place: Main skips a whole package whose
// tests run the agent binary, and SkipIfShort skips one test.

// agentPkg is the package whose binary marks a test package as end to end.
const agentPkg = "./cmd/acpgate"

// short reports whether the test binary runs with -short. It parses the
// command line first when TestMain has not (testing.Short panics before
// the flags are parsed); m.Run does not parse them again.
func short() bool {
	if !flag.Parsed() {
		flag.Parse()
	}
	return testing.Short()
}

// skipPackage reports, and says on stdout, whether Main should run none
// of a package's tests: under -short, when they start the acpgate binary
// (bins names agentPkg).
func skipPackage(bins map[string]*string) bool {
	if _, ok := bins[agentPkg]; !ok || !short() {
		return false
	}
	fmt.Printf("testbin: -short: skipping this package's tests, which run the %s binary end to end\n", agentPkg)
	return true
}

// SkipIfShort skips t under go test -short, saying why: what names what
// the test needs that the fast tier leaves out (e.g. "runs the reference
// MCP server on Node").
func SkipIfShort(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: %s", what)
	}
}

// exitSkipped ends a test binary whose package skipPackage skipped.
func exitSkipped() { os.Exit(0) }
