//go:build unix

package mcpclient

import (
	"errors"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/acpgate/acpgate/mcpclient/proctree"
)

// procAttr puts a stdio server in a process group of its own and, on
// Linux, has the kernel kill it if acpgate dies without stopping it.
func procAttr() *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: true}
	proctree.SetParentDeathSignal(attr)
	return attr
}

// tree is everything one stdio server started: its process group, its
// descendants and the processes carrying its instance token. Safe for
// concurrent use.
type tree struct {
	leader int
	token  string
	since  uint64 // the leader's start time: older processes are not members

	mu   sync.Mutex
	seen []int // non-leader members found so far, reaped by release
}

func newTree(p *os.Process, token string) *tree {
	return &tree{leader: p.Pid, token: token, since: proctree.StartOf(p.Pid)}
}

// members returns the live members of the tree, remembering them for
// release. ok is false when the process table cannot be read.
func (t *tree) members() (pids []int, ok bool) {
	pids, err := proctree.Find(t.leader, t.leader, t.token, t.since)
	if err != nil {
		return nil, false
	}
	t.mu.Lock()
	for _, pid := range pids {
		if pid != t.leader && !slices.Contains(t.seen, pid) {
			t.seen = append(t.seen, pid)
		}
	}
	t.mu.Unlock()
	return pids, true
}

// signal sends SIGTERM (or SIGKILL when kill is set) to the process group
// and to every member found by walking the process table first, so that a
// descendant that left the group (setsid) or was re-parented is stopped
// too.
func (t *tree) signal(kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	if !proctree.Killable(t.leader) {
		return
	}
	pids, _ := t.members()
	_ = syscall.Kill(-t.leader, sig)
	for _, pid := range pids {
		if proctree.Killable(pid) {
			_ = syscall.Kill(pid, sig)
		}
	}
	// Members found by earlier walks that the tree no longer reaches (one
	// that left the group, cleared its environment and lost its parent).
	t.mu.Lock()
	seen := slices.Clone(t.seen)
	t.mu.Unlock()
	for _, pid := range seen {
		if !slices.Contains(pids, pid) && proctree.Killable(pid) && proctree.Running(pid) {
			_ = syscall.Kill(pid, sig)
		}
	}
}

// alive reports whether any member of the tree is still live. Zombies do
// not count: kill(2) finds them until their parent reaps them, and PID 1
// does not reap on every system. leader is closed once the leader has been
// reaped.
func (t *tree) alive(leader <-chan struct{}) bool {
	select {
	case <-leader:
	default:
		return true // the leader itself is still running (or unreaped)
	}
	if t.quicklyGone() {
		return false
	}
	pids, ok := t.members()
	if !ok {
		err := syscall.Kill(-t.leader, 0)
		return !errors.Is(err, syscall.ESRCH)
	}
	if len(pids) > 0 || t.seenAlive() {
		return true
	}
	// A process in the middle of execve shows an empty environment for a
	// moment, so a token carrier can be missed by one scan: a second scan
	// a little later confirms that the tree is gone.
	time.Sleep(2 * time.Millisecond)
	pids, _ = t.members()
	return len(pids) > 0
}

// quicklyGone is the common case's check, without a scan of every
// process: the group is empty (not even a zombie), nothing found earlier
// still runs, and — acpgate being a child subreaper, so that orphaned
// descendants become its own children — none of its children carries the
// server's token. False means "scan to know".
func (t *tree) quicklyGone() bool {
	if !proctree.IsSubreaper() || !errors.Is(syscall.Kill(-t.leader, 0), syscall.ESRCH) || t.seenAlive() {
		return false
	}
	kids, err := proctree.OwnChildren()
	if err != nil {
		return false
	}
	for _, pid := range kids {
		if proctree.HasToken(pid, t.token, t.since) {
			return false
		}
	}
	return true
}

// seenAlive reports whether a member found by an earlier scan still runs.
func (t *tree) seenAlive() bool {
	t.mu.Lock()
	seen := slices.Clone(t.seen)
	t.mu.Unlock()
	for _, pid := range seen {
		if proctree.Running(pid) {
			return true
		}
	}
	return false
}

// release reaps the members that were re-parented to acpgate (it is a
// child subreaper) and have exited since. The leader is exec.Cmd's.
func (t *tree) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, pid := range t.seen {
		proctree.Reap(pid)
	}
	t.seen = nil
}
