//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock (up to ABI 7) restricts classic TCP only: a UDP datagram, an
// MPTCP or SCTP connection, a raw or a vsock socket pass it. So where a
// policy restricts the network, the launcher also installs a seccomp
// filter on socket(2) and socketpair(2), by address family, type and
// protocol (the only arguments a filter can see: it cannot read a
// socket address, so it cannot say which port or host):
//
//   - network none: only AF_UNIX and AF_NETLINK sockets (local IPC and
//     the kernel's interface listing); every other family is refused;
//   - network {"connect": [ports]}: AF_UNIX, AF_NETLINK, and AF_INET or
//     AF_INET6 sockets that are plain TCP (whose connects Landlock
//     checks against the ports) or plain UDP (name resolution needs it;
//     its destinations are not restricted); MPTCP, SCTP, raw and every
//     other family are refused.
//
// io_uring_setup(2) is refused too: io_uring's socket operation does not
// pass through seccomp. Refusals fail with EACCES, as Landlock's do. A
// system call of another ABI than the launcher's (i386 or x32 from an
// amd64 process, arm32 from arm64), whose numbers the filter does not
// check, is refused (x32) or kills the process (another architecture).
const refusedErrno = uint32(unix.EACCES)

// seccomp_data offsets (linux/seccomp.h): nr, arch, then the arguments
// as 64-bit words; the filter reads their low halves (little-endian
// arches), which is what the kernel's int parameters are.
const (
	offNr    = 0
	offArch  = 4
	offArg0  = 16
	offArg1  = 24
	offArg2  = 32
	typeMask = 0xf // SOCK_NONBLOCK and SOCK_CLOEXEC share the type argument
)

// bpf is a small assembler for classic BPF with symbolic jump targets.
type bpf struct {
	prog   []unix.SockFilter
	labels map[string]int
	fixups []fixup
}

type fixup struct {
	at     int
	jt, jf string
}

func (b *bpf) label(name string) { b.labels[name] = len(b.prog) }

func (b *bpf) load(off uint32) {
	b.prog = append(b.prog, unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off})
}

func (b *bpf) and(k uint32) {
	b.prog = append(b.prog, unix.SockFilter{Code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, K: k})
}

// jump compares the accumulator with k (jeq, or jset when set) and goes
// to jt when true, jf when false ("" is the next instruction).
func (b *bpf) jump(op uint16, k uint32, jt, jf string) {
	b.fixups = append(b.fixups, fixup{at: len(b.prog), jt: jt, jf: jf})
	b.prog = append(b.prog, unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, K: k})
}

func (b *bpf) ret(k uint32) {
	b.prog = append(b.prog, unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k})
}

// assemble resolves the jumps (forward only, at most 255 instructions).
func (b *bpf) assemble() ([]unix.SockFilter, error) {
	for _, f := range b.fixups {
		for _, j := range []struct {
			name string
			off  *uint8
		}{{f.jt, &b.prog[f.at].Jt}, {f.jf, &b.prog[f.at].Jf}} {
			if j.name == "" {
				continue
			}
			to, ok := b.labels[j.name]
			if !ok || to <= f.at || to-f.at-1 > 255 {
				return nil, fmt.Errorf("seccomp filter: bad jump to %q", j.name)
			}
			*j.off = uint8(to - f.at - 1)
		}
	}
	return b.prog, nil
}

// socketFilter is the filter for a restricted network (NetNone or
// NetPorts) on the launcher's architecture.
func socketFilter(net Net) ([]unix.SockFilter, error) {
	if seccompArch.audit == 0 {
		return nil, fmt.Errorf("%w: no seccomp filter for this architecture", ErrUnavailable)
	}
	b := &bpf{labels: map[string]int{}}
	b.load(offArch)
	b.jump(unix.BPF_JEQ, seccompArch.audit, "", "kill")
	b.load(offNr)
	if seccompArch.x32 != 0 {
		b.jump(unix.BPF_JSET, seccompArch.x32, "deny", "")
	}
	b.jump(unix.BPF_JEQ, seccompArch.ioUringSetup, "deny", "")
	b.jump(unix.BPF_JEQ, seccompArch.socket, "socket", "")
	b.jump(unix.BPF_JEQ, seccompArch.socketpair, "socket", "allow")
	b.label("socket")
	b.load(offArg0)
	b.jump(unix.BPF_JEQ, unix.AF_UNIX, "allow", "")
	b.jump(unix.BPF_JEQ, unix.AF_NETLINK, "allow", "")
	if net == NetPorts {
		b.jump(unix.BPF_JEQ, unix.AF_INET, "inet", "")
		b.jump(unix.BPF_JEQ, unix.AF_INET6, "inet", "deny")
		b.label("inet")
		b.load(offArg1)
		b.and(typeMask)
		b.jump(unix.BPF_JEQ, unix.SOCK_STREAM, "stream", "")
		b.jump(unix.BPF_JEQ, unix.SOCK_DGRAM, "dgram", "deny")
		b.label("stream")
		b.load(offArg2)
		b.jump(unix.BPF_JEQ, 0, "allow", "")
		b.jump(unix.BPF_JEQ, unix.IPPROTO_TCP, "allow", "deny")
		b.label("dgram")
		b.load(offArg2)
		b.jump(unix.BPF_JEQ, 0, "allow", "")
		b.jump(unix.BPF_JEQ, unix.IPPROTO_UDP, "allow", "deny")
	}
	b.label("deny")
	b.ret(unix.SECCOMP_RET_ERRNO | refusedErrno)
	b.label("allow")
	b.ret(unix.SECCOMP_RET_ALLOW)
	b.label("kill")
	b.ret(unix.SECCOMP_RET_KILL_PROCESS)
	return b.assemble()
}

// installSocketFilter installs socketFilter(net) on the calling thread,
// which must already have no_new_privs (the launcher sets it for
// Landlock).
func installSocketFilter(net Net) error {
	prog, err := socketFilter(net)
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fmt.Errorf("seccomp filter: %w", err)
	}
	return nil
}

// seccompSupport says why the socket filter cannot be installed here, or
// "" when it can.
func seccompSupport() string {
	if seccompArch.audit == 0 {
		return "acpgate has no seccomp filter for this architecture"
	}
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
		if errors.Is(err, unix.EINVAL) {
			return "this kernel has no seccomp"
		}
		return fmt.Sprintf("seccomp: %v", err)
	}
	return ""
}
