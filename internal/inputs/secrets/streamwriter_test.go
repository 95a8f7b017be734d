package secrets_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/internal/inputs/secrets"
)

// writeInPieces writes msg to a new StreamWriter of r in pieces cut at
// cuts, flushes, and returns what reached the writer.
func writeInPieces(t *testing.T, r *secrets.Redactor, msg []byte, cuts ...int) string {
	t.Helper()
	var out bytes.Buffer
	w := r.StreamWriter(&out)
	last := 0
	for _, c := range append(cuts, len(msg)) {
		if n, err := w.Write(msg[last:c]); err != nil || n != c-last {
			t.Fatalf("Write: %d, %v", n, err)
		}
		last = c
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestStreamWriterSplitEverywhere: a frame written in two pieces cut
// anywhere, or a byte at a time, comes out as RedactBytes redacts it
// whole, values in their JSON-escaped forms included.
func TestStreamWriterSplitEverywhere(t *testing.T) {
	r := secrets.NewRedactor()
	r.Add("hunter22", `a"b\c`, "pässwörd€", "abcd", "abcdefgh")
	msg := []byte(`{"text":"x hunter22 y a\"b\\c z p\u00e4ssw\u00f6rd\u20ac abcdefgh abcd hunter2","n":1}` + "\n")
	want := string(r.RedactBytes(msg))
	if want == string(msg) || strings.Contains(want, "hunter22") {
		t.Fatalf("the test frame is not redacted: %s", want)
	}
	for cut := range len(msg) + 1 {
		if got := writeInPieces(t, r, msg, cut); got != want {
			t.Fatalf("cut at %d:\n got %s\nwant %s", cut, got, want)
		}
	}
	cuts := make([]int, 0, len(msg))
	for i := 1; i < len(msg); i++ {
		cuts = append(cuts, i)
	}
	if got := writeInPieces(t, r, msg, cuts...); got != want {
		t.Fatalf("a byte at a time:\n got %s\nwant %s", got, want)
	}
}

// TestStreamWriterNothingRegistered: with no value registered, pieces
// pass on as they are.
func TestStreamWriterNothingRegistered(t *testing.T) {
	msg := []byte(`{"text":"hunter22"}`)
	if got := writeInPieces(t, secrets.NewRedactor(), msg, 3, 9); got != string(msg) {
		t.Errorf("got %s", got)
	}
}

// TestStreamWriterReusesItsBuffers: writing a large message in pieces
// allocates nothing once the buffers have the size of a piece (when no
// value is found: each one found costs the note of where it is).
func TestStreamWriterReusesItsBuffers(t *testing.T) {
	r := secrets.NewRedactor()
	r.Add("sk-proj-0123456789abcdef")
	piece := []byte(strings.Repeat("text sk-proj-0123 and more ", 1000) + "sk-proj-0123")
	w := r.StreamWriter(discard{})
	_, _ = w.Write(piece)
	if n := testing.AllocsPerRun(20, func() { _, _ = w.Write(piece) }); n != 0 {
		t.Errorf("%v allocations per Write", n)
	}
}

// TestStreamWriterError: a failing writer's error is returned.
func TestStreamWriterError(t *testing.T) {
	boom := errors.New("boom")
	r := secrets.NewRedactor()
	r.Add("hunter22")
	w := r.StreamWriter(failing{boom})
	if _, err := w.Write([]byte("some text")); !errors.Is(err, boom) {
		t.Errorf("Write: %v", err)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

type failing struct{ err error }

func (f failing) Write([]byte) (int, error) { return 0, f.err }
