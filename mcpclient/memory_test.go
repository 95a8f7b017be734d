package mcpclient_test

import (
	"context"
	"testing"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestCallToolLargeResultCopiedOnce checks that a large text result over
// stdio costs about its size twice in allocations (the line gathered in
// pieces, then joined; the text is the line's own bytes), where mcp-go's
// transport and decoder took eight times.
func TestCallToolLargeResultCopiedOnce(t *testing.T) {
	const size = 4 << 20
	opts, _ := fastOpts(t)
	spec := stdio("s")
	spec.CallsPerMinute = mcpclient.Unlimited
	m := start(t, opts, spec)
	args := map[string]any{"bytes": size}
	call(t, m, "s", "big", args) // warm up
	var res *mcp.CallToolResult
	var err error
	alloc := testbin.Allocated(func() { res, err = m.CallTool(context.Background(), "s", "big", args) })
	if err != nil {
		t.Fatal(err)
	}
	if got := len(res.Content[0].(mcp.TextContent).Text); got != size {
		t.Fatalf("text of %d bytes, want %d", got, size)
	}
	if alloc > size*5/2 {
		t.Fatalf("a %d-byte result allocated %d bytes (%.1f×), want at most 2.5×", size, alloc, float64(alloc)/size)
	}
}
