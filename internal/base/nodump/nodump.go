// Package nodump keeps this process's memory and environment from other
// processes of the same user, its own children included.
//
// On Linux, Protect clears the process's "dumpable" attribute
// (prctl(PR_SET_DUMPABLE, 0)): the kernel then makes /proc/<pid>/environ,
// /proc/<pid>/mem, /proc/<pid>/maps and the like owned by root and refuses
// them, and ptrace attachment, to any process without CAP_SYS_PTRACE, so an
// MCP server or a command acpgate starts (running as the same user) can no
// longer read the API keys in acpgate's environment. It also turns off
// core dumps. The attribute is per process and survives until execve,
// which resets it for the new program: children are dumpable as usual.
//
// What it does not cover: a process running as root (or with
// CAP_SYS_PTRACE) can still read everything; the Yama ptrace_scope
// setting is not consulted; memory is not encrypted or locked. On macOS
// and Windows there is no equivalent that a process can apply to itself
// against its own user's processes, and Protect returns ErrUnsupported.
package nodump

import "errors"

// ErrUnsupported is returned by Protect where the platform offers no way
// to do what it does.
var ErrUnsupported = errors.New("nodump: not supported on this system")

// Protect makes the calling process undumpable (see the package doc). It
// is safe to call more than once, from any goroutine.
func Protect() error { return protect() }

// Protected reports whether the calling process is undumpable; false
// where the platform has no such attribute.
func Protected() bool { return protected() }
