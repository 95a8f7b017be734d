package loopback

import (
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// rawDial is Dial's system-call part: mptcp, sctp, icmp (to an IPv4
// addr) and unix.
func rawDial(proto, addr string) error {
	if proto == "unix" {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			return os.NewSyscallError("socketpair", err)
		}
		unix.Close(fds[0])
		return unix.Close(fds[1])
	}
	typ, protocol := unix.SOCK_STREAM, unix.IPPROTO_MPTCP
	switch proto {
	case "sctp":
		protocol = unix.IPPROTO_SCTP
	case "icmp":
		typ, protocol = unix.SOCK_DGRAM, unix.IPPROTO_ICMP
	}
	ap, err := net.ResolveTCPAddr("tcp4", addr)
	if err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_INET, typ|unix.SOCK_CLOEXEC, protocol)
	if err != nil {
		return os.NewSyscallError("socket", err)
	}
	defer unix.Close(fd)
	sa := &unix.SockaddrInet4{Port: ap.Port}
	copy(sa.Addr[:], ap.IP.To4())
	return os.NewSyscallError("connect", unix.Connect(fd, sa))
}
