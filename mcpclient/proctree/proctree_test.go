package proctree_test

import (
	"slices"
	"testing"

	"github.com/acpgate/acpgate/mcpclient/proctree"
)

func TestMembers(t *testing.T) {
	// 100 is the server (its own group); 101 its child in the group; 102 a
	// child that called setsid (group 102) with a child 103; 104 a zombie
	// in the group; 200 an unrelated process; 300 a process in group 100
	// whose parent is gone (re-parented to 1).
	table := proctree.Table{
		{PID: 1, PPID: 0, PGID: 1},
		{PID: 100, PPID: 50, PGID: 100},
		{PID: 101, PPID: 100, PGID: 100},
		{PID: 102, PPID: 100, PGID: 102},
		{PID: 103, PPID: 102, PGID: 102},
		{PID: 104, PPID: 100, PGID: 100, Zombie: true},
		{PID: 200, PPID: 1, PGID: 200},
		{PID: 300, PPID: 1, PGID: 100},
	}
	got := table.Members(100, 100, "", 0)
	if want := []int{100, 101, 102, 103, 300}; !slices.Equal(got, want) {
		t.Fatalf("Members = %v, want %v", got, want)
	}
	// With the leader gone, what left the group is no longer reachable
	// through the tree (only its instance token finds it): the group is.
	got = table[2:].Members(100, 100, "", 0)
	if want := []int{101, 300}; !slices.Equal(got, want) {
		t.Fatalf("without the leader: Members = %v, want %v", got, want)
	}
}
