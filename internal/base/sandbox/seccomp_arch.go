//go:build linux

package sandbox

// archCalls is what the socket filter needs to know of an architecture:
// its audit value and the numbers of the system calls it checks.
type archCalls struct {
	audit, x32                       uint32
	socket, socketpair, ioUringSetup uint32
}
