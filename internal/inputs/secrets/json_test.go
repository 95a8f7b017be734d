package secrets_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/internal/inputs/secrets"
)

// TestRedactJSONStringsOnly: a registered value is redacted inside strings
// only — values and member names, in its escaped forms and in any
// spelling of JSON escapes, in JSON text held in a string —, never in a
// number or a literal, and never across a string's quotes; the result is
// valid JSON of the same shape (two names made equal stay two members); a
// text with nothing registered in it comes back as the same slice.
func TestRedactJSONStringsOnly(t *testing.T) {
	r := secrets.NewRedactor()
	r.Add("echo", `x","y`, "sk-live-1234", "tok/en<1>", `q"uote`, "pass😀wörd")
	r.Register("json", "session", "sessionId", "true") // plain words: never registered
	for _, tc := range []struct {
		in, want string
		nested   bool // JSON text in a string, which JSONWriter does not look into
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"session/update","params":{"sessionId":"sess_1","update":{"title":"mcp__t__echo","ok":true}}}`,
			`{"jsonrpc":"2.0","id":1,"method":"session/update","params":{"sessionId":"sess_1","update":{"title":"mcp__t__[REDACTED]","ok":true}}}`, false},
		{`{"a":"x","y":"z"}`, `{"a":"x","y":"z"}`, false},
		{`{"k":["sk-live-1234","say \"sk-live-1234\"", 7]}`, `{"k":["[REDACTED]","say \"[REDACTED]\"", 7]}`, false},
		// Member names: a secret, part of one, escaped, one made equal to another.
		{`{"sk-live-1234":1,"x-sk-live-1234":{"sk-live-\u0031234":2},"echo":3}`,
			`{"[REDACTED]":1,"x-[REDACTED]":{"[REDACTED]":2},"[REDACTED]":3}`, false},
		// Any spelling of escapes: each character its own, upper-case hex, \/.
		{`{"a":"sk-live-\u0031234","b":"\u0073\u006B-live-1234","c":"tok\/en\u003C1\u003e","d":"q\u0022uote"}`,
			`{"a":"[REDACTED]","b":"[REDACTED]","c":"[REDACTED]","d":"[REDACTED]"}`, false},
		// Beyond the BMP (a surrogate pair, cut anywhere by JSONWriter);
		// a lone surrogate is left as it is.
		{`{"a":"pass\uD83D\uDE00w\u00f6rd","b":"\ud83d-x"}`, `{"a":"[REDACTED]","b":"\ud83d-x"}`, false},
		// JSON text in a string (a tool call's arguments), escaped again.
		{`{"arguments":"{\"q\":\"sk-live-\\u0031234\",\"sk-\\u006cive-1234\":1}"}`,
			`{"arguments":"{\"q\":\"[REDACTED]\",\"[REDACTED]\":1}"}`, true},
		{`{"arguments":"{\"q\":\"q\\\"uote\"}"}`, `{"arguments":"{\"q\":\"[REDACTED]\"}"}`, false},
		// Escapes that hide nothing are left as they are.
		{`{"a":"\u0041b\/c \u003c","b":"echo"}`, `{"a":"\u0041b\/c \u003c","b":"[REDACTED]"}`, false},
		{"{\"a\":\"no\"}\n{\"b\":\"echo\"}\n", "{\"a\":\"no\"}\n{\"b\":\"[REDACTED]\"}\n", false},
	} {
		got := r.RedactJSON([]byte(tc.in))
		if string(got) != tc.want {
			t.Errorf("RedactJSON(%s)\n got %s\nwant %s", tc.in, got, tc.want)
		}
		if json.Valid([]byte(tc.in)) && !json.Valid(got) {
			t.Errorf("RedactJSON(%s) = %s: not valid JSON", tc.in, got)
		}
		// Written in pieces cut anywhere: the same text, or (escapes
		// spelled canonically) the same JSON.
		for cut := range len(tc.in) + 1 {
			if tc.nested {
				break
			}
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
			if out.String() != tc.want && !sameJSON(out.String(), tc.want) {
				t.Fatalf("cut at %d:\n got %s\nwant %s", cut, out.String(), tc.want)
			}
		}
	}
	plain := []byte(`{"nothing":"here","json":"sessionId \n true"}`)
	if got := r.RedactJSON(plain); &got[0] != &plain[0] {
		t.Error("a text with nothing to redact was copied")
	}
}

// sameJSON reports whether a and b are the same JSON values, one a line.
func sameJSON(a, b string) bool {
	da, db := json.NewDecoder(strings.NewReader(a)), json.NewDecoder(strings.NewReader(b))
	for {
		var va, vb any
		ea, eb := da.Decode(&va), db.Decode(&vb)
		if ea != nil || eb != nil {
			return ea == eb || (ea != nil && eb != nil)
		}
		if fmt.Sprint(va) != fmt.Sprint(vb) {
			return false
		}
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
// frame with a secret in it; and frames with no secret, without and with
// escapes (\n, \").
func BenchmarkRedactJSON(b *testing.B) {
	r := secrets.NewRedactor()
	for i := range 5 {
		r.Add(fmt.Sprintf("ghp_%032d", i), fmt.Sprintf("sk-proj-%d-Xy/Zw+Ab==", i))
	}
	big := strings.Repeat("lorem ipsum dolor sit amet, ", 1<<15) + "sk-proj-3-Xy/Zw+Ab=="
	lines := strings.Repeat("lorem ipsum\n\t\"quoted\"\n", 10)
	for _, bc := range []struct{ name, text string }{
		{"line", strings.Repeat("lorem ipsum ", 20) + "sk-proj-3-Xy/Zw+Ab=="}, {"1MiB", big},
		{"clean", strings.Repeat("lorem ipsum ", 20)}, {"escapes", lines}, {"1MiB-escapes", strings.Repeat(lines, 1<<12)},
	} {
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
