package secrets_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/acpgate/acpgate/internal/inputs/secrets"
)

// streamAll writes chunks to a new stream of r and returns everything it
// returned, Flush included.
func streamAll(r *secrets.Redactor, chunks []string) string {
	s := r.Stream()
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString(s.Write(c))
	}
	b.WriteString(s.Flush())
	return b.String()
}

// bytesOf splits s into 1-byte chunks.
func bytesOf(s string) []string {
	out := make([]string, len(s))
	for i := range len(s) {
		out[i] = s[i : i+1]
	}
	return out
}

func TestStreamSplitEverywhere(t *testing.T) {
	tests := []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		{"whole value", []string{"s3cr3t-Value-9f8e7d"}, "key=s3cr3t-Value-9f8e7d done", "key=[REDACTED] done"},
		{"at both ends", []string{"hunter22"}, "hunter22 and hunter22", "[REDACTED] and [REDACTED]"},
		{"near misses", []string{"hunter22"}, "hunter2 hunter2 hunter22!", "hunter2 hunter2 [REDACTED]!"},
		{"prefix at the end", []string{"hunter22"}, "it is hunter2", "it is hunter2"},
		{"longest first", []string{"abcd", "abcdefgh"}, "abcdefgh abcd", "[REDACTED] [REDACTED]"},
		{"a longer value may follow", []string{"abcd1234", "abcd12345678"}, "abcd1234 5678 abcd12345678.", "[REDACTED] 5678 [REDACTED]."},
		{"nested inside", []string{"cdef", "abcdefgh"}, "xabcdefghx cdef", "x[REDACTED]x [REDACTED]"},
		{"overlapping values", []string{"xabcd", "cdefg"}, "..xabcdefg..", "..[REDACTED].."},
		{"chain of overlaps", []string{"abcde", "defgh", "ghijk"}, "-abcdefghijk-", "-[REDACTED]-"},
		{"self overlap", []string{"abab"}, "ababab", "[REDACTED]"},
		{"adjacent values", []string{"1234", "5678"}, "12345678", "[REDACTED][REDACTED]"},
		{"non-ASCII", []string{"pässwörd€"}, "€ pässwö€ pw=pässwörd€;", "€ pässwö€ pw=[REDACTED];"},
		{"JSON-escaped in text", []string{`a"b\c`}, `body: {"k":"a\"b\\c"}`, `body: {"k":"[REDACTED]"}`},
		{"no secret in the text", []string{"hunter22"}, "nothing to see here", "nothing to see here"},
		{"nothing registered", nil, "nothing to see here", "nothing to see here"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := secrets.NewRedactor()
			r.Add(tt.secrets...)
			if got := r.Redact(tt.in); got != tt.want {
				t.Fatalf("the table is wrong: Redact = %q, want %q", got, tt.want)
			}
			if got := streamAll(r, []string{tt.in}); got != tt.want {
				t.Errorf("one chunk: %q, want %q", got, tt.want)
			}
			if got := streamAll(r, bytesOf(tt.in)); got != tt.want {
				t.Errorf("1-byte chunks: %q, want %q", got, tt.want)
			}
			for i := 0; i <= len(tt.in); i++ {
				for j := i; j <= len(tt.in); j++ {
					chunks := []string{tt.in[:i], tt.in[i:j], tt.in[j:]}
					if got := streamAll(r, chunks); got != tt.want {
						t.Fatalf("split at %d and %d %q: %q, want %q", i, j, chunks, got, tt.want)
					}
				}
			}
		})
	}
}

// TestStreamHoldsOnlyPrefixes checks that after each Write exactly the
// longest end of the input that could start a value is held back.
func TestStreamHoldsOnlyPrefixes(t *testing.T) {
	values := []string{"hunter22", "s3cr3t-Value"}
	r := newRedactor(t, values...)
	// held is the longest proper suffix of seen that is a proper prefix of
	// a value (the values have no escaped forms).
	held := func(seen string) string {
		for i := range len(seen) {
			for _, v := range values {
				if rest := seen[i:]; len(rest) < len(v) && strings.HasPrefix(v, rest) {
					return rest
				}
			}
		}
		return ""
	}
	s := r.Stream()
	in := "the hunt is on; hunter2, s3cr3t and s3cr3t-Valu but no more. hunte"
	var seen, out string
	for _, c := range bytesOf(in) {
		seen += c
		out += s.Write(c)
		if want := strings.TrimSuffix(seen, held(seen)); out != want {
			t.Fatalf("after %q: returned %q, want %q", seen, out, want)
		}
	}
	if out += s.Flush(); out != in {
		t.Errorf("after Flush: %q, want %q", out, in)
	}
	if got := s.Write("plain text"); got != "plain text" {
		t.Errorf("a chunk that ends in no prefix is returned whole: %q", got)
	}
}

// TestStreamMatchesRedact streams random text made of the values' letters
// in random chunks: the result is always Redact's, and never more than the
// longest value less one byte is held back.
func TestStreamMatchesRedact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	values := []string{"abab", "abba", "bbbb", "aabbaab", "baaab"}
	r := newRedactor(t, values...)
	const maxLen = 7
	for n := range 2000 {
		var in strings.Builder
		for range rng.IntN(40) {
			in.WriteByte("abc"[rng.IntN(3)])
		}
		text := in.String()
		var chunks []string
		for rest := text; rest != ""; {
			k := min(len(rest), 1+rng.IntN(6))
			chunks = append(chunks, rest[:k])
			rest = rest[k:]
		}
		s := r.Stream()
		var out strings.Builder
		for _, c := range chunks {
			out.WriteString(s.Write(c))
			if s.Held() > maxLen-1 {
				t.Fatalf("case %d %q: %d bytes held back", n, chunks, s.Held())
			}
		}
		out.WriteString(s.Flush())
		if want := r.Redact(text); out.String() != want {
			t.Fatalf("case %d %q: %q, want %q", n, chunks, out.String(), want)
		}
	}
}

func TestStreamValueAddedWhileStreaming(t *testing.T) {
	r := secrets.NewRedactor()
	s := r.Stream()
	out := s.Write("abc hunt")
	r.Add("hunter22")
	out += s.Write("er22 x")
	out += s.Write(" hunter22") + s.Flush()
	if want := "abc hunter22 x [REDACTED]"; out != want {
		t.Errorf("%q, want %q (only what follows Add is caught)", out, want)
	}
	s = r.Stream()
	out = s.Write("key: hun")
	r.Add("hunter2233")
	out += s.Write("ter2233.") + s.Flush()
	if want := "key: [REDACTED]."; out != want {
		t.Errorf("%q, want %q (a held-back prefix is checked against the new value)", out, want)
	}
}

func TestStreamUnicodeChunksStayValid(t *testing.T) {
	r := newRedactor(t, "pässwörd€", "ключ-секрет")
	in := "€€ pässwö€ pässwörd€ ü ключ-секр ключ-секрет 😀"
	var chunks []string
	for _, c := range in {
		chunks = append(chunks, string(c))
	}
	s := r.Stream()
	var out strings.Builder
	for _, c := range chunks {
		got := s.Write(c)
		if !utf8.ValidString(got) {
			t.Fatalf("Write(%q) returned invalid UTF-8 %q", c, got)
		}
		out.WriteString(got)
	}
	out.WriteString(s.Flush())
	if want := "€€ pässwö€ [REDACTED] ü ключ-секр [REDACTED] 😀"; out.String() != want {
		t.Errorf("%q, want %q", out.String(), want)
	}
}

func TestStreamConcurrentAdd(t *testing.T) {
	r := secrets.NewRedactor()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 200 {
			r.Add(fmt.Sprintf("value-%04d", i))
		}
	}()
	s := r.Stream()
	var out strings.Builder
	for range 200 {
		out.WriteString(s.Write("text value-01"))
	}
	wg.Wait()
	out.WriteString(s.Write(" value-0199 x"))
	out.WriteString(s.Flush())
	if strings.Contains(out.String(), "value-0199") {
		t.Errorf("a value registered before it was written escaped: %q", out.String()[out.Len()-40:])
	}
}

func BenchmarkStream(b *testing.B) {
	r := secrets.NewRedactor()
	for i := range 50 {
		r.Add(fmt.Sprintf("sk-proj-%04d-0123456789abcdef0123456789abcdef", i))
	}
	chunk := "The answer is to set the key in the environment, sk-pro"
	b.SetBytes(int64(len(chunk)))
	s := r.Stream()
	for b.Loop() {
		s.Write(chunk)
	}
}
