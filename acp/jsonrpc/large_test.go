package jsonrpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/acpgate/acpgate/acp/jsonrpc"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// A large answer to a Call costs about its size twice in allocations (the
// line gathered in pieces, then joined; the result a View of the line),
// where appending to the line and copying the result as a
// json.RawMessage, then again in the caller's decoding, took five times
// (issue 34: MCP over ACP answers at 5.6× their size through the binary).
func TestLargeAnswerCopiedOnce(t *testing.T) {
	const size = 4 << 20
	c, p := pair(t, jsonrpc.Options{Handler: func(ctx context.Context, r *jsonrpc.Request) (any, error) { return nil, nil }})
	text := bytes.Repeat([]byte("a"), size)
	ask := func() (jsonrpc.View, uint64) {
		var view struct{ Result jsonrpc.View }
		done := make(chan error, 1)
		go func() { done <- c.Call(context.Background(), "big", nil, &view) }()
		m := p.next(t)
		line := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%v,"result":{"result":"%s"}}`+"\n", m["id"], text)
		alloc := testbin.Allocated(func() {
			if _, err := p.w.Write(line); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
		return view.Result, alloc
	}
	ask() // warm up
	res, alloc := ask()
	var got string
	if err := json.Unmarshal(res, &got); err != nil || got != string(text) {
		t.Fatalf("the result (%d bytes) is not the text sent: %v", len(got), err)
	}
	if alloc > size*5/2 {
		t.Fatalf("a %d-byte answer allocated %d bytes (%.1f×), want at most 2.5×", size, alloc, float64(alloc)/size)
	}
	t.Logf("a %d-byte answer allocated %.2f× its size", size, float64(alloc)/size)
}

// A View decoded from JSON is the part of the input it was decoded from,
// not a copy, and appending to it does not write into the input.
func TestViewRefersToItsInput(t *testing.T) {
	t.Parallel()
	in := []byte(`{"a":{"x":[1,2]},"b":"s"}`)
	var m map[string]jsonrpc.View
	if err := json.Unmarshal(in, &m); err != nil {
		t.Fatal(err)
	}
	a := m["a"]
	if string(a) != `{"x":[1,2]}` || &a[0] != &in[5] {
		t.Fatalf("the view %q is not the input's bytes", a)
	}
	_ = append(a, '!')
	if string(in) != `{"a":{"x":[1,2]},"b":"s"}` {
		t.Fatalf("appending to a view changed the input: %s", in)
	}
}
