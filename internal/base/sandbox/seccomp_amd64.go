//go:build linux && amd64

package sandbox

import "golang.org/x/sys/unix"

// seccompArch is what the socket filter checks on amd64 (x32 system
// calls carry bit 30 of the number).
var seccompArch = archCalls{audit: unix.AUDIT_ARCH_X86_64, x32: 0x40000000, socket: unix.SYS_SOCKET, socketpair: unix.SYS_SOCKETPAIR, ioUringSetup: unix.SYS_IO_URING_SETUP}
