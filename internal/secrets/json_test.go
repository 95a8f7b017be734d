package secrets_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/internal/secrets"
)

// TestRedactJSONValuesOnly: a registered value is redacted inside string
// values only — in its escaped forms too —, never in a member name, a
// number or a literal, and never across a string's quotes; a text with
// nothing registered in it comes back as the same slice.
func TestRedactJSONValuesOnly(t *testing.T) {
	r := secrets.NewRedactor()
	r.Add("json", "session", "sessionId", "echo", "true", `x","y`, "sk-live-1234")
	for _, tc := range []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"session/update","params":{"sessionId":"sess_1","update":{"title":"mcp__t__echo","ok":true}}}`,
			`{"jsonrpc":"2.0","id":1,"method":"[REDACTED]/update","params":{"sessionId":"sess_1","update":{"title":"mcp__t__[REDACTED]","ok":true}}}`},
		{`{"a":"x","y":"z"}`, `{"a":"x","y":"z"}`},
		{`{"k":["sk-live-1234","say \"sk-live-1234\"", 7]}`, `{"k":["[REDACTED]","say \"[REDACTED]\"", 7]}`},
		{`{"sessionId\"x":"a"}`, `{"sessionId\"x":"a"}`},
		{`{"a":"sk-live-\u0031234"}`, `{"a":"sk-live-\u0031234"}`},
		{"{\"a\":\"no\"}\n{\"b\":\"json\"}\n", "{\"a\":\"no\"}\n{\"b\":\"[REDACTED]\"}\n"},
	} {
		if got := string(r.RedactJSON([]byte(tc.in))); got != tc.want {
			t.Errorf("RedactJSON(%s)\n got %s\nwant %s", tc.in, got, tc.want)
		}
		// Written in pieces cut anywhere, the same.
		for cut := range len(tc.in) + 1 {
			var out bytes.Buffer
			w := r.JSONWriter(&out)
			for _, piece := range []string{tc.in[:cut], tc.in[cut:]} {
				if _, err := w.Write([]byte(piece)); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Fatalf("cut at %d:\n got %s\nwant %s", cut, out.String(), tc.want)
			}
		}
	}
	plain := []byte(`{"nothing":"here"}`)
	if got := r.RedactJSON(plain); &got[0] != &plain[0] {
		t.Error("a text with nothing to redact was copied")
	}
}

// TestPlausible: what Register registers: values that could be secrets,
// not short plain words.
func TestPlausible(t *testing.T) {
	for v, want := range map[string]bool{
		"json": false, "result": false, "session": false, "sessionId": false, "echo": false, "true": false, "abc": false, "": false,
		"hunter22": true, "sk-abc": true, "Bearer abcdef": true, "abcdefghijklmnop": true, "pässwörd": true, "a.b.c": true,
	} {
		if got := secrets.Plausible(v); got != want {
			t.Errorf("Plausible(%q) = %v, want %v", v, got, want)
		}
	}
	r := secrets.NewRedactor()
	if ignored := r.Register("json", "sk-live-1234", "ab"); ignored != 2 {
		t.Errorf("Register ignored %d, want 2", ignored)
	}
	if got := r.Redact("json sk-live-1234"); got != "json [REDACTED]" {
		t.Errorf("after Register: %q", got)
	}
}

// BenchmarkRedactJSON is BenchmarkRedactBytes's frame through RedactJSON
// (what every frame to the editor goes through), and a 1 MiB result
// frame with a secret in it.
func BenchmarkRedactJSON(b *testing.B) {
	r := secrets.NewRedactor()
	for i := range 5 {
		r.Add(fmt.Sprintf("ghp_%032d", i), fmt.Sprintf("sk-proj-%d-Xy/Zw+Ab==", i))
	}
	big := strings.Repeat("lorem ipsum dolor sit amet, ", 1<<15) + "sk-proj-3-Xy/Zw+Ab=="
	for _, bc := range []struct{ name, text string }{{"line", strings.Repeat("lorem ipsum ", 20) + "sk-proj-3-Xy/Zw+Ab=="}, {"1MiB", big}} {
		frame, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "params": map[string]string{"sessionId": "sess_1", "text": bc.text}})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				_ = r.RedactJSON(frame)
			}
		})
	}
}
