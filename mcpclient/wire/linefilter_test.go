package wire

import (
	"io"
	"strings"
	"testing"
)

// discardLog is a StdoutLog without a limit that logs nothing.
type discardLog struct{}

func (discardLog) Allow() bool            { return true }
func (discardLog) Drop(int)               {}
func (discardLog) Wait()                  {}
func (discardLog) StdoutJunk([]byte, int) {}
func (discardLog) Warn(string, ...any)    {}

func TestJSONLinesBoundsMemory(t *testing.T) {
	t.Parallel()
	// 64 MiB of junk with no newline must be skipped with a small buffer.
	huge := io.LimitReader(repeatReader('z'), 64<<20)
	r := io.MultiReader(huge, strings.NewReader("\n{\"ok\":true}\n"))
	j := NewJSONLines(r, 1<<20, discardLog{}, &TooLargeIDs{}, nil)
	got, err := io.ReadAll(j)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "{\"ok\":true}\n" {
		t.Fatalf("got %q", got)
	}
	if cap(j.head) > junkHead {
		t.Fatalf("junk buffer grew to %d bytes", cap(j.head))
	}
}

type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}
