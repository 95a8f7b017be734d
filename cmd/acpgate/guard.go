package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/acpgate/acpgate/mcpclient/proctree"
	"github.com/acpgate/acpgate/mcpclient/watchdog"
)

// guard is what keeps the no-orphan promise beyond acpgate's own
// teardown: SIGPIPE ignored (a client that closed its pipes ends the
// connection through the normal shutdown instead of killing acpgate), a
// child subreaper (descendants that escape a server's process group stay
// in acpgate's tree), and a watchdog process that stops every recorded
// server if acpgate dies without stopping them.
type guard struct {
	wd *watchdog.Watchdog // nil where there is none
}

// startGuard sets the process up; failures degrade to the process group
// teardown alone and are logged.
func startGuard(logger *slog.Logger) *guard {
	signal.Ignore(syscall.SIGPIPE)
	if err := proctree.BecomeSubreaper(); err != nil && !errors.Is(err, proctree.ErrUnsupported) {
		logger.Warn("cannot become a child subreaper; escaped server descendants are found by their token only", "err", err)
	}
	g := &guard{}
	exe, err := os.Executable()
	if err == nil {
		g.wd, err = watchdog.Start([]string{exe, watchdogArg}, os.Stderr)
	}
	switch {
	case errors.Is(err, watchdog.ErrUnsupported):
	case err != nil:
		logger.Warn("no watchdog: servers may outlive acpgate if it is killed", "err", err)
	}
	return g
}

// close runs after every server was stopped. A child of acpgate still
// running now is a server's descendant that left its group, dropped its
// token and was adopted by acpgate (a child subreaper): it is killed with
// its own descendants. Then the watchdog is stopped.
func (g *guard) close(logger *slog.Logger) {
	if kids, err := proctree.OwnChildren(); err == nil {
		var strays []int
		for _, pid := range kids {
			if g.wd == nil || pid != g.wd.Pid() {
				strays = append(strays, pid)
			}
		}
		if len(strays) > 0 {
			logger.Warn("stopping processes left behind by MCP servers", "pids", strays)
			proctree.KillTrees(strays, nil, 2*time.Second)
			for _, pid := range strays {
				proctree.Reap(pid)
			}
		}
	}
	if g.wd == nil {
		return
	}
	if err := g.wd.Close(); err != nil {
		logger.Warn("watchdog", "err", err)
	}
}

// runWatchdog is the body of the watchdog process: its stdin is the pipe
// from acpgate. Terminal signals are for acpgate, not for it.
func runWatchdog() int {
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGPIPE)
	stopped, err := watchdog.Run(os.Stdin, os.Getppid())
	for _, s := range stopped {
		fmt.Fprintf(os.Stderr, "acpgate watchdog: acpgate died; stopped MCP server %s\n", s)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "acpgate watchdog:", err)
		return 1
	}
	return 0
}
