// Package loopback gives network tests their peers on 127.0.0.1: a TCP
// port that accepts every connection, and a UDP port whose datagrams can
// be counted. The sandbox tests use them to see what a confined process
// could reach.
package loopback

import (
	"bytes"
	"net"
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

// Received returns how many datagrams have arrived (each read once).
// Call it once every sender has returned: loopback queues a datagram
// before its send returns, so Received sends itself a last one and
// reads up to it; the deadline only bounds a port that stopped working.
func (u *UDP) Received(t testing.TB) int {
	t.Helper()
	end := []byte("loopback: end of the count")
	c, err := net.Dial("udp4", u.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(end); err != nil {
		t.Fatal(err)
	}
	_ = u.pc.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, buf := 0, make([]byte, 64<<10)
	for {
		size, _, err := u.pc.ReadFrom(buf)
		if err != nil {
			t.Fatalf("reading the UDP port: %v", err)
		}
		if bytes.Equal(buf[:size], end) {
			return n
		}
		n++
	}
}
