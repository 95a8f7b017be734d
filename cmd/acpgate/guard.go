package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/acpgate/acpgate/mcpclient"
	"github.com/acpgate/acpgate/mcpclient/proctree"
	"github.com/acpgate/acpgate/mcpclient/watchdog"
)

// guard is what keeps the no-orphan promise beyond acpgate's own
// teardown: SIGPIPE ignored (a client that closed its pipes ends the
// connection through the normal shutdown instead of killing acpgate), a
// child subreaper (descendants that escape a server's process group stay
// in acpgate's tree), and a watchdog process that stops every recorded
// server if acpgate dies without stopping them.
//
// The watchdog is started by the first record, i.e. when the first MCP
// server has started: a client that opens no session with servers never
// pays for it, and process start → initialize does not compete with it
// for the CPU. Starting it is a fork and exec (the records are buffered
// in its pipe even before it runs), so every server is recorded before
// its Watch returns. guard implements mcpclient.Guard and is safe for
// concurrent use.
type guard struct {
	start func() (*watchdog.Watchdog, error) // starts the watchdog
	// subreaper is set when this process became a child subreaper: only
	// then are its remaining children at close adopted server descendants
	// (a guard in a test binary must not sweep the test's children).
	subreaper bool

	mu      sync.Mutex
	started bool               // start was called, or close stopped it being
	wd      *watchdog.Watchdog // nil before start, or where there is none
}

var _ mcpclient.Guard = (*guard)(nil)

// startGuard sets the process up (SIGPIPE, subreaper) and returns the
// guard that starts the watchdog on its first record; a failure to start
// it degrades to the process group teardown alone and is logged.
func startGuard(logger *slog.Logger) *guard {
	signal.Ignore(syscall.SIGPIPE)
	err := proctree.BecomeSubreaper()
	if err != nil && !errors.Is(err, proctree.ErrUnsupported) {
		logger.Warn("cannot become a child subreaper; escaped server descendants are found by their token only", "err", err)
	}
	return &guard{subreaper: err == nil, start: func() (*watchdog.Watchdog, error) {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		wd, err := watchdog.Start([]string{exe, watchdogArg}, os.Stderr)
		switch {
		case errors.Is(err, watchdog.ErrUnsupported):
			return nil, nil
		case err != nil:
			logger.Warn("no watchdog: servers may outlive acpgate if it is killed", "err", err)
		}
		return wd, err
	}}
}

// Watch implements mcpclient.Guard.
func (g *guard) Watch(pgid int, token string) {
	if wd := g.watchdog(); wd != nil {
		wd.Watch(pgid, token)
	}
}

// Unwatch implements mcpclient.Guard.
func (g *guard) Unwatch(pgid int) {
	if wd := g.watchdog(); wd != nil {
		wd.Unwatch(pgid)
	}
}

// watchdog returns the watchdog, starting it on the first call; nil where
// there is none.
func (g *guard) watchdog() *watchdog.Watchdog {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.started {
		g.started = true
		g.wd, _ = g.start() // logged by start
	}
	return g.wd
}

// close runs after every server was stopped. A child of acpgate still
// running now is a server's descendant that left its group, dropped its
// token and was adopted by acpgate (a child subreaper): it is killed with
// its own descendants — only where acpgate is a subreaper. Then the
// watchdog is stopped.
func (g *guard) close(logger *slog.Logger) {
	g.mu.Lock()
	g.started = true // no watchdog is started from here on
	wd := g.wd
	g.mu.Unlock()
	if g.subreaper {
		sweepAdopted(logger, wd)
	}
	if wd == nil {
		return
	}
	if err := wd.Close(); err != nil {
		logger.Warn("watchdog", "err", err)
	}
}

// sweepAdopted kills this process's children other than the watchdog wd,
// with their descendants, and reaps them.
func sweepAdopted(logger *slog.Logger, wd *watchdog.Watchdog) {
	kids, err := proctree.OwnChildren()
	if err != nil {
		return
	}
	var strays []int
	for _, pid := range kids {
		if wd == nil || pid != wd.Pid() {
			strays = append(strays, pid)
		}
	}
	if len(strays) == 0 {
		return
	}
	logger.Warn("stopping processes left behind by MCP servers", "pids", strays)
	proctree.KillTrees(strays, nil, 2*time.Second)
	for _, pid := range strays {
		proctree.Reap(pid)
	}
}

// runWatchdog is the body of the watchdog process: its stdin is the pipe
// from acpgate. Terminal signals are for acpgate, not for it. Its
// environment may ask for a snapshot log (watchdog.SnapshotLogEnv); one
// that cannot be written is reported and done without.
func runWatchdog() int {
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGPIPE)
	opts, err := watchdog.EnvOptions()
	if err != nil {
		fmt.Fprintln(os.Stderr, "acpgate watchdog:", err)
	}
	stopped, err := watchdog.Run(os.Stdin, watchdog.Parent(), opts)
	for _, s := range stopped {
		fmt.Fprintf(os.Stderr, "acpgate watchdog: acpgate died; stopped MCP server %s\n", s)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "acpgate watchdog:", err)
		return 1
	}
	return 0
}
