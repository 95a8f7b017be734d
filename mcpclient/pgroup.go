package mcpclient

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// groupAlive reports whether process group pgid still has a live member.
// Zombies do not count: kill(2) still finds them until their new parent
// reaps them, so on Linux /proc is consulted to tell them apart. leader is
// closed once the group leader has been reaped.
func groupAlive(pgid int, leader <-chan struct{}) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	select {
	case <-leader:
	default:
		return true // the leader itself is still running (or unreaped)
	}
	live, ok := procGroupHasLive(pgid)
	return !ok || live
}

// procGroupHasLive scans /proc for a non-zombie process in group pgid. ok is
// false when /proc cannot be read.
func procGroupHasLive(pgid int) (live, ok bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false, false
	}
	want := []byte(strconv.Itoa(pgid))
	for _, e := range entries {
		name := e.Name()
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		stat, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := bytes.Fields(stat[i+1:])
		if len(fields) < 3 || !bytes.Equal(fields[2], want) {
			continue
		}
		if state := fields[0]; len(state) == 1 && (state[0] == 'Z' || state[0] == 'X') {
			continue
		}
		return true, true
	}
	return false, true
}
