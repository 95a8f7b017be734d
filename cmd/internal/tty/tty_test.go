package tty_test

import (
	"os"
	"testing"

	"github.com/acpgate/acpgate/cmd/internal/tty"
)

func TestDevNullIsNotATerminal(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if tty.IsTerminal(f) {
		t.Errorf("%s is reported as a terminal", os.DevNull)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if tty.IsTerminal(r) {
		t.Error("a pipe is reported as a terminal")
	}
}
