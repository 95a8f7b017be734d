//go:build !unix

package proctree

import "time"

// KillTrees reports false: there are no process trees to walk here (on
// Windows job objects stop what a server started).
func KillTrees([]int, map[int]uint64, time.Duration) bool { return false }
