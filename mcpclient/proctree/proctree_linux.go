package proctree

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"unsafe"

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
	buf := make([]byte, 1024)
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if p, ok := readStat(pid, buf); ok {
			t = append(t, p)
		}
	}
	return t, nil
}

// readProc reads /proc/PID/file into buf (growing it up to max bytes) with
// plain system calls: os.File's set-up (fstat, poller) would dominate the
// cost of a scan of every process.
func readProc(pid int, file string, buf []byte, max int) ([]byte, bool) {
	fd, err := syscall.Open("/proc/"+strconv.Itoa(pid)+"/"+file, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, false // gone meanwhile
	}
	defer syscall.Close(fd)
	n := 0
	for {
		if n == len(buf) {
			if len(buf) >= max {
				return buf[:n], true
			}
			buf = append(buf, make([]byte, len(buf))...)
		}
		k, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		if k == 0 {
			return buf[:n], true
		}
		n += k
	}
}

// Lookup returns pid's entry in the process table.
func Lookup(pid int) (Proc, bool) { return readStat(pid, make([]byte, 1024)) }

// readStat parses /proc/PID/stat, read into buf: pid (comm) state ppid
// pgrp session ... starttime is field 22; comm may contain spaces and
// parentheses.
func readStat(pid int, buf []byte) (Proc, bool) {
	stat, ok := readProc(pid, "stat", buf, 4096)
	if !ok {
		return Proc{}, false
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
	env, ok := readProc(pid, "environ", make([]byte, 4096), 1<<20)
	if !ok {
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

// IsSubreaper reports whether the calling process is a child subreaper
// (see BecomeSubreaper).
func IsSubreaper() bool {
	var on int32
	err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&on)), 0, 0, 0)
	return err == nil && on != 0
}

// OwnChildren returns the children of the calling process (see
// ChildrenOf).
func OwnChildren() ([]int, error) { return ChildrenOf(os.Getpid()) }

// ChildrenOf returns the children of pid, read from
// /proc/PID/task/*/children: far cheaper than a scan of every process.
func ChildrenOf(pid int) ([]int, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []int
	buf := make([]byte, 4096)
	for _, task := range tasks {
		b, ok := readProc(pid, "task/"+task.Name()+"/children", buf, 1<<20)
		if !ok {
			if _, err := os.Stat(dir + "/" + task.Name()); err == nil {
				return nil, ErrUnsupported // no children files (CONFIG_PROC_CHILDREN off)
			}
			continue // the thread is gone
		}
		for f := range bytes.FieldsSeq(b) {
			if child, err := strconv.Atoi(string(f)); err == nil {
				out = append(out, child)
			}
		}
	}
	return out, nil
}

// SetParentDeathSignal asks the kernel to send SIGKILL to the child of attr
// when the process that started it dies (Linux; a no-op elsewhere).
func SetParentDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }
