package lines

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestLine(t *testing.T) {
	type got struct {
		line string
		n    int
		eof  bool
	}
	cases := []struct {
		name string
		in   string
		size int
		max  int
		want []got
	}{
		{"plain", "a\nbb\n", 16, 100, []got{{"a", 1, false}, {"bb", 2, false}, {"", 0, true}}},
		{"crlf", "a\r\nb", 16, 100, []got{{"a", 1, false}, {"b", 1, true}}},
		{"crlf split across fragments", "abcdefghijklmno\r\nx\n", 16, 100, []got{{"abcdefghijklmno", 15, false}, {"x", 1, false}, {"", 0, true}}},
		{"longer than the buffer", strings.Repeat("x", 40) + "\nok\n", 16, 100, []got{{strings.Repeat("x", 40), 40, false}, {"ok", 2, false}, {"", 0, true}}},
		{"cut at max", strings.Repeat("y", 40) + "\nok\n", 16, 10, []got{{strings.Repeat("y", 10), 40, false}, {"ok", 2, false}, {"", 0, true}}},
		{"empty lines", "\n\nz", 16, 100, []got{{"", 0, false}, {"", 0, false}, {"z", 1, true}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(c.in), c.size)
			var buf []byte
			for i, w := range c.want {
				line, n, err := r.Line(buf, c.max)
				if string(line) != w.line || n != w.n || errors.Is(err, io.EOF) != w.eof {
					t.Fatalf("line %d = %q, %d, %v; want %q, %d, eof=%v", i, line, n, err, w.line, w.n, w.eof)
				}
				buf = line
			}
		})
	}
}

func TestNextBoundsFragments(t *testing.T) {
	r := NewReader(strings.NewReader(strings.Repeat("z", 50)+"\n"), 16)
	total, frags := 0, 0
	for {
		frag, ended, err := r.Next()
		if len(frag) > 16 {
			t.Fatalf("fragment of %d bytes from a 16-byte reader", len(frag))
		}
		total += len(frag)
		frags++
		if ended {
			if err != nil || frag[len(frag)-1] != '\n' {
				t.Fatalf("last fragment %q, %v: want the newline and no error", frag, err)
			}
			break
		}
	}
	if total != 51 || frags < 4 {
		t.Fatalf("read %d bytes in %d fragments, want 51 in at least 4", total, frags)
	}
	if _, ended, err := r.Next(); !ended || !errors.Is(err, io.EOF) {
		t.Fatalf("after the last line: ended=%v err=%v, want EOF", ended, err)
	}
}

// Skip hands out what is buffered in one piece, whatever its lines, then
// one read at a time; Line goes on where it stopped.
func TestSkip(t *testing.T) {
	r := NewReader(io.MultiReader(strings.NewReader("a\nbb\ncc"), strings.NewReader("c\nd\n")), 16)
	if line, _, err := r.Line(nil, 100); string(line) != "a" || err != nil {
		t.Fatalf("first line %q, %v", line, err)
	}
	if r.Buffered() != len("bb\ncc") {
		t.Fatalf("buffered %d", r.Buffered())
	}
	var got []string
	for {
		chunk, err := r.Skip()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
		got = append(got, string(chunk))
	}
	if strings.Join(got, "|") != "bb\ncc|c\nd\n" {
		t.Fatalf("chunks %q", got)
	}
}
