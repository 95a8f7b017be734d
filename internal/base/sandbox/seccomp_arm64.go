//go:build linux && arm64

package sandbox

import "golang.org/x/sys/unix"

// seccompArch is what the socket filter checks on arm64.
var seccompArch = archCalls{audit: unix.AUDIT_ARCH_AARCH64, socket: unix.SYS_SOCKET, socketpair: unix.SYS_SOCKETPAIR, ioUringSetup: unix.SYS_IO_URING_SETUP}
