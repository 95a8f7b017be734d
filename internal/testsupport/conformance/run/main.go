// Command run is `make conformance`: it builds acpgate and the harness,
// runs the client scenarios of the pinned MCP conformance suite against
// acpgate (both frozen requirement sets, each at its wire revision, and
// the scenarios in neither) and prints a table per set. It exits 1 when
// the results differ from conformance.ExpectedFailures (something fails
// without being listed, or a listed entry passes), 2 when the suite cannot
// run.
//
// Usage (from the repository root, after `make npm`):
//
//	go run ./internal/testsupport/conformance/run [-keep DIR] [-acpgate BIN] [-v]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/acpgate/acpgate/internal/testsupport/conformance"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

func main() {
	keep := flag.String("keep", "", "write the suite's per-scenario output (checks, harness and acpgate logs) to this `dir` and keep it")
	verbose := flag.Bool("v", false, "show the suite's own output")
	agent := flag.String("acpgate", "", "test this acpgate `binary` instead of building ./cmd/acpgate")
	flag.Parse()
	os.Exit(run(*keep, *agent, *verbose))
}

func run(keep, agent string, verbose bool) int {
	out := keep
	if out == "" {
		dir, err := os.MkdirTemp("", "acpgate-conformance-out-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		defer os.RemoveAll(dir)
		out = dir
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	b, err := testbin.New()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer b.Cleanup()
	if agent == "" {
		agent, err = b.Build("./cmd/acpgate")
	}
	if err == nil {
		var harness string
		harness, err = b.Build("./internal/testsupport/conformance/harness")
		if err == nil {
			return report(agent, harness, out, verbose)
		}
	}
	fmt.Fprintln(os.Stderr, err)
	return 2
}

// report runs the suite and prints the results and any mismatch with the
// expected failures.
func report(agent, harness, out string, verbose bool) int {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	opts := conformance.Options{
		Dir:     filepath.Join(testbin.ModuleRoot(), filepath.FromSlash(conformance.NPMDir)),
		Harness: harness, Acpgate: agent, OutDir: out,
	}
	if verbose {
		opts.Log = os.Stderr
	}
	results, err := conformance.Run(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	expected := conformance.ExpectedFailures()
	if err := conformance.Report(os.Stdout, results, expected); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	mismatches := conformance.Mismatches(results, expected)
	for _, m := range mismatches {
		fmt.Printf("MISMATCH %s %s %s\n", m.Set, m.Scenario, m.Problem)
	}
	if len(mismatches) > 0 {
		return 1
	}
	return 0
}
