//go:build unix

package proctree

import (
	"syscall"
	"time"
)

// KillTrees sends SIGKILL to each of roots and to all their descendants,
// walking the process table again after every round, until none is left
// or bound has passed. A root whose start time differs from the one in
// starts (when given) is a reused pid and is left alone. It reports
// whether everything is gone. Pid 1 and the caller itself are never
// signalled (see Killable).
func KillTrees(roots []int, starts map[int]uint64, bound time.Duration) bool {
	deadline := time.Now().Add(bound)
	live := roots
	for {
		t, err := List()
		if err != nil {
			return false
		}
		var next []int
		for _, root := range live {
			if want, ok := starts[root]; ok && StartOf(root) != want {
				continue
			}
			if !Killable(root) {
				continue
			}
			members := t.Members(root, 0, "", 0)
			for _, pid := range members {
				if Killable(pid) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			if len(members) > 0 {
				next = append(next, root)
			}
		}
		if len(next) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		live = next
		time.Sleep(5 * time.Millisecond)
	}
}
