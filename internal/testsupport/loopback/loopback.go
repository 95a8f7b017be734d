// Package loopback gives network tests their peers on 127.0.0.1: a TCP
// port that accepts every connection, and a UDP port whose datagrams can
// be counted. The sandbox tests use them to see what a confined process
// could reach.
package loopback

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"
)

// Acceptor listens on a TCP port of 127.0.0.1, accepts and closes every
// connection until the test ends, and returns its address.
func Acceptor(t testing.TB) *net.TCPAddr {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr)
}

// UDP is a UDP port of 127.0.0.1 that counts the datagrams it got.
type UDP struct {
	pc net.PacketConn
}

// ListenUDP opens a UDP port of 127.0.0.1, closed when the test ends.
func ListenUDP(t testing.TB) *UDP {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	return &UDP{pc: pc}
}

// Addr is the port's address (host:port).
func (u *UDP) Addr() string { return u.pc.LocalAddr().String() }

// Received reads the datagrams that have arrived and returns how many.
// Call it once every sender has returned: loopback delivers a datagram
// before its send returns, so what was sent is queued already; the
// short read deadline only ends the reading.
func (u *UDP) Received(t testing.TB) int {
	t.Helper()
	n, buf := 0, make([]byte, 64<<10)
	for {
		_ = u.pc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		if _, _, err := u.pc.ReadFrom(buf); err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("reading the UDP port: %v", err)
			}
			return n
		}
		n++
	}
}
