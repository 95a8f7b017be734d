package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestDecodeCallResultMatchesMCPGo checks that DecodeCallResult decodes
// every kind of result exactly as mcp.ParseCallToolResult does, in place
// and not, and leaves to mcp-go what it does not take.
func TestDecodeCallResultMatchesMCPGo(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		raw  string
		take bool
	}{
		"plain text":   {`{"content":[{"type":"text","text":"hello"}]}`, true},
		"escapes":      {`{"content":[{"type":"text","text":"a\"b\\c\/d\n\r\t\b\fé\u00e9\u20ac x"}]}`, true},
		"surrogates":   {`{"content":[{"type":"text","text":"\ud83d\ude00 \ud800 lone \udc00 low \ud800\u0041 \uD83D\uDE00"}]}`, true},
		"empty text":   {`{"content":[{"type":"text","text":""}]}`, true},
		"annotated":    {`{"content":[{"type":"text","text":"t","annotations":{"audience":["user"],"priority":0.5},"_meta":{"k":"v"}}],"_meta":{"progressToken":"p","x":1}}`, true},
		"error":        {`{"content":[{"type":"text","text":"bad"}],"isError":true}`, true},
		"image audio":  {`{"content":[{"type":"image","data":"aGk=","mimeType":"image/png"},{"type":"audio","data":"aGk=","mimeType":"audio/wav"}]}`, true},
		"resources":    {`{"content":[{"type":"resource","resource":{"uri":"file:///a","mimeType":"text/plain","text":"x"}},{"type":"resource","resource":{"uri":"file:///b","blob":"aGk="}},{"type":"resource_link","uri":"file:///c","name":"c","description":"d"}]}`, true},
		"structured":   {`{"content":[{"type":"text","text":"{\"a\":1}"}],"structuredContent":{"a":1,"b":[true,null,"s"]}}`, true},
		"no blocks":    {`{"content":[]}`, true},
		"invalid utf8": {"{\"content\":[{\"type\":\"text\",\"text\":\"a\xffb\"}]}", true},
		"text null":    {`{"content":[{"type":"text","text":null}]}`, true},
		"mixed":        {`{"content":[{"type":"text","text":"one\n"},{"type":"image","data":"aGk=","mimeType":"image/png"},{"type":"text","text":"two\u0021"}]}`, true},
		"no content":   {`{"isError":true}`, false},
		"null content": {`{"content":null}`, false},
		"input wanted": {`{"resultType":"input_required","inputRequests":{},"requestState":"s"}`, false},
		"unknown type": {`{"content":[{"type":"video","data":"x"}]}`, false},
		"not json":     {`{"content":[`, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			raw := json.RawMessage(tc.raw)
			want, wantErr := mcp.ParseCallToolResult(&raw)
			for _, inPlace := range []bool{false, true} {
				buf := bytes.Clone(raw)
				got, ok := DecodeCallResult(buf, inPlace)
				if ok != tc.take {
					t.Fatalf("inPlace=%v: taken %v, want %v", inPlace, ok, tc.take)
				}
				if !ok {
					if !bytes.Equal(buf, raw) {
						t.Fatalf("inPlace=%v: a result left to mcp-go was changed: %q", inPlace, buf)
					}
					continue
				}
				if wantErr != nil {
					t.Fatalf("mcp-go fails (%v) where we decode %+v", wantErr, got)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("inPlace=%v:\n got %#v\nwant %#v", inPlace, got, want)
				}
			}
		})
	}
}

// TestDecodeCallResultInPlace checks that over stdio a large text is the
// response's own bytes, and that a small text beside a large block is
// copied (so it does not keep the response alive).
func TestDecodeCallResultInPlace(t *testing.T) {
	t.Parallel()
	within := func(s string, buf []byte) bool {
		p, b := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(&buf[0]))
		return p >= b && p < b+uintptr(len(buf))
	}
	big := strings.Repeat("x\\n", 1000)
	buf := []byte(`{"content":[{"type":"text","text":"` + big + `"}]}`)
	res, ok := DecodeCallResult(buf, true)
	if !ok {
		t.Fatal("not taken")
	}
	text := res.Content[0].(mcp.TextContent).Text
	if text != strings.Repeat("x\n", 1000) || !within(text, buf) {
		t.Fatalf("large text not decoded in place (within=%v)", within(text, buf))
	}
	buf = []byte(`{"content":[{"type":"text","text":"small"},{"type":"image","mimeType":"image/png","data":"` + strings.Repeat("A", 4000) + `"}]}`)
	res, ok = DecodeCallResult(buf, true)
	if !ok {
		t.Fatal("not taken")
	}
	if text := res.Content[0].(mcp.TextContent).Text; text != "small" || within(text, buf) {
		t.Fatalf("small text %q kept in the response's buffer", text)
	}
}
