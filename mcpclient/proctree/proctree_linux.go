package proctree

import (
	"bytes"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// List reads the process table from /proc.
func List() (Table, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	t := make(Table, 0, len(names))
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if p, ok := readStat(pid); ok {
			t = append(t, p)
		}
	}
	return t, nil
}

// Running reports whether pid is a live process (not a zombie).
func Running(pid int) bool {
	p, ok := readStat(pid)
	return ok && !p.Zombie
}

// StartOf returns the start time of pid (see Proc.Start), or 0.
func StartOf(pid int) uint64 {
	p, _ := readStat(pid)
	return p.Start
}

// readStat parses /proc/PID/stat: pid (comm) state ppid pgrp session ...
// starttime is field 22; comm may contain spaces and parentheses.
func readStat(pid int) (Proc, bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, false // gone meanwhile
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return Proc{}, false
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 20 {
		return Proc{}, false
	}
	ppid, _ := strconv.Atoi(string(f[1]))
	pgid, _ := strconv.Atoi(string(f[2]))
	start, _ := strconv.ParseUint(string(f[19]), 10, 64)
	state := f[0]
	return Proc{PID: pid, PPID: ppid, PGID: pgid, Start: start,
		Zombie: len(state) == 1 && (state[0] == 'Z' || state[0] == 'X')}, true
}

// hasToken reports whether pid's environment holds EnvName=token.
func hasToken(pid int, token string) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	want := []byte(EnvName + "=" + token)
	for kv := range bytes.SplitSeq(env, []byte{0}) {
		if bytes.Equal(kv, want) {
			return true
		}
	}
	return false
}

// BecomeSubreaper makes the calling process a child subreaper
// (PR_SET_CHILD_SUBREAPER): descendants orphaned by their parent, such as
// a daemonising wrapper's grandchild, are re-parented to it instead of to
// init, so they stay in its tree. It is a property of the whole process:
// call it once, from main.
func BecomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// SetParentDeathSignal asks the kernel to send SIGKILL to the child of attr
// when the process that started it dies (Linux; a no-op elsewhere).
func SetParentDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }
