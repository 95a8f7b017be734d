package tty_test

import (
	"bufio"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/acpgate/acpgate/cmd/internal/tty"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// TestWithoutEcho: on a pseudo-terminal, what is typed while WithoutEcho
// reads is not echoed, and the echo is back on afterwards.
func TestWithoutEcho(t *testing.T) {
	master, slave, err := testbin.OpenPTY()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	defer slave.Close()
	if !tty.IsTerminal(slave) {
		t.Fatal("a pseudo-terminal is not reported as a terminal")
	}
	echo := func() bool {
		tios, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
		if err != nil {
			t.Fatal(err)
		}
		return tios.Lflag&unix.ECHO != 0
	}
	var line string
	err = tty.WithoutEcho(slave, func() error {
		if echo() {
			t.Error("echo on while reading")
		}
		if _, err := master.Write([]byte("hidden-typing\n")); err != nil {
			return err
		}
		line, err = bufio.NewReader(slave).ReadString('\n')
		return err
	})
	if err != nil || line != "hidden-typing\n" {
		t.Fatalf("read %q, %v", line, err)
	}
	if !echo() {
		t.Error("echo still off")
	}
	// What the terminal showed, up to a marker written after the read.
	if _, err := slave.Write([]byte("END\n")); err != nil {
		t.Fatal(err)
	}
	shown, err := bufio.NewReader(master).ReadString('D')
	if err != nil || strings.Contains(shown, "hidden") {
		t.Errorf("the terminal showed %q (%v)", shown, err)
	}
}
