package loopback

import (
	"fmt"
	"net"
	"time"
)

// Dial reaches addr (host:port) over proto: "tcp" (or ""): connects;
// "udp": sends the datagram "ping"; "mptcp", "sctp": connects a socket
// of that protocol, made with the system calls themselves (net.Dialer's
// MPTCP falls back to plain TCP on any error, which would hide a refused
// socket); "icmp": connects an unprivileged ICMP socket; "unix": makes a
// Unix socketpair (local: addr is not used). The last four are Linux's.
func Dial(proto, addr string) error {
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
	case "mptcp", "sctp", "icmp", "unix":
		return rawDial(proto, addr)
	}
	return fmt.Errorf("unknown protocol %q", proto)
}
