// Package testbin builds this repository's helper binaries (the test MCP
// server, the fake model, the agent itself) once per test binary, for tests
// that run them as real processes.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// Builder builds packages of this module into a temporary directory. The
// zero value is not usable; use New. Safe for concurrent use.
type Builder struct {
	dir  string
	mu   sync.Mutex
	bins map[string]string
	// plain builds without the race detector whatever the test binary
	// runs with (see NewPlain).
	plain bool
}

// New returns a Builder writing into a fresh temporary directory. Call
// Cleanup when done (typically at the end of TestMain).
func New() (*Builder, error) {
	dir, err := os.MkdirTemp("", "acpgate-testbin-")
	if err != nil {
		return nil, err
	}
	return &Builder{dir: dir, bins: map[string]string{}}, nil
}

// NewPlain is New for binaries built without the race detector even when
// the test binary runs with it: for measuring a process's memory, which
// the detector's shadow memory multiplies.
func NewPlain() (*Builder, error) {
	b, err := New()
	if b != nil {
		b.plain = true
	}
	return b, err
}

// Build compiles the package at pkg (relative to the module root, e.g.
// "./internal/testsupport/fake/mcpserver") and returns the binary's path; when the test
// binary runs with the race detector, so does the built one (unless the
// Builder comes from NewPlain, or pkg is a fixture: see fixture). A
// binary of the right flavour in
// PrebuiltEnv's directory is used instead of building. Repeated calls
// return the first build.
func (b *Builder) Build(pkg string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p, ok := b.bins[pkg]; ok {
		return p, nil
	}
	race := b.race(pkg)
	if p, ok := prebuilt(pkg, race); ok {
		b.bins[pkg] = p
		return p, nil
	}
	out := filepath.Join(b.dir, filepath.Base(pkg))
	args := []string{"build", "-o", out}
	if race {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Dir = ModuleRoot()
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, msg)
	}
	b.bins[pkg] = out
	return out, nil
}

// race reports whether this Builder builds pkg with the race detector.
func (b *Builder) race(pkg string) bool { return raceEnabled && !b.plain && !fixture(pkg) }

// fixture reports whether pkg is a helper the tests run rather than code
// under test (a package under internal/testsupport/, the fakes among
// them): those are built without the race detector. A race-built process sleeps a second before it exits
// unless GORACE says otherwise, and acpgate gives the MCP servers it
// starts a baseline environment without GORACE, so every stdio server's
// close would wait that second out.
func fixture(pkg string) bool {
	p := path.Clean(pkg)
	return strings.HasPrefix(p, "internal/testsupport/")
}

// PrebuiltEnv names the environment variable pointing at a directory of
// binaries built before the tests (by `make test`): DIR/race/NAME built
// with -race, DIR/plain/NAME without, NAME being the package's last path
// element. Build uses one when it is there instead of building it again in
// every test binary that needs it; the directory's builder is responsible
// for keeping it current.
const PrebuiltEnv = "ACPGATE_TESTBIN"

// prebuilt returns the binary for pkg from PrebuiltEnv's directory, if
// it has one of the flavour asked for.
func prebuilt(pkg string, race bool) (string, bool) {
	dir := os.Getenv(PrebuiltEnv)
	if dir == "" {
		return "", false
	}
	flavour := "plain"
	if race {
		flavour = "race"
	}
	name := filepath.Base(pkg)
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	p := filepath.Join(dir, flavour, name)
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	return p, true
}

// Race reports whether this test binary runs with the race detector (and
// so, unless from NewPlain, the binaries it builds).
func Race() bool { return raceEnabled }

// Cleanup removes the built binaries.
func (b *Builder) Cleanup() { _ = os.RemoveAll(b.dir) }

// ModuleRoot is the repository's root directory.
func ModuleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// Main is a TestMain body: it builds each package of bins (module-relative
// path -> where to store the binary's path), runs the tests and removes the
// binaries. It does not return. The processes the tests start get
// GORACE=atexit_sleep_ms=0: a race-built binary otherwise sleeps a second
// before it exits, which every teardown would wait out. Under -short, a
// package whose bins include the acpgate binary runs no test at all (see
// SkipIfShort for the fast tier).
func Main(m interface{ Run() int }, bins map[string]*string) {
	if skipPackage(bins) {
		exitSkipped()
	}
	_ = os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	b, err := New()
	for pkg, dst := range bins {
		if err != nil {
			break
		}
		*dst, err = b.Build(pkg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		if b != nil {
			b.Cleanup()
		}
		os.Exit(1)
	}
	code := m.Run()
	b.Cleanup()
	os.Exit(code)
}
