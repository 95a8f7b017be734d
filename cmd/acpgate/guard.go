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
// The watchdog is started in the background, off the path of the
// client's first request; guard implements mcpclient.Guard, and records
// that arrive before the watchdog is up are queued and handed to it, in
// order, as soon as it is. (A server started in that window and acpgate
// killed before the watchdog is up is the one case it cannot cover.) Safe
// for concurrent use.
type guard struct {
	up chan struct{} // closed once the watchdog has started, or failed to

	mu    sync.Mutex
	wd    *watchdog.Watchdog      // nil until up, or where there is none
	to    mcpclient.Guard         // where records go once up: wd, or nil
	queue []func(mcpclient.Guard) // records that came before up
}

var _ mcpclient.Guard = (*guard)(nil)

func newGuard() *guard { return &guard{up: make(chan struct{})} }

// startGuard sets the process up and starts the watchdog in the
// background; failures degrade to the process group teardown alone and
// are logged.
func startGuard(logger *slog.Logger) *guard {
	signal.Ignore(syscall.SIGPIPE)
	if err := proctree.BecomeSubreaper(); err != nil && !errors.Is(err, proctree.ErrUnsupported) {
		logger.Warn("cannot become a child subreaper; escaped server descendants are found by their token only", "err", err)
	}
	g := newGuard()
	go g.startWatchdog(logger)
	return g
}

// startWatchdog starts the watchdog and makes the guard ready.
func (g *guard) startWatchdog(logger *slog.Logger) {
	exe, err := os.Executable()
	var wd *watchdog.Watchdog
	if err == nil {
		wd, err = watchdog.Start([]string{exe, watchdogArg}, os.Stderr)
	}
	switch {
	case errors.Is(err, watchdog.ErrUnsupported):
	case err != nil:
		logger.Warn("no watchdog: servers may outlive acpgate if it is killed", "err", err)
	}
	if wd == nil {
		g.ready(nil, nil)
		return
	}
	g.ready(wd, wd)
}

// ready hands the queued records, in order, to to (nil: there is no
// watchdog; they are dropped), sends every later one there too and
// closes up.
func (g *guard) ready(wd *watchdog.Watchdog, to mcpclient.Guard) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.wd, g.to = wd, to
	if to != nil {
		for _, rec := range g.queue {
			rec(to)
		}
	}
	g.queue = nil
	close(g.up)
}

// Watch implements mcpclient.Guard.
func (g *guard) Watch(pgid int, token string) {
	g.record(func(to mcpclient.Guard) { to.Watch(pgid, token) })
}

// Unwatch implements mcpclient.Guard.
func (g *guard) Unwatch(pgid int) {
	g.record(func(to mcpclient.Guard) { to.Unwatch(pgid) })
}

// record hands rec to the watchdog, or queues it until the watchdog is up.
func (g *guard) record(rec func(mcpclient.Guard)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.up:
		if g.to != nil {
			rec(g.to)
		}
	default:
		g.queue = append(g.queue, rec)
	}
}

// close runs after every server was stopped. A child of acpgate still
// running now is a server's descendant that left its group, dropped its
// token and was adopted by acpgate (a child subreaper): it is killed with
// its own descendants. Then the watchdog is stopped.
func (g *guard) close(logger *slog.Logger) {
	<-g.up
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
