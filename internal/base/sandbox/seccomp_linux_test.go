//go:build linux

package sandbox

import (
	"errors"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/acpgate/acpgate/internal/testsupport/loopback"
)

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
	if s := withSeccomp(supportFor(7), ""); !s.Network || s.Mechanism != "landlock ABI 7 with a seccomp socket filter" {
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
	tcp, udp := loopback.Acceptor(t), loopback.ListenUDP(t)
	port := uint16(tcp.Port)
	// What the kernel offers unconfined: MPTCP and SCTP may be absent.
	available := map[string]bool{}
	for _, proto := range []string{"mptcp", "sctp", "icmp"} {
		err := loopback.Dial(proto, tcp.String())
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
		{"icmp", map[string]bool{"all": true}},
		{"unix", map[string]bool{"none": true, "ports": true, "all": true}},
	} {
		addr := tcp.String()
		if c.proto == "udp" {
			addr = udp.Addr()
		}
		for name, p := range policies {
			out, err := confinedRun(t, p, t.TempDir(), ws, []string{dialEnv + "=" + addr, protoEnv + "=" + c.proto}, exe)
			want := c.allowed[name]
			switch {
			case want && (c.proto == "mptcp" || c.proto == "sctp" || c.proto == "icmp") && !available[c.proto]:
				// Not offered by this kernel: nothing to compare.
			case want && err != nil:
				t.Errorf("%s under %s: refused: %v %q", c.proto, name, err, out)
			case !want && (err == nil || !strings.Contains(out, "permission denied")):
				t.Errorf("%s under %s: err %v, output %q: want permission denied", c.proto, name, err, out)
			}
		}
	}
	// The datagrams sent under ports and all arrived; none was sent
	// under none.
	if got := udp.Received(t); got != 2 {
		t.Errorf("%d datagrams arrived, want 2 (ports and all)", got)
	}
}
