//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// protoDial reaches addr (host:port on 127.0.0.1) over proto: "tcp" (the
// default), "udp" (sends "ping"), "mptcp" or "sctp" (a raw socket of
// that protocol, connected), "raw-icmp" (an unprivileged ICMP socket),
// "unix" (a socketpair: local, always allowed).
func protoDial(proto, addr string) error {
	switch proto {
	case "", "tcp":
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return err
		}
		return c.Close()
	case "udp":
		c, err := net.Dial("udp", addr)
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.Write([]byte("ping"))
		return err
	case "unix":
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			return os.NewSyscallError("socketpair", err)
		}
		unix.Close(fds[0])
		return unix.Close(fds[1])
	}
	kinds := map[string][2]int{
		"mptcp":    {unix.SOCK_STREAM, unix.IPPROTO_MPTCP},
		"sctp":     {unix.SOCK_STREAM, unix.IPPROTO_SCTP},
		"raw-icmp": {unix.SOCK_DGRAM, unix.IPPROTO_ICMP},
	}
	kind, ok := kinds[proto]
	if !ok {
		return fmt.Errorf("unknown protocol %q", proto)
	}
	typ, protocol := kind[0], kind[1]
	fd, err := unix.Socket(unix.AF_INET, typ|unix.SOCK_CLOEXEC, protocol)
	if err != nil {
		return os.NewSyscallError("socket", err)
	}
	defer unix.Close(fd)
	ap, err := net.ResolveTCPAddr("tcp4", addr)
	if err != nil {
		return err
	}
	sa := &unix.SockaddrInet4{Port: ap.Port}
	copy(sa.Addr[:], ap.IP.To4())
	return os.NewSyscallError("connect", unix.Connect(fd, sa))
}

// TestSocketFilterAssembles checks the filters' shape: every jump lands
// on an instruction and each ends in its three returns.
func TestSocketFilterAssembles(t *testing.T) {
	for _, n := range []Net{NetNone, NetPorts} {
		prog, err := socketFilter(n)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		for i, ins := range prog {
			if ins.Code&0x07 == unix.BPF_JMP && (i+1+int(ins.Jt) >= len(prog) || i+1+int(ins.Jf) >= len(prog)) {
				t.Errorf("%s: instruction %d jumps past the end", n, i)
			}
		}
		last := prog[len(prog)-3:]
		if last[0].K != unix.SECCOMP_RET_ERRNO|uint32(unix.EACCES) || last[1].K != unix.SECCOMP_RET_ALLOW || last[2].K != unix.SECCOMP_RET_KILL_PROCESS {
			t.Errorf("%s: returns %+v", n, last)
		}
	}
	b := &bpf{labels: map[string]int{}}
	b.jump(unix.BPF_JEQ, 1, "nowhere", "")
	if _, err := b.assemble(); err == nil {
		t.Error("a jump to a missing label assembled")
	}
}

func TestWithSeccomp(t *testing.T) {
	s := withSeccomp(supportFor(7), "this kernel has no seccomp")
	if !s.Files || s.Network || !strings.Contains(s.Why, "seccomp") {
		t.Errorf("withSeccomp = %+v", s)
	}
	if s := withSeccomp(supportFor(7), ""); !s.Network {
		t.Errorf("withSeccomp with seccomp = %+v", s)
	}
}

// TestSocketFilterProtocols runs a child under network none, a port
// list and all, and tries every protocol Landlock does not see: under
// none each network family is refused with EACCES before it sends a
// byte; under a port list only TCP (checked by Landlock) and UDP pass;
// a socketpair (local) always works.
func TestSocketFilterProtocols(t *testing.T) {
	landlockOrSkip(t)
	tcp, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	go func() {
		for {
			c, err := tcp.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	port := uint16(tcp.Addr().(*net.TCPAddr).Port)
	// What the kernel offers unconfined: MPTCP and SCTP may be absent.
	available := map[string]bool{}
	for _, proto := range []string{"mptcp", "sctp", "raw-icmp"} {
		err := protoDial(proto, tcp.Addr().String())
		available[proto] = !errors.Is(err, unix.EPROTONOSUPPORT) && !errors.Is(err, unix.ENOPROTOOPT) &&
			!errors.Is(err, unix.EAFNOSUPPORT) && !errors.Is(err, unix.EACCES) && !errors.Is(err, unix.EPERM)
	}
	if !available["mptcp"] {
		t.Logf("MPTCP is not available here; its allowed case is not checked")
	}
	ws := t.TempDir()
	exe, _ := os.Executable()
	policies := map[string]Policy{
		"none":  {Files: FilesReadOnly, Network: NetNone},
		"ports": {Files: FilesReadOnly, Network: NetPorts, Connect: []uint16{port}},
		"all":   {Files: FilesReadOnly},
	}
	for _, c := range []struct {
		proto   string
		allowed map[string]bool // by policy name
	}{
		{"tcp", map[string]bool{"ports": true, "all": true}},
		{"udp", map[string]bool{"ports": true, "all": true}},
		{"mptcp", map[string]bool{"all": true}},
		{"sctp", map[string]bool{"all": true}},
		{"raw-icmp", map[string]bool{"all": true}},
		{"unix", map[string]bool{"none": true, "ports": true, "all": true}},
	} {
		addr := tcp.Addr().String()
		if c.proto == "udp" {
			addr = udp.LocalAddr().String()
		}
		for name, p := range policies {
			out, err := confinedRun(t, p, t.TempDir(), ws, []string{dialEnv + "=" + addr, protoEnv + "=" + c.proto}, exe)
			want := c.allowed[name]
			switch {
			case want && (c.proto == "mptcp" || c.proto == "sctp" || c.proto == "raw-icmp") && !available[c.proto]:
				// Not offered by this kernel: nothing to compare.
			case want && err != nil:
				t.Errorf("%s under %s: refused: %v %q", c.proto, name, err, out)
			case !want && (err == nil || !strings.Contains(out, "permission denied")):
				t.Errorf("%s under %s: err %v, output %q: want permission denied", c.proto, name, err, out)
			}
		}
	}
	// The datagrams sent under ports and all arrived (loopback delivers
	// before the send returns, and each child has exited); none was sent
	// under none. The deadline only ends the reading.
	got := 0
	buf := make([]byte, 16)
	for {
		_ = udp.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		if _, _, err := udp.ReadFrom(buf); err != nil {
			break
		}
		got++
	}
	if got != 2 {
		t.Errorf("%d datagrams arrived, want 2 (ports and all)", got)
	}
}
