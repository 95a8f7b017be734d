// Package proctree finds every process that belongs to one MCP server, so
// that stopping the server stops all of it: the processes of its process
// group, its descendants (found by walking the process table, not only the
// group, because a descendant can leave the group with setsid), and every
// process that carries the server's instance token in its environment
// (found even after a daemonising wrapper has re-parented it).
//
// The process table is read from /proc on Linux and with sysctl on macOS;
// environments (the token) can be read on Linux only. Elsewhere List
// returns ErrUnsupported and callers fall back to the process group alone.
//
// Every function is safe for concurrent use; nothing is cached.
package proctree

import (
	"errors"
	"os"
	"slices"

	"github.com/google/uuid"
)

// EnvName is the environment variable that carries a server instance's
// token. Children inherit it, so it marks the whole tree of the server.
const EnvName = "ACPGATE_MCP_INSTANCE"

// ErrUnsupported is returned where the process table cannot be read.
var ErrUnsupported = errors.New("proctree: not supported on this system")

// NewToken returns a fresh instance token.
func NewToken() string { return uuid.NewString() }

// Proc is one process of the process table.
type Proc struct {
	PID, PPID, PGID int
	// Zombie is set for a process that has exited but was not reaped yet:
	// it can no longer run and signals do nothing to it.
	Zombie bool
	// Start is when the process started, in the system's own unit (clock
	// ticks since boot on Linux); 0 when unknown. Only comparisons between
	// Start values of one system are meaningful.
	Start uint64
}

// Table is a snapshot of the process table.
type Table []Proc

// Members returns the live (non-zombie) processes of one server: the
// process group pgid, the descendants of root, the processes that carry
// token in their environment (where environments can be read; only those
// started at or after since are examined, which keeps the scan cheap), and
// the descendants of all of those. root itself is included while alive.
// The result is sorted and has no duplicates.
func (t Table) Members(root, pgid int, token string, since uint64) []int {
	children := map[int][]int{}
	for _, p := range t {
		children[p.PPID] = append(children[p.PPID], p.PID)
	}
	byPID := make(map[int]Proc, len(t))
	for _, p := range t {
		byPID[p.PID] = p
	}
	in := map[int]bool{}
	var queue []int
	add := func(pid int) {
		if !in[pid] {
			in[pid] = true
			queue = append(queue, pid)
		}
	}
	if _, ok := byPID[root]; ok && root > 0 {
		add(root)
	}
	for _, p := range t {
		if pgid > 0 && p.PGID == pgid {
			add(p.PID)
		} else if token != "" && p.Start >= since && !p.Zombie && hasToken(p.PID, token) {
			add(p.PID)
		}
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			add(c)
		}
	}
	out := make([]int, 0, len(in))
	for pid := range in {
		if !byPID[pid].Zombie {
			out = append(out, pid)
		}
	}
	slices.Sort(out)
	return out
}

// Killable reports whether pid may be signalled by a teardown at all: not
// the caller itself, nor init (a pid of 1 or less would also address
// every process or the caller's own group in kill(2)).
func Killable(pid int) bool { return pid > 1 && pid != os.Getpid() }

// Running reports whether pid is a live process (not a zombie).
func Running(pid int) bool {
	p, ok := Lookup(pid)
	return ok && !p.Zombie
}

// StartOf returns the start time of pid (see Proc.Start), or 0.
func StartOf(pid int) uint64 {
	p, _ := Lookup(pid)
	return p.Start
}

// HasToken reports whether pid, a live process started at or after since,
// carries token in its environment.
func HasToken(pid int, token string, since uint64) bool {
	p, ok := Lookup(pid)
	return ok && !p.Zombie && p.Start >= since && hasToken(pid, token)
}

// Find returns the live members of one server (see Table.Members) from a
// fresh snapshot of the process table.
func Find(root, pgid int, token string, since uint64) ([]int, error) {
	t, err := List()
	if err != nil {
		return nil, err
	}
	return t.Members(root, pgid, token, since), nil
}
